package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func ptr(b bool) *bool { return &b }

func TestEffectFromAnnotations(t *testing.T) {
	cases := []struct {
		name string
		a    *sdk.ToolAnnotations
		want apps.Effect
		open bool
	}{
		{"no annotations: MCP defaults", nil, apps.EffectIrreversible, true},
		{"read-only", &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}, apps.EffectRead, false},
		{"read-only, open world", &sdk.ToolAnnotations{ReadOnlyHint: true}, apps.EffectRead, true},
		{"destructive", &sdk.ToolAnnotations{DestructiveHint: ptr(true)}, apps.EffectIrreversible, true},
		{"not read-only, destructive unsaid", &sdk.ToolAnnotations{Title: "x", OpenWorldHint: ptr(false)}, apps.EffectIrreversible, false},
		{"additive", &sdk.ToolAnnotations{DestructiveHint: ptr(false)}, apps.EffectWrite, true},
		{"contradictory: stricter wins", &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: ptr(true)}, apps.EffectIrreversible, true},
		{"read-only, destructive false", &sdk.ToolAnnotations{ReadOnlyHint: true, DestructiveHint: ptr(false)}, apps.EffectRead, true},
	}
	for _, c := range cases {
		e, open := EffectOf(c.a)
		if e != c.want || open != c.open {
			t.Errorf("%s: got %s open=%v, want %s open=%v", c.name, e, open, c.want, c.open)
		}
	}
}

func TestConfigTightensNeverLoosens(t *testing.T) {
	cases := []struct {
		annotated, configured, want apps.Effect
		bad                         bool
	}{
		{apps.EffectRead, "", apps.EffectRead, false},
		{apps.EffectRead, apps.EffectWrite, apps.EffectWrite, false},
		{apps.EffectRead, apps.EffectIrreversible, apps.EffectIrreversible, false},
		{apps.EffectWrite, apps.EffectIrreversible, apps.EffectIrreversible, false},
		{apps.EffectIrreversible, apps.EffectIrreversible, apps.EffectIrreversible, false},
		{apps.EffectIrreversible, apps.EffectRead, "", true},
		{apps.EffectIrreversible, apps.EffectWrite, "", true},
		{apps.EffectWrite, apps.EffectRead, "", true},
		{apps.EffectRead, "harmless", "", true},
	}
	for _, c := range cases {
		got, err := tighten(c.annotated, c.configured)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("tighten(%s, %q) = %q, %v", c.annotated, c.configured, got, err)
		}
		if c.bad && c.configured != "harmless" && (err == nil || !strings.Contains(err.Error(), "loosen")) {
			t.Errorf("tighten(%s, %s): the error must say it would loosen: %v", c.annotated, c.configured, err)
		}
	}
}

func TestFunctionNames(t *testing.T) {
	for in, want := range map[string]string{
		"read_file":             "read_file",
		"get-tiny-image":        "get_tiny_image",
		"Count-Words":           "count_words",
		"2fa.code":              "t_2fa_code",
		"__":                    "t_",
		strings.Repeat("a", 60): strings.Repeat("a", 41),
	} {
		if got := FunctionName(in); got != want {
			t.Errorf("FunctionName(%q) = %q, want %q", in, got, want)
		}
	}
	taken := map[string]bool{}
	a, b, c := uniqueName("echo", taken), uniqueName("ECHO", taken), uniqueName("request_functionality", taken)
	if a != "echo" || b != "echo_2" || c == apps.RequestFunctionality {
		t.Fatalf("unique names: %s %s %s", a, b, c)
	}
}

// An app-authored schema never makes the hub load a file or a URL.
func TestUnsafeSchemasAreRefused(t *testing.T) {
	for _, s := range []string{
		`{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`,
		`{"type":"object","properties":{"x":{"$ref":"https://evil.example/s.json"}}}`,
		`{"type":"object","$id":"file:///tmp/x.json"}`,
		`{"type":"array"}`,
		`[1,2]`,
	} {
		var v any
		_ = json.Unmarshal([]byte(s), &v)
		if _, err := safeSchema(v, true); err == nil {
			t.Errorf("accepted %s", s)
		}
	}
	var v any
	_ = json.Unmarshal([]byte(`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"a":{"$ref":"#/definitions/a"}},"definitions":{"a":{"type":"string"}}}`), &v)
	if _, err := safeSchema(v, true); err != nil {
		t.Fatalf("a local draft-07 schema: %v", err)
	}
	_ = json.Unmarshal([]byte(`{"$schema":"https://evil.example/meta","properties":{}}`), &v)
	b, err := safeSchema(v, true)
	if err != nil || strings.Contains(string(b), "evil") || !strings.Contains(string(b), `"type":"object"`) {
		t.Fatalf("unknown $schema should be dropped and type added: %s %v", b, err)
	}
}

func TestResults(t *testing.T) {
	res := &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "one"}, &sdk.ImageContent{MIMEType: "image/png", Data: []byte("xx")}, &sdk.TextContent{Text: "two"}}}
	out, err := result(res, false, 1000)
	if err != nil || string(out) != `{"content":"one\n[image image/png, 2 bytes]\ntwo"}` {
		t.Fatalf("text result %s %v", out, err)
	}
	if err := apps.Validate(TextResult, out); err != nil {
		t.Fatal(err)
	}
	out, err = result(&sdk.CallToolResult{StructuredContent: map[string]any{"words": 2}}, true, 1000)
	if err != nil || string(out) != `{"words":2}` {
		t.Fatalf("structured result %s %v", out, err)
	}
	if _, err := result(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "x"}}}, true, 1000); err == nil {
		t.Fatal("a tool with an output schema must return structured content")
	}
	if _, err := result(&sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: "down"}}}, false, 1000); err == nil || !strings.Contains(err.Error(), "down") {
		t.Fatalf("tool error: %v", err)
	}
	if _, err := result(&sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.Repeat("x", 2000)}}}, false, 1000); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("oversized: %v", err)
	}
}

func TestCatalogEntries(t *testing.T) {
	good := CatalogEntry{Name: "test.echo", Description: "Echo.", Effect: apps.EffectRead,
		Request: json.RawMessage(`{"type":"object"}`), Response: TextResult}
	fs, err := CatalogEntries(Server{Catalog: []CatalogEntry{good}})
	if err != nil || len(fs) != 1 || fs[0].Name != "test.echo" {
		t.Fatalf("%v %v", fs, err)
	}
	bad := good
	bad.Effect, bad.Request = "meh", json.RawMessage(`{not json`)
	if _, err := CatalogEntries(Server{Catalog: []CatalogEntry{bad}}); err == nil || !strings.Contains(err.Error(), "meh") {
		t.Fatalf("a bad entry must fail: %v", err)
	}
}
