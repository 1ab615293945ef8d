package engine_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

var switchPlan = ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "q", "depends_on": []string{}}}})

// SetModel switches the hub and the spokes (a chat's spoke started
// before included) to an installed model that can call tools, for this
// engine only; a model that is missing or cannot call tools is refused
// with the ones that can, a running turn refuses the switch, and an app
// with a model of its own keeps it.
func TestSetModelSwitchesHubAndSpokes(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Planned(switchPlan, func(req *api.ChatRequest) ollamatest.Reply {
		if req.Messages[len(req.Messages)-1].Content == "long one" {
			return ollamatest.Reply{Chunks: []string{"partial"}, Hang: true}
		}
		return ollamatest.Text("answered by " + req.Model)
	}), "m", "m2:latest", "embed", "pinned")
	srv.SetCapabilities("m", "completion", "tools")
	srv.SetCapabilities("m2:latest", "completion", "tools")
	srv.SetCapabilities("pinned", "completion", "tools")
	srv.SetCapabilities("embed", "embedding")
	cfg := config.Config{DataDir: t.TempDir(), Ollama: config.Ollama{Host: srv.Host()},
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4},
		Apps: map[string]config.App{"clock": {Model: "pinned"}}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	ctx := context.Background()

	list, err := eng.Installed(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range list {
		names = append(names, m.Name)
	}
	if !slices.Equal(names, []string{"embed", "m", "m2:latest", "pinned"}) {
		t.Fatalf("Installed = %v", names)
	}

	chat, _ := eng.Hub.NewChat(false)
	if turn, err := eng.Hub.Ask(ctx, chat.ID, "one", nil); err != nil || turn.Answer != "answered by m" {
		t.Fatalf("turn %+v err %v", turn, err)
	}

	if err := eng.SetModel(ctx, "nope"); !errors.Is(err, engine.ErrNotInstalled) {
		t.Fatalf("a missing model: %v", err)
	}
	var inc *llm.IncapableError
	if err := eng.SetModel(ctx, "embed"); !errors.As(err, &inc) || !slices.Equal(inc.Alternatives, []string{"m", "m2:latest", "pinned"}) {
		t.Fatalf("a model without tools: %v", err)
	}

	// A turn runs: the switch is refused and changes nothing.
	cancel, done := hubtest.Streaming(t, eng.Hub, chat.ID, "long one")
	if err := eng.SetModel(ctx, "m2"); !errors.Is(err, hub.ErrBusy) {
		t.Fatalf("a switch during a turn: %v", err)
	}
	cancel()
	<-done
	if h, s := eng.Current(); h != "m" || s != "m" {
		t.Fatalf("a refused switch changed the models: %s / %s", h, s)
	}

	// "m2" is m2:latest, as Ollama reads it.
	if err := eng.SetModel(ctx, "m2"); err != nil {
		t.Fatal(err)
	}
	if h, s := eng.Current(); h != "m2:latest" || s != "m2:latest" {
		t.Fatalf("Current = %s / %s", h, s)
	}
	if got := eng.Hub.HubModel(); got != "m2:latest" {
		t.Fatalf("the hub names %q", got)
	}
	if got := eng.AppModel("clock"); got != "pinned" {
		t.Fatalf("an app's own model (apps.clock.model) must stay: %q", got)
	}
	if got := eng.AppModel("notes"); got != "m2:latest" {
		t.Fatalf("notes' spoke model %q", got)
	}
	before := len(srv.Requests())
	turn, err := eng.Hub.Ask(ctx, chat.ID, "two", nil)
	if err != nil || turn.Answer != "answered by m2:latest" {
		t.Fatalf("the chat's spoke still runs the old model: turn %+v err %v", turn, err)
	}
	for _, r := range srv.Requests()[before:] {
		if r.Model != "m2:latest" {
			t.Errorf("a request after the switch went to %q (format %v)", r.Model, len(r.Format) > 0)
		}
	}
	if eng.Config.Hub.Model != "m" || eng.Config.Spokes.Model != "m" {
		t.Fatalf("the configuration changed: %+v", eng.Config)
	}
}
