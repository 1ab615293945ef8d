package engine_test

import (
	"context"
	"testing"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// TestAppSwitchesPersist: an app switched off stays off in the next
// process on the same data directory, until switched back on.
func TestAppSwitchesPersist(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	cfg := config.Config{DataDir: t.TempDir(), Ollama: config.Ollama{Host: srv.Host()}, Enable: []string{"builtin"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
	open := func() *engine.Engine {
		t.Helper()
		eng, err := engine.Open(context.Background(), cfg, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return eng
	}
	eng := open()
	if !eng.Hub.Enabled("notes") || !eng.Hub.Enabled("calc") {
		t.Fatal("apps start enabled")
	}
	if err := eng.Hub.SetEnabled("notes", false); err != nil {
		t.Fatal(err)
	}
	eng.Close()

	eng = open()
	if eng.Hub.Enabled("notes") || !eng.Hub.Enabled("calc") {
		t.Fatalf("after a restart: notes %v calc %v, want off and on", eng.Hub.Enabled("notes"), eng.Hub.Enabled("calc"))
	}
	if err := eng.Hub.SetEnabled("notes", true); err != nil {
		t.Fatal(err)
	}
	eng.Close()

	eng = open()
	defer eng.Close()
	if !eng.Hub.Enabled("notes") {
		t.Fatal("switched back on, notes is off after a restart")
	}
}
