package engine_test

import (
	"context"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// The engine's model clients let the hub seat an app turn (hub/seat.go)
// when the hub and the spokes share a model on one server, and not when
// the spokes have a model of their own: the seat's request goes to the
// hub's model, the preamble alone, one token to write.
func TestTheEngineSeatsWhereTheSpokesShareThePlannersModel(t *testing.T) {
	t.Parallel()
	plan := `{"kind":"apps","steps":[{"functionality":"clock.now","bind":[{"arg":"zone","value":"UTC"}]}]}`
	for _, spokeModel := range []string{"m", "m2"} {
		srv := ollamatest.NewScripted(t, ollamatest.Planned(ollamatest.Reply{Chunks: []string{plan[:17], plan[17:]}},
			func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("It is noon.") }), "m", "m2")
		srv.SetCapabilities("m", "completion", "tools")
		srv.SetCapabilities("m2", "completion", "tools")
		cfg := config.Config{DataDir: t.TempDir(), Ollama: config.Ollama{Host: srv.Host()}, Draft: true,
			Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: spokeModel, History: 4}}
		eng, err := engine.Open(context.Background(), cfg, engine.Options{})
		if err != nil {
			t.Fatal(err)
		}
		chat, _ := eng.Hub.NewChat(false)
		turn, err := eng.Hub.Ask(context.Background(), chat.ID, "What time is it in UTC?", nil)
		if err != nil {
			t.Fatal(err)
		}
		eng.Close()
		seats := 0
		for _, req := range srv.Requests() {
			n, _ := req.Options["num_predict"].(float64)
			if len(req.Messages) == 1 && n == 1 {
				seats++
				if req.Model != "m" || req.Messages[0].Content != hub.SeatPrompt || len(req.Tools) > 0 {
					t.Errorf("a seat went to %s with %d tools: %q", req.Model, len(req.Tools), req.Messages[0].Content)
				}
			}
		}
		if want := map[string]int{"m": 1, "m2": 0}[spokeModel]; seats != want || turn.Usage.BackgroundCalls < want {
			t.Errorf("spokes on %s: %d seats, %d background calls reported; want %d seat", spokeModel, seats, turn.Usage.BackgroundCalls, want)
		}
	}
}
