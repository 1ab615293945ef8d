package doctor

import (
	"errors"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
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
	if Print(&b, mcpChecks(rs, cfg)) {
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
