package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// The schema puts the plan's kind first, so that the model writes it
// first: the properties in that order, and kind required.
func TestThePlanSchemaAsksForTheKindFirst(t *testing.T) {
	b := hub.PlanSchema([]hub.Functionality{{Name: "chat"}, {Name: "clock.now"}})
	var s struct {
		Properties json.RawMessage `json:"properties"`
		Required   []string        `json:"required"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	p := string(s.Properties)
	if k, st := strings.Index(p, `"kind":`), strings.Index(p, `"steps":`); k < 0 || st < 0 || k > st || !strings.Contains(p, `"enum":["chat","apps"]`) {
		t.Fatalf("kind must be the first property, chat or apps: %s", p)
	}
	if len(s.Required) == 0 || s.Required[0] != "kind" {
		t.Fatalf("kind is required, first: %v", s.Required)
	}
}

// A plan whose first tokens say plain chat is acted on at once: the rest
// of the planner's answer is never waited for (here it never comes: the
// planner hangs after its first piece), the turn is answered by the
// vanilla spoke — drafted or not — and the plan says it was decided
// early. Phrased as a model may write it: spaced, fenced.
func TestThePlansFirstTokensDecidePlainChat(t *testing.T) {
	for _, first := range []string{`{"kind":"chat",`, `{ "kind" : "chat" , "steps": [`, "```json\n{\"kind\": \"chat\"", `{"kind":"chat"`} {
		for _, drafted := range []bool{false, true} {
			var planCalls atomic.Int32
			r := hubtest.New(t, hubtest.Config{Modify: func(o *hub.Options) { o.Draft = drafted },
				Script: func(req *api.ChatRequest) ollamatest.Reply {
					if len(req.Format) > 0 {
						planCalls.Add(1)
						return ollamatest.Reply{Chunks: []string{first}, Hang: true}
					}
					return ollamatest.Text(draftAnswer)
				}})
			if drafted {
				hub.SetSideBySideForTest(r.Op, true)
			}
			chat, _ := r.Op.NewChat(false)
			// A bound only for a failure: without the decision the turn
			// waits on the hanging planner for ever.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			var calls int
			turn, err := r.Op.Ask(ctx, chat.ID, "Tell me something nice", func(e hub.Event) {
				if e.Kind == hub.EventAnswer {
					calls = e.Usage.Calls
				}
			})
			cancel()
			if err != nil {
				t.Fatalf("%q (drafted %v): %v", first, drafted, err)
			}
			if turn.Answer != draftAnswer || turn.Plan == nil || !turn.Plan.Early || len(turn.Plan.Steps) != 1 || turn.Plan.Steps[0].App != hub.VanillaApp {
				t.Fatalf("%q (drafted %v): answered by the vanilla spoke, decided early: %q %+v", first, drafted, turn.Answer, turn.Plan)
			}
			if planCalls.Load() != 1 || calls != 2 {
				t.Fatalf("%q (drafted %v): one planner call (not retried), two in all: %d, %d", first, drafted, planCalls.Load(), calls)
			}
		}
	}
}

// A plan whose first tokens say apps withdraws the draft at once, before
// it names any functionality (here it never does: the planner hangs).
func TestThePlansFirstTokensWithdrawTheDraft(t *testing.T) {
	r := hubtest.New(t, hubtest.Config{Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
		Modify: func(o *hub.Options) { o.Draft = true },
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			if len(req.Format) > 0 {
				return ollamatest.Reply{Chunks: []string{`{"kind": "apps", `}, Hang: true}
			}
			rep := ollamatest.Text(draftAnswer)
			rep.Hang = true // the draft goes on until it is given up
			return rep
		}})
	hub.SetSideBySideForTest(r.Op, true)
	chat, _ := r.Op.NewChat(false)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var withdrawn atomic.Bool
	_, err := r.Op.Ask(ctx, chat.ID, "Write a story about a dragon", func(e hub.Event) {
		if e.Kind == hub.EventDraftWithdrawn {
			withdrawn.Store(true)
			cancel() // seen: the rest of the plan is not needed for this test
		}
	})
	if !withdrawn.Load() {
		t.Fatalf("the draft must be withdrawn at the plan's first tokens: %v", err)
	}
}
