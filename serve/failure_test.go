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
)

// A server that fails to start while a turn waits for it is told: the
// turn that asked for it (its plan named bad.echo, which no installed
// app provides, and fell back to plain chat) ends with an error naming
// the server, its exit status and its stderr's last line (made safe to
// print), and the
// session's apps name it as failed — what the status line says — no
// longer as being listed. The server is held at its start by a gate,
// so the turn is known to wait for it before it fails.
func TestAFailedStartIsTold(t *testing.T) {
	server := mcpTestServer(t)
	gates := t.TempDir()
	gate := filepath.Join(gates, "open")
	// No version file: past its gate, the server exits (status 1),
	// saying on stderr that the file is missing.
	missing := filepath.Join(gates, "missing\x1b[31mversion")
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "bad.echo", "query": "hi", "depends_on": []string{}}}})
	srv := ollamatest.NewScripted(t, ollamatest.Planned(plan, func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("done") }), "m")
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Ollama: config.Ollama{Host: srv.Host()}, Enable: []string{"clock", "bad"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4},
		MCP: map[string]config.MCPServer{"bad": {Command: server, Args: []string{"-wait-file", gate, "-version-file", missing}, Read: []string{gates}}}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	serveEngine(t, eng, cfg.DataDir, "fp")
	c := connectAs(t, cfg, cfg.Workspace, cfg.Enable, engine.Models{}, nil)
	if l, failed := c.ListingState(); len(l) != 1 || len(failed) != 0 {
		t.Fatalf("while bad starts: listing %v, failed %v", l, failed)
	}

	ch, err := c.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	evs := make(chan hub.Event, 64)
	asked := make(chan error, 1)
	go func() {
		_, err := c.Ask(context.Background(), ch.ID, "echo hi with bad", func(e hub.Event) { evs <- e })
		asked <- err
	}()
	select {
	case e := <-evs:
		if e.Kind != hub.EventProgress || e.Progress == nil || !e.Progress.Starting || e.App != "bad" {
			t.Fatalf("the turn's first event: %+v", e)
		}
	case err := <-asked:
		t.Fatalf("the turn ended before it waited for bad: %v", err)
	case <-time.After(time.Minute):
		t.Fatal("no event")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	err = <-asked
	if err == nil {
		t.Fatal("the turn that asked for bad succeeded")
	}
	msg := err.Error()
	for _, want := range []string{"the MCP server bad failed to start (exit status 1)", "no such file or directory", "answered without it"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the turn's error does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "\x1b") {
		t.Errorf("the turn's error carries an escape from the server's stderr: %q", msg)
	}

	l, failed := c.ListingState()
	if len(l) != 0 || !slices.Equal(failed, []string{"bad"}) {
		t.Fatalf("once bad failed: listing %v, failed %v, want bad failed", l, failed)
	}
	as, err := c.Apps()
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(as, func(a serve.AppInfo) bool { return a.Manifest.Name == "bad" })
	if i < 0 || !strings.HasPrefix(as[i].Failed, "the MCP server bad failed to start (exit status 1)") || as[i].Unlisted == "" {
		t.Fatalf("bad in the session's apps: %+v", as)
	}
}
