package hub_test

import (
	"context"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// summaries counts the summary calls the server has seen.
func summaries(srv *ollamatest.Scripted) int {
	n := 0
	for _, r := range srv.Requests() {
		if isSummary(&r) {
			n++
		}
	}
	return n
}

func batchRig(t *testing.T, every int, idle time.Duration) *hubtest.Rig {
	t.Helper()
	script := func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case isSummary(req):
			return ollamatest.JSON(map[string]string{"summary": "the user chatted"})
		case isExtract(req):
			return ollamatest.JSON(map[string]any{"entities": []any{}})
		case isPlan(req):
			return chatPlan
		}
		return ollamatest.Text("hi")
	}
	return hubtest.New(t, hubtest.Config{Script: script, Modify: func(o *hub.Options) {
		o.Memory = hub.MemoryOptions{Enabled: true, Every: every, Idle: idle}
	}})
}

// The memory upkeep runs in batches: a chat's summary is brought up to
// date once Every of its turns are new, and the turn that completes a
// batch reports the background calls it brings due.
func TestMemoryUpkeepRunsInBatches(t *testing.T) {
	t.Parallel()
	r := batchRig(t, 3, 0)
	chat, _ := r.Op.NewChat(false)
	var calls []int
	for _, q := range []string{"one", "two", "three"} {
		var usage int
		_, err := r.Op.Ask(context.Background(), chat.ID, q, func(e hub.Event) {
			if e.Kind == hub.EventAnswer {
				usage = e.Usage.BackgroundCalls
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		calls = append(calls, usage)
		if len(calls) < 3 {
			time.Sleep(100 * time.Millisecond) // the worker would have run by now
			if n := summaries(r.Srv); n != 0 {
				t.Fatalf("after %d turns (a batch is 3) the upkeep ran %d summaries", len(calls), n)
			}
		}
	}
	if calls[0] != 0 || calls[1] != 0 || calls[2] != 4 {
		t.Fatalf("background calls reported per turn: %v, want [0 0 4] (a summary and an extraction for the hub and for the chat's spoke)", calls)
	}
	// The upkeep's four calls, and the prompts it rewrote read ahead
	// after it (warm.go: counted as the idle work they are, each one a
	// request the server sees).
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if n := r.Op.BackgroundCalls(); n >= 4 && n == 4+int64(warms(r.Srv)) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if summaries(r.Srv) != 2 {
		t.Fatalf("the third turn should bring one summary of the three per owner, saw %d", summaries(r.Srv))
	}
	if got, w := r.Op.BackgroundCalls(), warms(r.Srv); got != 4+int64(w) || w > 2 {
		t.Fatalf("the operator counts %d background calls, want 4 and the %d read-aheads (at most the planner's and the spoke's)", got, w)
	}
}

// warms counts the requests that only read a prompt ahead.
func warms(srv *ollamatest.Scripted) int {
	n := 0
	for _, r := range srv.Requests() {
		if hub.IsWarm(&r) {
			n++
		}
	}
	return n
}

// A chat that goes idle has its pending upkeep run whatever the count.
func TestMemoryUpkeepRunsWhenAChatGoesIdle(t *testing.T) {
	t.Parallel()
	r := batchRig(t, 10, 50*time.Millisecond)
	chat, _ := r.Op.NewChat(false)
	if _, err := r.Op.Ask(context.Background(), chat.ID, "hello", nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for summaries(r.Srv) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if summaries(r.Srv) == 0 {
		t.Fatal("an idle chat's pending upkeep never ran")
	}
}
