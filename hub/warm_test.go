package hub_test

import (
	"context"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
)

// After every memory upkeep that wrote a summary, the hub has the model
// server read the prompt the next turn will begin with: the warm call's
// prompt is the start of the next turn's, whole — for the planner (its
// user message up to the request) and for the plain spoke (its messages
// but the request) — so the next turn reads only its own request.
func TestTheUpkeepWarmsTheNextTurnsPrompt(t *testing.T) {
	t.Parallel()
	r := hubtest.New(t, hubtest.Config{Script: upkeepScript, Modify: func(o *hub.Options) {
		o.Memory = hub.MemoryOptions{Enabled: true, Every: 1}
	}})
	hub.NoTriageForTest(r.Op)
	chat, _ := r.Op.NewChat(false)
	queries := []string{"Tell me about the sea", "And the tides?", "Why is it blue?"}
	for _, q := range queries {
		if _, err := r.Op.Ask(context.Background(), chat.ID, q, nil); err != nil {
			t.Fatal(err)
		}
		if err := r.Op.FlushMemory(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	reqs := r.Srv.Requests()
	var planWarm, spokeWarm int
	for i, req := range reqs {
		if !hub.IsWarm(&req) {
			continue
		}
		// the next call of the same kind that is no upkeep and no warm
		for _, next := range reqs[i+1:] {
			if hub.IsWarm(&next) || hub.UpkeepTask(&next) != "" || (len(next.Format) > 0) != (len(req.Format) > 0) {
				continue
			}
			if len(req.Format) > 0 {
				planWarm++
				if !strings.HasPrefix(next.Messages[1].Content, req.Messages[1].Content) || !strings.HasSuffix(req.Messages[1].Content, "Request: ") {
					t.Errorf("the planner's warm prompt is not the start of the next plan's:\n%s\n---\n%s", req.Messages[1].Content, next.Messages[1].Content)
				}
			} else {
				spokeWarm++
				if len(next.Messages) != len(req.Messages)+1 {
					t.Errorf("the spoke's warm has %d messages, the next answer %d", len(req.Messages), len(next.Messages))
					break
				}
				for k, m := range req.Messages {
					if next.Messages[k].Content != m.Content || next.Messages[k].Role != m.Role {
						t.Errorf("message %d of the warm differs from the next answer's: %q vs %q", k, m.Content, next.Messages[k].Content)
					}
				}
				if !strings.Contains(req.Messages[1].Content, "The user talks about the sea") {
					t.Errorf("the warm does not hold the new summary: %+v", req.Messages)
				}
			}
			break
		}
	}
	if planWarm < len(queries)-1 || spokeWarm < len(queries)-1 {
		t.Errorf("warms followed by their turn: %d of the planner, %d of the spoke; want %d each", planWarm, spokeWarm, len(queries)-1)
	}
}
