package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Installed from a warm cache, an MCP app's server starts when the first
// turn that routes to it runs: not at install, not for a turn that does
// not route to it.
func TestFirstRoutedTurnStartsTheServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	log := filepath.Join(dir, "starts")
	count := func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "\n")
	}
	cfg := alpha()
	cfg.Args, cfg.Folders = []string{"-starts", log}, []string{dir}
	cfg.Without = []sandbox.Mechanism{sandbox.Staging} // its starts are logged straight into dir
	cache := mcp.NewCache(filepath.Join(dir, "cache"))
	cat := mcp.CatalogForTests(t)
	warm, err := mcp.Open("alpha", cfg, cat, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	warm.Close()
	a, err := mcp.Open("alpha", cfg, cat, cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	if count() != 1 {
		t.Fatalf("installing from the cache started the server: %d starts", count())
	}
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	r := hubtest.New(t, hubtest.Config{Script: gullible, Rules: allowExec, Apps: append(demo.Apps(), apps.App(a)), Catalog: cat, Prompter: p})
	rg := &rig{reg: r.Apps, srv: r.Srv, op: r.Op, p: p, broker: r.Broker}
	chat, _ := rg.op.NewChat(false)
	rg.ask(t, chat.ID, "how are you today?")
	if count() != 1 {
		t.Fatalf("a chat turn started the server: %d starts", count())
	}
	turn, evs := rg.ask(t, chat.ID, "please echo something")
	if out, ok := ran(evs, "alpha", "echo"); !ok || !strings.Contains(out, "echo: hello") || !strings.Contains(turn.Answer, "echo: hello") {
		t.Fatalf("echo: %q, answer %q", out, turn.Answer)
	}
	if count() != 2 {
		t.Fatalf("the first routed turn starts the server once: %d starts", count())
	}
}
