package serve_test

import (
	"context"
	"runtime/metrics"
	"strings"
	"sync"
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
// has ended — not while another chat's turn runs, whose calls it would
// slow — so that the collector does not run during the next turn.
func TestTheServerCollectsBetweenTurns(t *testing.T) {
	release := make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	entered := make(chan string, 4)
	plan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hi", "depends_on": []string{}}}})
	cfg := served(t, ollamatest.Planned(plan, func(req *api.ChatRequest) ollamatest.Reply {
		q := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(q, "hold") {
			select {
			case entered <- q:
			default:
			}
			<-release
		}
		return ollamatest.Text("done")
	}), "fp")
	a := connect(t, cfg, "fp", nil)
	b := connect(t, cfg, "fp", nil)
	t.Cleanup(free) // (after the server's): a failed check must not leave the held turn waiting

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

	// A turn ends while another chat's runs: no collection until that
	// one ends too.
	started = serve.CollectionsStarted()
	held := make(chan error, 1)
	go func() {
		_, err := a.Ask(context.Background(), chat.ID, "hold on", nil)
		held <- err
	}()
	<-entered
	other, _ := b.NewChat(false)
	if turn, err := b.Ask(context.Background(), other.ID, "quick one", nil); err != nil || turn.Answer != "done" {
		t.Fatalf("turn %+v %v", turn, err)
	}
	if got := serve.CollectionsStarted(); got != started {
		t.Fatalf("a turn ended while another ran: %d collections started, want none (%d)", got, started)
	}
	free()
	if err := <-held; err != nil {
		t.Fatal(err)
	}
	if got := serve.CollectionsStarted(); got != started+1 {
		t.Fatalf("after the last turn ended: %d collections started, want %d", got, started+1)
	}
}
