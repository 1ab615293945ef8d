package serve_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// mcpTestServer is the MCP test server of apps/mcp, built for the test
// ($BULKHEAD_MCP_TESTSERVER names a built one).
func mcpTestServer(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BULKHEAD_MCP_TESTSERVER"); p != "" {
		return p
	}
	out := filepath.Join(t.TempDir(), "testserver")
	if b, err := exec.Command("go", "build", "-o", out, "../apps/mcp/internal/testserver").CombinedOutput(); err != nil {
		t.Fatalf("building the MCP test server: %v\n%s", err, b)
	}
	return out
}

// mcpApp is how a session's apps list shows the MCP app name: "" when
// it is not there, "unlisted", or its tools.
func mcpApp(t *testing.T, c *serve.Client, name string) string {
	t.Helper()
	list, err := c.Apps()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.Manifest.Name != name {
			continue
		}
		if a.Unlisted != "" {
			return "unlisted"
		}
		var tools []string
		for _, ti := range a.Tools {
			tools = append(tools, ti.Tool)
		}
		slices.Sort(tools)
		return strings.Join(tools, ",")
	}
	return ""
}

// A listing made while the serving process runs reaches it at once: a
// server its sessions ran without ("not listed": its first start failed)
// is installed once doctor's listing (engine.RefreshMCP) has the serving
// process relist — in the open sessions, at their next call, whatever
// their folder, and in those that start after; a turn running meanwhile
// finishes on the apps it started with. A listing of other tools reaches
// them the same way, and so does the apps screen's refresh of a server
// still not listed.
func TestAListingReachesTheServingProcess(t *testing.T) {
	server := mcpTestServer(t)
	versions := t.TempDir()
	// No version file yet: the server exits at its start, unlisted.
	tester, later := filepath.Join(versions, "tester"), filepath.Join(versions, "later")
	entered, release := make(chan struct{}, 1), make(chan struct{})
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}})
	srv := ollamatest.NewScripted(t, ollamatest.Planned(plan, func(req *api.ChatRequest) ollamatest.Reply {
		if strings.Contains(req.Messages[len(req.Messages)-1].Content, "hold") {
			entered <- struct{}{}
			<-release
		}
		return ollamatest.Text("done")
	}), "m")
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Ollama: config.Ollama{Host: srv.Host()}, Enable: []string{"clock", "tester", "later"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4},
		MCP: map[string]config.MCPServer{
			"tester": {Command: server, Args: []string{"-version-file", tester}, Read: []string{versions}},
			"later":  {Command: server, Args: []string{"-version-file", later}, Read: []string{versions}},
		}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Their first listing runs in the background: it has failed before
	// anything here writes a version file.
	if err := eng.WaitListed(context.Background()); err != nil {
		t.Fatal(err)
	}
	serveEngine(t, eng, cfg.DataDir, "fp")

	// a runs the process's own profile (the one its start built), b
	// another folder's, which no one else holds.
	a := connectAs(t, cfg, cfg.Workspace, cfg.Enable, engine.Models{}, nil)
	b := connectAs(t, cfg, t.TempDir(), cfg.Enable, engine.Models{}, nil)
	// e1 and e2 share a third folder's profile: e1 moves on to its new
	// one and leaves before e2 makes a call.
	third := t.TempDir()
	e1 := connectAs(t, cfg, third, cfg.Enable, engine.Models{}, nil)
	e2 := connectAs(t, cfg, third, cfg.Enable, engine.Models{}, nil)
	for _, c := range []*serve.Client{a, b, e1, e2} {
		if got := mcpApp(t, c, "tester"); got != "unlisted" {
			t.Fatalf("before any listing, tester: %q, want unlisted", got)
		}
	}
	chat, err := b.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	held := make(chan error, 1)
	go func() {
		turn, err := b.Ask(context.Background(), chat.ID, "hold on", nil)
		if err == nil && turn.Answer != "done" {
			err = &unexpected{turn.Answer}
		}
		held <- err
	}()
	<-entered

	// What doctor does: list every enabled server, then have the serving
	// process take the lists.
	if err := os.WriteFile(tester, []byte("1.0.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, r := range engine.RefreshMCP(context.Background(), cfg) {
		if r.App == "tester" && r.Err != nil {
			t.Fatalf("listing tester: %v", r.Err)
		}
	}
	if got, err := b.Relist(); err != nil || !slices.Equal(got, []string{"tester"}) {
		t.Fatalf("relist: %v %v, want [tester]", got, err)
	}
	for name, c := range map[string]*serve.Client{"a (open)": a, "b (open, its turn running)": b,
		"a session started after": connectAs(t, cfg, cfg.Workspace, cfg.Enable, engine.Models{}, nil)} {
		if got := mcpApp(t, c, "tester"); got == "unlisted" || got == "" {
			t.Errorf("%s: tester %q after the listing, want it installed", name, got)
		}
		if got := mcpApp(t, c, "later"); got != "unlisted" {
			t.Errorf("%s: later %q, want still unlisted (it was not listed)", name, got)
		}
	}
	if got := mcpApp(t, e1, "tester"); got == "unlisted" || got == "" {
		t.Errorf("e1: tester %q after the listing", got)
	}
	clients := func() int {
		st, err := a.Status()
		if err != nil {
			t.Fatal(err)
		}
		return len(st.Clients)
	}
	n := clients()
	e1.Close()
	waitFor(t, func() bool { return clients() == n-1 })
	if got := mcpApp(t, e2, "tester"); got == "unlisted" || got == "" {
		t.Errorf("e2, after e1 left: tester %q", got)
	}
	if c, err := e2.NewChat(false); err != nil {
		t.Fatal(err)
	} else if turn, err := e2.Ask(context.Background(), c.ID, "and e2", nil); err != nil || turn.Answer != "done" {
		t.Errorf("e2's turn on the profile e1 moved to and left: %q %v", turn.Answer, err)
	}
	close(release)
	if err := <-held; err != nil {
		t.Fatalf("the turn that ran across the relisting: %v", err)
	}
	if turn, err := b.Ask(context.Background(), chat.ID, "again", nil); err != nil || turn.Answer != "done" {
		t.Fatalf("b's next turn, on the new apps: %q %v", turn.Answer, err)
	}

	// Other tools listed: the sessions take them too.
	if err := os.WriteFile(tester, []byte("2.0.0\n+shiny"), 0o600); err != nil {
		t.Fatal(err)
	}
	engine.RefreshMCP(context.Background(), cfg)
	if got, err := a.Relist(); err != nil || !slices.Equal(got, []string{"tester"}) {
		t.Fatalf("relist after new tools: %v %v", got, err)
	}
	if got := mcpApp(t, b, "tester"); !strings.Contains(got, "shiny") {
		t.Errorf("b's tester after its tools changed: %q, want shiny among them", got)
	}

	// The apps screen's refresh of a server still not listed lists it
	// in the serving process, and every session gets it.
	if err := os.WriteFile(later, []byte("1.0.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	app, ok := b.App("later")
	if !ok {
		t.Fatal("later is not in b's apps")
	}
	r := app.(interface {
		Refresh(context.Context) mcp.Refreshed
	}).Refresh(context.Background())
	if r.Err != nil || r.Tools == 0 {
		t.Fatalf("refreshing later: %+v", r)
	}
	for name, c := range map[string]*serve.Client{"a": a, "b": b} {
		if got := mcpApp(t, c, "later"); got == "unlisted" || got == "" {
			t.Errorf("%s: later %q after its refresh, want it installed", name, got)
		}
	}
}

type unexpected struct{ answer string }

func (u *unexpected) Error() string { return "unexpected answer " + u.answer }
