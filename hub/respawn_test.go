package hub_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// Respawn stops the chat's cached spoke, so the next turn in the same
// chat is answered by a spoke built anew from the switched factory; while
// a turn runs it refuses and changes nothing.
func TestRespawnRestartsSpokesAndWaitsForTurns(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(req *api.ChatRequest) ollamatest.Reply {
		if req.Messages[len(req.Messages)-1].Content == "long one" {
			return ollamatest.Reply{Chunks: []string{"partial"}, Hang: true}
		}
		return ollamatest.Text("answer from " + req.Model)
	}), hubModel, spokeModel, "other-model")
	store, err := memory.Open(t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var name atomic.Pointer[string]
	first := spokeModel
	name.Store(&first)
	hubClient, _ := llm.New(llm.Config{Host: srv.Host(), Model: hubModel}, nil)
	op, err := hub.New(hub.Options{
		Store: store, HubModel: hubClient, History: 4, SpokeHistory: 4,
		SpokeModel: func(string) (spokes.Model, error) {
			return llm.New(llm.Config{Host: srv.Host(), Model: *name.Load()}, nil)
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { op.Close(); store.Close() })
	ctx := context.Background()
	chat, _ := op.NewChat(false)

	if turn, err := op.Ask(ctx, chat.ID, "one", nil); err != nil || turn.Answer != "answer from "+spokeModel {
		t.Fatalf("turn %+v err %v", turn, err)
	}

	// A turn runs: the switch is refused and changes nothing.
	cancel, done := hubtest.Streaming(t, op, chat.ID, "long one")
	changed := false
	if err := op.Respawn(func() { changed = true }); !errors.Is(err, hub.ErrBusy) || changed {
		t.Fatalf("Respawn during a turn: err %v, changed %v", err, changed)
	}
	cancel()
	<-done

	other := "other-model"
	if err := op.Respawn(func() { name.Store(&other) }); err != nil {
		t.Fatal(err)
	}
	turn, err := op.Ask(ctx, chat.ID, "two", nil)
	if err != nil || turn.Answer != "answer from other-model" {
		t.Fatalf("after the switch, the chat's spoke still runs the old model: turn %+v err %v", turn, err)
	}
}
