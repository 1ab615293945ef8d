package serve_test

import (
	"context"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// BenchmarkRequest times what a client of the serving process pays over
// calling the engine in process: a whole turn (plan and answer from a
// scripted Ollama that answers at once, so that bulkhead's own work is
// all there is to time), and a call that makes no model call (the chat
// list). "direct" calls the engine, "client" goes through the socket;
// the two run in one process, against one engine:
//
//	go test -run XXX -bench Request -count 8 ./serve | benchstat -col /via -
func BenchmarkRequest(b *testing.B) {
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}})
	cfg, eng := servedEngine(b, ollamatest.Planned(plan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Chunks: []string{"one ", "two ", "three"}}
	}), "fp")
	c := connect(b, cfg, "fp", nil)
	type backend interface {
		NewChat(bool) (hub.Chat, error)
		Chats() ([]hub.Chat, error)
		AskWith(context.Context, string, string, hub.AskOptions, func(hub.Event)) (hub.Turn, error)
	}
	for _, via := range []struct {
		name string
		b    backend
	}{{"direct", eng.Hub}, {"client", c}} {
		b.Run("op=turn/via="+via.name, func(b *testing.B) {
			chat, err := via.b.NewChat(false)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := via.b.AskWith(context.Background(), chat.ID, "hello", hub.AskOptions{}, func(hub.Event) {}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("op=chats/via="+via.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := via.b.Chats(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
