package serve_test

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// forcedCollections is how many collections this process was asked for
// (runtime.GC) and finished.
func forcedCollections() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// The serving process collects its garbage once its last running turn
// has ended, so that the collector does not run during the next turn
// (not while another chat's turn runs, whose calls it would slow:
// TestChatsRunAtOnce).
func TestTheServerCollectsBetweenTurns(t *testing.T) {
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}})
	cfg := served(t, ollamatest.Planned(plan, func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("done") }), "fp")
	a := connect(t, cfg, "fp", nil)

	// One turn, alone: a collection is started before its answer comes
	// back, and runs.
	started, forced := serve.CollectionsStarted(), forcedCollections()
	chat, _ := a.NewChat(false)
	if turn, err := a.Ask(context.Background(), chat.ID, "quick one", nil); err != nil || turn.Answer != "done" {
		t.Fatalf("turn %+v %v", turn, err)
	}
	if got := serve.CollectionsStarted(); got != started+1 {
		t.Fatalf("after a turn alone: %d collections started, want %d", got, started+1)
	}
	for deadline := time.Now().Add(time.Minute); forcedCollections() == forced; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the collection started after the turn never ran")
		}
	}
}
