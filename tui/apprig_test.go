package tui

import (
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// appRig is hub's apps rig (hub/apps_test.go) with the UI's Prompter as
// the broker's: a real Operator with the demo apps over a scripted model.
type appRig struct {
	srv      *ollamatest.Scripted
	op       *hub.Operator
	broker   *permissions.Broker
	prompter *Prompter
	ollama   *llm.Client
}

func newAppRig(t *testing.T, script ollamatest.Script, rules ...permissions.Rule) *appRig {
	t.Helper()
	return newAppRigWith(t, script, nil, rules...)
}

// newAppRigWith is newAppRig with the hub's options changed by mod first
// (long-term memory on, say).
func newAppRigWith(t *testing.T, script ollamatest.Script, mod func(*hub.Options), rules ...permissions.Rule) *appRig {
	t.Helper()
	p := NewPrompter()
	r := hubtest.New(t, hubtest.Config{Script: script, Rules: rules, Prompter: p, Modify: mod})
	oc, _ := llm.New(llm.Config{Host: r.Srv.Host(), Model: hubtest.Model}, nil)
	return &appRig{srv: r.Srv, op: r.Op, broker: r.Broker, prompter: p, ollama: oc}
}

func (r *appRig) options() Options {
	return Options{Backend: r.op, Ollama: r.ollama, SpokeModel: "m", Theme: "dark", Version: "v0.0.0-test", Prompter: r.prompter}
}

// decisions are the broker's logged requests and decisions, in order.
func (r *appRig) decisions(t *testing.T) []permissions.Entry {
	t.Helper()
	acts, err := r.broker.Actions()
	if err != nil {
		t.Fatal(err)
	}
	var out []permissions.Entry
	for _, a := range acts {
		if a.Note == nil {
			out = append(out, a)
		}
	}
	return out
}

var (
	allowExec   = permissions.Rule{Effect: permissions.EffectAllow, Kind: "exec", Subject: "hub", Where: "test"}
	denyCollab  = permissions.Rule{Effect: permissions.EffectDeny, Kind: "collab", Where: "test"}
	allowData   = permissions.Rule{Effect: permissions.EffectAllow, Kind: "data", Where: "test"}
	mailQuery   = "Summarize the emails in my inbox"
	ridesQuery  = "Compare the fares from the airport to downtown on metro_hail and quick_ride"
	execRequest = permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "mail", Function: "mail.search",
		Detail: "Run mail for: check my mail", Warning: "expected by the plan", Expected: true}
)

// rideBinds are what the planner binds of ridesQuery.
var rideBinds = []map[string]string{{"arg": "from", "value": "airport"}, {"arg": "to", "value": "downtown"}}

// ridesInTurn is the gullible model with the ride steps planned one after
// the other (quick_ride gets metro_hail's result), so the order of events,
// and of what the UI draws, is fixed.
func ridesInTurn() ollamatest.Script {
	g := ollamatest.Gullible()
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{
				{"id": "s1", "functionality": "ride.estimate_fare", "query": ridesQuery, "depends_on": []string{}, "app": "metro_hail", "bind": rideBinds},
				{"id": "s2", "functionality": "ride.estimate_fare", "query": ridesQuery, "depends_on": []string{"s1"}, "app": "quick_ride", "bind": rideBinds},
			}})
		}
		return g(req)
	}
}
