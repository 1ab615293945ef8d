package mcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/chat"
)

// A tool's progress notifications reach the turn while the call runs —
// the server started for it first, then each step with the server's
// words — and the chat's status line says what the turn waits for: the
// tool, named, with how far it got, not "waiting for the model".
func TestProgressReachesTheStatusLine(t *testing.T) {
	t.Parallel()
	gate := filepath.Join(t.TempDir(), "gate")
	script := gullibleFor(map[string]string{"progress": "gamma.progress"},
		map[string][]step{"progress": {{"progress", map[string]any{"steps": 3, "gate": gate}}}})
	r := newRig(t, script, nil, allowExec, mcp.CatalogForTests(t), map[string]mcp.Server{"gamma": {Command: mcp.TestServer}})
	c, _ := r.op.NewChat(false)
	evs := make(chan hub.Event, 256)
	done := make(chan error, 1)
	go func() {
		_, err := r.op.Ask(context.Background(), c.ID, "show progress", func(e hub.Event) { evs <- e })
		done <- err
	}()
	live := &chat.Live{}
	working := map[string]bool{}
	var seen []string
	for waiting := true; waiting; {
		select {
		case e := <-evs:
			live.Apply([]hub.Event{e}, working)
			if d := live.View().Doing; d != "" && (len(seen) == 0 || seen[len(seen)-1] != d) {
				seen = append(seen, d)
			}
			waiting = !(e.Kind == hub.EventProgress && e.Progress != nil && e.Progress.Done == 3)
		case err := <-done:
			t.Fatalf("the turn ended before its progress: %v (status lines %q)", err, seen)
		case <-time.After(time.Minute):
			t.Fatalf("no progress (status lines %q)", seen)
		}
	}
	// The call is held by its gate: this is the line while it runs.
	want := "running gamma.progress · 3/3 · gamma: step 3 of 3[31m"
	if got := live.View().Doing; got != want {
		t.Fatalf("the status line while the tool runs: %q, want %q (before: %q)", got, want, seen)
	}
	joined := strings.Join(seen, "\n")
	for _, w := range []string{"running gamma.progress", "starting the MCP server gamma for gamma.progress", "running gamma.progress · 1/3 · gamma: step 1 of 3"} {
		if !strings.Contains(joined, w) {
			t.Errorf("the status lines lack %q:\n%s", w, joined)
		}
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for len(evs) > 0 {
		live.Apply([]hub.Event{<-evs}, working)
	}
	if got := live.View().Doing; got != "" {
		t.Errorf("after the call: %q", got)
	}
}
