package mcp

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// EffectOf maps a tool's annotations to an effect, following the MCP
// defaults (readOnlyHint false, destructiveHint true, openWorldHint true):
//
//   - destructiveHint true → irreversible, even next to readOnlyHint
//     (contradictory hints resolve to the stricter);
//   - readOnlyHint true → read;
//   - not read-only and destructiveHint absent (or no annotations) →
//     irreversible;
//   - not read-only and destructiveHint false → write.
//
// openWorld reports whether the tool may reach an open world of external
// entities (openWorldHint true or absent).
func EffectOf(a *sdk.ToolAnnotations) (effect apps.Effect, openWorld bool) {
	if a == nil {
		return apps.EffectIrreversible, true
	}
	openWorld = a.OpenWorldHint == nil || *a.OpenWorldHint
	switch {
	case a.DestructiveHint != nil && *a.DestructiveHint:
		return apps.EffectIrreversible, openWorld
	case a.ReadOnlyHint:
		return apps.EffectRead, openWorld
	case a.DestructiveHint == nil:
		return apps.EffectIrreversible, openWorld
	default:
		return apps.EffectWrite, openWorld
	}
}

// tighten applies a configured effect: it may make a tool stricter, never
// looser. Loosening is an error, so that a config written for an older
// version of a server cannot silently hide a destructive tool.
func tighten(annotated apps.Effect, configured apps.Effect) (apps.Effect, error) {
	if configured == "" {
		return annotated, nil
	}
	switch configured {
	case apps.EffectRead, apps.EffectWrite, apps.EffectIrreversible:
	default:
		return "", fmt.Errorf("effect %q is not read, write or irreversible", configured)
	}
	if apps.Stricter(annotated, configured) != configured {
		return "", fmt.Errorf("effect %s would loosen %s (from the server's annotations); config may only tighten", configured, annotated)
	}
	return configured, nil
}

var notName = lazyRegexp(`[^a-z0-9_]+`)

// FunctionName turns a tool name into a function name, [a-z][a-z0-9_]*
// of at most 41 characters: lower-cased, other runs become "_", "t_" in
// front of a name that does not start with a letter.
func FunctionName(tool string) string {
	n := strings.Trim(notName().ReplaceAllString(strings.ToLower(tool), "_"), "_")
	if n == "" || n[0] < 'a' || n[0] > 'z' {
		n = "t_" + n
	}
	if len(n) > 41 {
		n = strings.TrimRight(n[:41], "_")
	}
	return n
}

// uniqueName gives a function name not yet taken (nor reserved).
func uniqueName(tool string, taken map[string]bool) string {
	base := FunctionName(tool)
	n := base
	for i := 2; taken[n] || n == apps.RequestFunctionality; i++ {
		suffix := fmt.Sprintf("_%d", i)
		if len(base)+len(suffix) > 41 {
			base = base[:41-len(suffix)]
		}
		n = base + suffix
	}
	taken[n] = true
	return n
}

// Schemas of results.
var (
	permissiveObject = json.RawMessage(`{"type":"object"}`)
	// TextResult is the result of a tool without an outputSchema: its
	// text content, joined by newlines, as {"content": "..."}.
	TextResult = json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`)
)

var metaSchema = lazyRegexp(`^https?://json-schema\.org/(draft-0[467]/schema|draft/2019-09/schema|draft/2020-12/schema)#?$`)

// safeSchema vets an app-authored JSON schema before anything compiles
// it: references must stay inside the document ("#..."), no "$id" may
// rebase it, and only the known meta-schemas may be named — so that
// compiling it can never load a file or a URL. It must describe an object
// whose parameters a model client can read.
func safeSchema(v any, params bool) (json.RawMessage, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("not a JSON object")
	}
	if s, ok := m["$schema"].(string); ok && !metaSchema().MatchString(s) {
		delete(m, "$schema")
	}
	if err := localOnly(m, true); err != nil {
		return nil, err
	}
	if t, ok := m["type"]; !ok && params {
		m["type"] = "object"
	} else if t != "object" {
		return nil, fmt.Errorf("type %v, not object", t)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	if params {
		var p api.ToolFunctionParameters
		if err := json.Unmarshal(b, &p); err != nil {
			return nil, fmt.Errorf("not usable as tool parameters: %v", err)
		}
	}
	if _, err := apps.Compile(b); err != nil {
		return nil, err
	}
	return b, nil
}

func localOnly(v any, root bool) error {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			s, isStr := x.(string)
			switch {
			case isStr && (k == "$ref" || k == "$dynamicRef" || k == "$recursiveRef") && !strings.HasPrefix(s, "#"):
				return fmt.Errorf("reference %q outside the schema", s)
			case isStr && k == "$id":
				return fmt.Errorf("$id %q", s)
			case isStr && k == "$schema" && !root:
				return fmt.Errorf("nested $schema %q", s)
			}
			if err := localOnly(x, false); err != nil {
				return err
			}
		}
	case []any:
		for _, x := range t {
			if err := localOnly(x, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// result turns a tool's answer into the function's JSON result: the
// structured content of a tool with an output schema, otherwise its
// content as text in {"content": "..."}. A tool error becomes an error
// (its text reaches only the app's own spoke). A result over max bytes is
// an error.
func result(res *sdk.CallToolResult, structured bool, max int) (json.RawMessage, error) {
	text := contentText(res.Content)
	if res.IsError {
		return nil, fmt.Errorf("the tool reported an error: %s", clip(text, 2000))
	}
	var out []byte
	var err error
	if structured && res.StructuredContent != nil {
		out, err = json.Marshal(res.StructuredContent)
	} else if structured {
		return nil, fmt.Errorf("the tool declares an output schema but returned no structured content")
	} else {
		out, err = json.Marshal(map[string]string{"content": text})
	}
	if err != nil {
		return nil, err
	}
	if len(out) > max {
		return nil, fmt.Errorf("its output is too large (%d bytes; the limit is %d)", len(out), max)
	}
	return out, nil
}

// contentText renders content blocks as text; binary blocks become a
// short note of their type and size.
func contentText(cs []sdk.Content) string {
	var parts []string
	for _, c := range cs {
		switch t := c.(type) {
		case *sdk.TextContent:
			parts = append(parts, t.Text)
		case *sdk.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", t.MIMEType, len(t.Data)))
		case *sdk.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", t.MIMEType, len(t.Data)))
		case *sdk.ResourceLink:
			// read_resource reads it, where the server has resources
			link := fmt.Sprintf("[resource link %s", t.URI)
			if t.Name != "" {
				link += fmt.Sprintf(" %q", clip(t.Name, 200))
			}
			if t.MIMEType != "" {
				link += " " + clip(t.MIMEType, 100)
			}
			parts = append(parts, link+"]")
		case *sdk.EmbeddedResource:
			switch {
			case t.Resource == nil:
			case t.Resource.Text != "":
				parts = append(parts, t.Resource.Text)
			default:
				parts = append(parts, fmt.Sprintf("[resource %s %s, %d bytes]", t.Resource.URI, t.Resource.MIMEType, len(t.Resource.Blob)))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	return strings.Join(parts, "\n")
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// lazyRegexp compiles expr on first use, so that a process that never
// needs it does not pay for it at start.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
