package serve_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
	"github.com/bulkhead-dev/bulkhead/tui/chat"
)

// A server whose tools are not cached is listed in the background: the
// serving process starts, and a session opens, while the server is held
// at its start by a gate (so the order is the proof, not a time); the
// session's apps, and the status bar's question, say it is being
// listed; a turn sent meanwhile waits for it, saying so first, and runs
// with it once the gate opens and it is listed.
func TestAServerBeingListedDoesNotHoldTheChat(t *testing.T) {
	server := mcpTestServer(t)
	gates := t.TempDir()
	gate := filepath.Join(gates, "open")
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}})
	srv := ollamatest.NewScripted(t, ollamatest.Planned(plan, func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("done") }), "m")
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Ollama: config.Ollama{Host: srv.Host()}, Enable: []string{"clock", "slow"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4},
		MCP: map[string]config.MCPServer{"slow": {Command: server, Args: []string{"-wait-file", gate}, Read: []string{gates}}}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Open returned while the server waits at its gate.
	if got := eng.Listings(); !slices.Equal(got, []string{"slow"}) {
		t.Fatalf("being listed after Open: %v, want [slow]", got)
	}
	serveEngine(t, eng, cfg.DataDir, "fp")
	c := connectAs(t, cfg, cfg.Workspace, cfg.Enable, engine.Models{}, nil)

	// The session is open, and says what is being listed.
	as, err := c.Apps()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(as, func(a serve.AppInfo) bool { return a.Manifest.Name == "slow" })
	if i < 0 || !as[i].Listing || as[i].Since.IsZero() || as[i].Unlisted == "" || len(as[i].Tools) != 0 {
		t.Fatalf("slow in the session's apps while it lists: %+v", as)
	}
	if l := c.Listing(); len(l) != 1 || l["slow"].IsZero() {
		t.Fatalf("the status bar's listing: %v", l)
	}

	// A turn sent now waits for it, and says so.
	ch, err := c.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	evs := make(chan hub.Event, 64)
	type result struct {
		turn hub.Turn
		err  error
	}
	asked := make(chan result, 1)
	go func() {
		turn, err := c.Ask(context.Background(), ch.ID, "hello", func(e hub.Event) { evs <- e })
		asked <- result{turn, err}
	}()
	var first hub.Event
	select {
	case first = <-evs:
	case r := <-asked:
		t.Fatalf("the turn ended before it said what it waits for: %+v", r)
	case <-time.After(time.Minute):
		t.Fatal("no event")
	}
	if first.Kind != hub.EventProgress || first.Progress == nil || !first.Progress.Starting || first.App != "slow" {
		t.Fatalf("the turn's first event: %+v", first)
	}
	live := &chat.Live{}
	live.Apply([]hub.Event{first}, map[string]bool{})
	if got := live.View().Doing; got != "starting the MCP server slow (listing its tools)" {
		t.Fatalf("the status line says %q", got)
	}
	select {
	case r := <-asked:
		t.Fatalf("the turn ran before the server was listed: %+v", r)
	default:
	}

	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r := <-asked
	if r.err != nil || r.turn.Answer != "done" {
		t.Fatalf("the turn: %q %v", r.turn.Answer, r.err)
	}
	var rest []hub.Event
	for len(evs) > 0 {
		rest = append(rest, <-evs)
	}
	if len(rest) == 0 || rest[0].Kind != hub.EventProgress || rest[0].Progress.Starting {
		t.Fatalf("after the wait, the start's end first: %+v", rest)
	}
	live.Apply(rest[:1], map[string]bool{})
	if got := live.View().Doing; got != "" {
		t.Fatalf("the status line, the wait over: %q", got)
	}
	if got := mcpApp(t, c, "slow"); got == "" || got == "unlisted" || !strings.Contains(got, "echo") {
		t.Fatalf("slow once listed: %q", got)
	}
	if l := c.Listing(); len(l) != 0 {
		t.Fatalf("still listing: %v", l)
	}
}
