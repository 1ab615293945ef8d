package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// A detail can be the server's words: Print shows control characters in
// it as visible escapes, each check on its own line.
func TestPrintShowsServerTextAsVisibleEscapes(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	ok := Print(&b, []Check{
		{Name: "ollama http://h", OK: true, Detail: "version 1.0\x1b]0;pwned\a\n✓ everything: fine"},
		{Name: "model m", Detail: "\x1b[2J\u202e", Fix: "ollama pull m\r"},
	})
	want := "✓ ollama http://h: version 1.0\\x1b]0;pwned\\a\\n✓ everything: fine\n" +
		"✗ model m: \\x1b[2J\\u202e\n" +
		"    fix: ollama pull m\\r\n"
	if ok || b.String() != want {
		t.Fatalf("ok %v, got\n%s\nwant\n%s", ok, b.String(), want)
	}
}

// Each enabled MCP server is a check: what it listed and what became of
// its cached tool list, or why it failed and where to fix it.
func TestMCPChecks(t *testing.T) {
	t.Parallel()
	cfg := config.Config{File: "/home/ada/.config/bulkhead/config.yaml"}
	rs := []mcp.Refreshed{
		{App: "fs", Server: "secure-filesystem-server", Version: "0.2.0", Tools: 14},
		{App: "git", Server: "git", Version: "1.1", Tools: 12, Cached: true},
		{App: "mail", Server: "mail", Version: "3", Tools: 4, Cached: true, Changed: true},
		{App: "gone", Err: errors.New("mcp gone: could not start the MCP server (nope): not found")},
		{App: "picky", Server: "picky", Version: "1", Tools: 2, Err: errors.New("mcp picky: tools.send: the server has no such tool (it has a, b)")},
	}
	var b strings.Builder
	if Print(&b, mcpChecks(rs, cfg, nil)) {
		t.Fatal("two checks failed")
	}
	for _, want := range []string{
		"✓ MCP server fs: secure-filesystem-server 0.2.0, 14 tools; tool list cached\n",
		"✓ MCP server git: git 1.1, 12 tools; cached tool list up to date\n",
		"✓ MCP server mail: mail 3, 4 tools; tool list changed since it was cached; cache refreshed",
		"✗ MCP server gone: mcp gone: could not start the MCP server (nope): not found\n    fix: check mcp.gone in /home/ada/.config/bulkhead/config.yaml; its command must start",
		"✗ MCP server picky: mcp picky: tools.send: the server has no such tool (it has a, b)\n    fix: fix mcp.picky in /home/ada/.config/bulkhead/config.yaml to fit the tools",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

// doctor asks Ollama what each configured model can do: a role whose
// model lacks what it needs fails, named with its role and key, listing
// the installed models that can and how to choose one; a role whose
// model can passes, and an older Ollama that does not say is taken at
// its word.
func TestRolesNeedCapabilities(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "small", "big", "embed", "old")
	srv.SetCapabilities("small", "completion")
	srv.SetCapabilities("big", "completion", "tools", "thinking")
	srv.SetCapabilities("embed", "embedding")
	cfg := config.Config{
		File:    "/home/ada/.config/bulkhead/config.yaml",
		DataDir: t.TempDir(),
		Ollama:  config.Ollama{Host: srv.Host()},
		Hub:     config.Owner{Model: "embed"},
		Spokes:  config.Owner{Model: "small"},
		Apps:    map[string]config.App{"mail": {Model: "big"}, "notes": {}, "clock": {Model: "old"}},
		From:    map[string]string{"hub.model": "/home/ada/.config/bulkhead/config.yaml", "spokes.model": "--model"},
	}
	var b strings.Builder
	if Print(&b, Run(context.Background(), cfg, Options{})) {
		t.Fatalf("two roles cannot serve:\n%s", b.String())
	}
	got := b.String()
	for _, want := range []string{
		"✗ role hub (hub.model = embed): cannot write text (completion), which the hub needs: its plans are structured output (Ollama lists: embedding)\n" +
			"    fix: installed models that can write text (completion): big, old, small; choose one with `bulkhead --model NAME` (the hub and every spoke), or set hub.model in /home/ada/.config/bulkhead/config.yaml\n",
		"✗ role spokes (spokes.model = small): cannot call tools, which a spoke needs: an app's functions are its tools (Ollama lists: completion)\n" +
			"    fix: installed models that can call tools: big, old; choose one with `bulkhead --model NAME` (the hub and every spoke), or set spokes.model in /home/ada/.config/bulkhead/config.yaml (now set by --model)\n",
		"✓ role mail's spoke (apps.mail.model = big): can call tools; thinks (shown with ctrl+t)\n",
		"✓ role clock's spoke (apps.clock.model = old): Ollama does not say what it can do (an older server); taken as able\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "notes") {
		t.Errorf("an app on the spokes' model is the spokes' role:\n%s", got)
	}

	// An app's own model that cannot call tools names its own key.
	cfg.Hub.Model, cfg.Spokes.Model = "big", "big"
	cfg.Apps = map[string]config.App{"mail": {Model: "small"}}
	b.Reset()
	if Print(&b, Run(context.Background(), cfg, Options{})) {
		t.Fatalf("mail's spoke cannot serve:\n%s", b.String())
	}
	if want := "✗ role mail's spoke (apps.mail.model = small): cannot call tools, which a spoke needs: an app's functions are its tools (Ollama lists: completion)\n" +
		"    fix: installed models that can call tools: big, old; choose one by setting apps.mail.model in /home/ada/.config/bulkhead/config.yaml\n"; !strings.Contains(b.String(), want) {
		t.Errorf("lacks %q:\n%s", want, b.String())
	}
}

// A database held by a serving process that did not answer says so,
// with the reason, not "another bulkhead process".
func TestHeldByAServerThatDidNotAnswer(t *testing.T) {
	dir := t.TempDir()
	st, err := memory.Open(filepath.Join(dir, "db"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	checks := dataDir(dir, "protocol 2 there, 3 here")
	last := checks[len(checks)-1]
	if last.OK || !strings.Contains(last.Detail, "held by the process serving this data directory") || !strings.Contains(last.Detail, "protocol 2 there, 3 here") || strings.Contains(last.Detail, "another bulkhead") {
		t.Fatalf("%+v", last)
	}
	if checks = dataDir(dir, ""); !strings.Contains(checks[len(checks)-1].Detail, "in use by another bulkhead process") {
		t.Fatalf("no serving process: %+v", checks[len(checks)-1])
	}
}

// A server that could not start gets the fix for why: an npx server
// whose config names no network is told its npm registry and the flag;
// one whose network was refused unasked (off a terminal) is told the
// flag — and, when bulkhead has its tool list cached, is a note, not a
// failure; one whose network the person refused is told to allow it.
func TestMCPChecksNameTheNetworkFix(t *testing.T) {
	t.Parallel()
	cfg := config.Config{File: "/home/ada/.config/bulkhead/config.yaml", DataDir: "/d", MCP: map[string]config.MCPServer{
		"bare":     {Command: "npx", Args: []string{"-y", "server-bare"}},
		"memory":   {Command: "npx", Net: []string{"registry.npmjs.org:443"}},
		"cached":   {Command: "npx", Net: []string{"registry.npmjs.org:443"}},
		"declined": {Command: "/opt/weather/bin/weather", Net: []string{"api.weather.example:443"}},
		"local":    {Command: "/opt/tool/bin/tool"},
	}}
	unlisted := func(app string) error {
		return fmt.Errorf("mcp %s: %w: could not start the MCP server: context deadline exceeded", app, mcp.ErrUnlisted)
	}
	rs := []mcp.Refreshed{
		{App: "bare", Err: unlisted("bare")},
		{App: "memory", Err: unlisted("memory")},
		{App: "cached", Cached: true, Err: unlisted("cached")},
		{App: "declined", Err: unlisted("declined")},
		{App: "local", Err: unlisted("local")},
	}
	network := func(app string) Network {
		switch app {
		case "memory", "cached":
			return Network{Refused: []string{"registry.npmjs.org:443"}, Unasked: true}
		case "declined":
			return Network{Refused: []string{"api.weather.example:443"}}
		}
		return Network{}
	}
	checks := mcpChecks(rs, cfg, network)
	byApp := map[string]Check{}
	for _, c := range checks {
		byApp[strings.TrimPrefix(c.Name, "MCP server ")] = c
	}
	for app, want := range map[string]struct {
		ok, note bool
		fix      []string
	}{
		"bare":     {fix: []string{"npx downloads the server from your npm's registry (", "which mcp.bare does not name: add net: [", "to mcp.bare in /home/ada/.config/bulkhead/config.yaml, then run `bulkhead doctor --allow-net`"}},
		"memory":   {fix: []string{"(registry.npmjs.org:443: npx downloads the server), which was not asked — standard input is not a terminal: `bulkhead doctor --allow-net` allows it"}},
		"cached":   {ok: true, note: true, fix: []string{"`bulkhead doctor --allow-net`"}},
		"declined": {fix: []string{"(api.weather.example:443), which you did not allow: run bulkhead doctor again and allow it, or `bulkhead doctor --allow-net`"}},
		"local":    {fix: []string{"check mcp.local in /home/ada/.config/bulkhead/config.yaml; its command must start an MCP server"}},
	} {
		c := byApp[app]
		if c.OK != want.ok || c.Note != want.note {
			t.Errorf("%s: ok %v note %v: %+v", app, c.OK, c.Note, c)
		}
		for _, f := range want.fix {
			if !strings.Contains(c.Fix, f) {
				t.Errorf("%s: the fix lacks %q: %s", app, f, c.Fix)
			}
		}
	}
	if c := byApp["cached"]; !strings.Contains(c.Detail, "bulkhead starts from the tool list cached before") {
		t.Errorf("cached: %s", c.Detail)
	}
}

// --json is one document: whether all passed and every check, its
// strings safe to print (a control character the server wrote decodes as
// a visible escape).
func TestPrintJSON(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	ok, err := PrintJSON(&b, []Check{
		{Name: "configuration", OK: true, Detail: "/c.yaml"},
		{Name: "MCP server fs", Detail: "mcp fs: \x1b]0;pwned\a", Fix: "`bulkhead doctor --allow-net`"},
		{Name: "MCP server git", OK: true, Note: true, Detail: "configured, but not enabled", Fix: "add git to enable"},
	})
	if err != nil || ok {
		t.Fatalf("ok %v err %v", ok, err)
	}
	var r Report
	if err := json.Unmarshal([]byte(b.String()), &r); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if r.OK || len(r.Checks) != 3 || r.Checks[1].Detail != `mcp fs: \x1b]0;pwned\a` || r.Checks[1].Fix != "`bulkhead doctor --allow-net`" || !r.Checks[2].Note || r.Checks[0].Fix != "" {
		t.Fatalf("%+v", r)
	}
	if !strings.Contains(b.String(), `"name": "configuration"`) || strings.Contains(b.String(), `"fix": ""`) {
		t.Errorf("the document:\n%s", b.String())
	}
	b.Reset()
	if ok, _ := PrintJSON(&b, nil); !ok || strings.TrimSpace(b.String()) != "{\n  \"ok\": true,\n  \"checks\": []\n}" {
		t.Errorf("no checks: %v %s", ok, b.String())
	}
}
