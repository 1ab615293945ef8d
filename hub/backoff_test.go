package hub_test

import (
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// A summary that fails is not tried again on the next turn: the upkeep
// backs off, and the turn's usage counts no upkeep call for it.
func TestAFailingSummaryBacksOff(t *testing.T) {
	t.Parallel()
	var summaries atomic.Int32
	r := newMemRig(t, memRigOpts{script: func(req *api.ChatRequest) ollamatest.Reply {
		switch {
		case isSummary(req):
			summaries.Add(1)
			return ollamatest.Reply{Status: 500, Error: "the model cannot write a summary"}
		case isExtract(req):
			return ollamatest.JSON(map[string]any{"entities": []map[string]string{}})
		case isPlan(req):
			return chatPlan
		}
		return ollamatest.Text("hello")
	}})
	chat, _ := r.op.NewChat(false)
	usageOf := func(evs []hub.Event) int {
		for _, e := range evs {
			if e.Kind == hub.EventAnswer {
				return e.Usage.BackgroundCalls
			}
		}
		return -1
	}
	_, evs := r.ask(t, chat.ID, "hello there")
	r.flush(t)
	first := summaries.Load()
	if first == 0 || usageOf(evs) == 0 {
		t.Fatalf("the first turn's upkeep must try its summaries: %d tried, usage %d", first, usageOf(evs))
	}
	for i := range 3 {
		_, evs = r.ask(t, chat.ID, "and again")
		r.flush(t)
		if n := summaries.Load(); n != first {
			t.Fatalf("turn %d tried the failed summaries again: %d summary calls, %d after the first turn", i+2, n, first)
		}
		if u := usageOf(evs); u != 0 {
			t.Fatalf("turn %d counts %d upkeep calls while it backs off", i+2, u)
		}
	}
}
