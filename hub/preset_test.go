package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/apps/clock"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// presetRig runs one request on a fake app "alpha" whose function the
// case defines, with a plan the case writes; the spoke's model, when it
// is asked for a call, makes modelCall. It reports whether the spoke's
// model was asked for the call (a request of alpha's whose last message
// is the user's, not a tool's result), the arguments alpha ran with, and
// the dialogs.
type presetCase struct {
	name     string
	query    string
	fns      []apps.Function
	provides map[string]string
	steps    []map[string]any
	// modelCall is what alpha's model calls when it is asked.
	modelCall map[string]any
	// preset: the call is made without asking the model, with want.
	preset bool
	want   map[string]any
}

type presetOutcome struct {
	asked   bool
	ran     []map[string]any
	dialogs []permissions.Request
	spoke   []api.ChatRequest
	calls   int
	answer  string
}

var presetNow = time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC)

func runPreset(t *testing.T, c presetCase, answer permissions.Answer) presetOutcome {
	t.Helper()
	alpha := &fakeApp{m: apps.Manifest{Name: "alpha", Description: "alpha app", Functions: c.fns, Provides: c.provides},
		fn: func(name string, args map[string]any) (any, error) {
			switch name {
			case "now":
				return map[string]string{"time": "2026-12-05T09:30", "timezone": "UTC"}, nil
			case "add":
				return map[string]string{"date": "2026-12-09"}, nil
			case "send":
				return map[string]string{"id": "m1"}, nil
			}
			return map[string]string{"result": "391"}, nil
		}}
	prompter := permissionstest.NewPrompter(answer)
	r := hubtest.New(t, hubtest.Config{
		Apps: []apps.App{alpha}, Prompter: prompter, Rules: allowExec, HubModel: hubModel, SpokeModelPrefix: "m-",
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			switch {
			case isPlan(req):
				return ollamatest.JSON(map[string]any{"kind": "apps", "steps": c.steps})
			case req.Model == "m-alpha" && len(req.Tools) > 0 && lastRole(req, "tool") == "":
				return call(c.modelCall["name"].(string), c.modelCall["args"].(map[string]any))
			}
			return ollamatest.Text("alpha says 391")
		},
		Modify: func(o *hub.Options) { o.Now = func() time.Time { return presetNow } },
	})
	chat, _ := r.Op.NewChat(false)
	var out presetOutcome
	turn, err := r.Op.Ask(context.Background(), chat.ID, c.query, func(e hub.Event) {
		if e.Kind == hub.EventAnswer {
			out.calls = e.Usage.Calls
		}
	})
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	out.answer = turn.Answer
	for _, req := range r.Srv.Requests() {
		if req.Model != "m-alpha" || len(req.Tools) == 0 {
			continue
		}
		out.spoke = append(out.spoke, req)
		if req.Messages[len(req.Messages)-1].Role == "user" {
			out.asked = true
		}
	}
	alpha.mu.Lock()
	out.ran = append(out.ran, alpha.calls...)
	alpha.mu.Unlock()
	out.dialogs = prompter.Calls()
	return out
}

const dateAddParams = `{"type":"object","properties":{"date":{"type":"string","format":"date"},"days":{"type":"integer"}},"required":["date"]}`

func dateAdd() apps.Function {
	return fn("add", dateAddParams, `{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`, apps.EffectRead)
}

// A call whose every argument the plan binds, to one value the function
// takes, is made by the spoke without asking its model — a relative date
// as what it means, a number as a number, an earlier step's field, no
// argument at all — and one that leaves the model anything to decide
// (an argument open, two values, a value the schema refuses, a binding
// of something the function does not take) is the model's to make.
func TestACallThePlanBindsWholeAsksNoModel(t *testing.T) {
	t.Parallel()
	bind := func(kv ...string) []map[string]string {
		var out []map[string]string
		for i := 0; i < len(kv); i += 2 {
			out = append(out, map[string]string{"arg": kv[i], "value": kv[i+1]})
		}
		return out
	}
	provides := map[string]string{"clock.date_add": "add"}
	modelCall := map[string]any{"name": "add", "args": map[string]any{"date": "2026-12-06", "days": 3}}
	cases := []presetCase{
		{name: "a relative date and a number", query: "What is the date 3 days after tomorrow?",
			steps:  []map[string]any{{"functionality": "clock.date_add", "bind": bind("date", "tomorrow", "days", "3")}},
			preset: true, want: map[string]any{"date": "2026-12-06", "days": float64(3)}},
		{name: "literals, with the plan's every word", query: "What is the date 12 days after 2026-12-24?",
			steps:  []map[string]any{{"id": "s1", "functionality": "clock.date_add", "query": "12 days after 2026-12-24", "depends_on": []string{}, "bind": bind("date", "2026-12-24", "days", "12")}},
			preset: true, want: map[string]any{"date": "2026-12-24", "days": float64(12)}},
		{name: "an argument left open", query: "What is the date 3 days after tomorrow?",
			steps: []map[string]any{{"functionality": "clock.date_add", "bind": bind("date", "tomorrow")}}},
		{name: "two values for one argument", query: "What is the date 3 or 4 days after 2026-12-24?",
			steps: []map[string]any{{"functionality": "clock.date_add", "bind": bind("date", "2026-12-24", "days", "3", "days", "4")}}},
		{name: "a value the schema refuses", query: "What is the date three days after 2026-12-24?",
			steps: []map[string]any{{"functionality": "clock.date_add", "bind": bind("date", "2026-12-24", "days", "three")}}},
		{name: "a binding of what the function does not take", query: "What is the date 3 weeks after 2026-12-24?",
			steps: []map[string]any{{"functionality": "clock.date_add", "bind": bind("date", "2026-12-24", "days", "3", "weeks", "3")}}},
		{name: "a relative word for an argument that is not a date", query: "What is the date 3 days after tomorrow?",
			fns:   []apps.Function{fn("add", `{"type":"object","properties":{"date":{"type":"string"},"days":{"type":"integer"}}}`, `{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`, apps.EffectRead)},
			steps: []map[string]any{{"functionality": "clock.date_add", "bind": bind("date", "tomorrow", "days", "3")}}},
		{name: "a schema open to any argument", query: "What is the date 3 days after 2026-12-24?",
			fns:   []apps.Function{fn("add", `{"type":"object"}`, `{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`, apps.EffectRead)},
			steps: []map[string]any{{"functionality": "clock.date_add"}}},
		{name: "a schema composed of others", query: "What is the date 3 days after 2026-12-24?",
			fns:   []apps.Function{fn("add", `{"type":"object","properties":{"date":{"type":"string"}},"anyOf":[{"required":["date"]},{"required":["days"]}]}`, `{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`, apps.EffectRead)},
			steps: []map[string]any{{"functionality": "clock.date_add", "bind": bind("date", "2026-12-24")}}},
		{name: "an earlier step's field", query: "What is the date 4 days from now?",
			fns:      []apps.Function{fn("now", `{"type":"object","properties":{}}`, `{"type":"object","properties":{"time":{"type":"string"},"timezone":{"type":"string"}},"required":["time","timezone"]}`, apps.EffectRead), dateAdd()},
			provides: map[string]string{"clock.now": "now", "clock.date_add": "add"},
			steps: []map[string]any{{"functionality": "clock.now"},
				{"functionality": "clock.date_add", "depends_on": []string{"s1"}, "bind": []map[string]string{{"arg": "date", "from": "s1.time"}, {"arg": "days", "value": "4"}}}},
			preset: true, want: map[string]any{"date": "2026-12-05T09:30", "days": float64(4)}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.fns == nil {
				c.fns = []apps.Function{dateAdd()}
			}
			if c.provides == nil {
				c.provides = provides
			}
			c.modelCall = modelCall
			out := runPreset(t, c, permissions.AnswerOnce)
			if out.asked == c.preset {
				t.Fatalf("the spoke's model asked for the call: %v, want %v (%d requests)", out.asked, !c.preset, len(out.spoke))
			}
			if !c.preset {
				return
			}
			got, _ := json.Marshal(out.ran[len(out.ran)-1]["args"])
			want, _ := json.Marshal(c.want)
			if string(got) != string(want) {
				t.Fatalf("alpha ran with %s, want %s", got, want)
			}
			// The model that writes the answer reads the call as its own.
			if len(out.spoke) > 0 {
				req := out.spoke[0]
				var made bool
				for _, m := range req.Messages {
					for _, tc := range m.ToolCalls {
						made = made || (m.Role == "assistant" && tc.Function.Name == "add")
					}
				}
				if !made || lastRole(&req, "tool") == "" {
					t.Fatalf("the answer's request must carry the call and its result: %+v", req.Messages)
				}
			}
		})
	}
}

// The call the plan binds whole costs no model call: one app is the
// planner and the answer, as many as the plain model's tool call and
// answer; and it passes the same gate — an irreversible one asks every
// time with its arguments, and a refusal is said, not run.
func TestACallThePlanBindsWholePassesTheGate(t *testing.T) {
	t.Parallel()
	send := fn("send", `{"type":"object","properties":{"to":{"type":"string"}},"required":["to"]}`, `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`, apps.EffectIrreversible)
	c := presetCase{name: "send", query: "Email bob@example.com that I am late",
		fns: []apps.Function{send}, provides: map[string]string{"mail.send": "send"},
		steps:     []map[string]any{{"functionality": "mail.send", "bind": []map[string]string{{"arg": "to", "value": "bob@example.com"}}}},
		modelCall: map[string]any{"name": "send", "args": map[string]any{"to": "bob@example.com"}}}
	for _, answer := range []permissions.Answer{permissions.AnswerOnce, permissions.AnswerDeny} {
		out := runPreset(t, c, answer)
		if out.asked {
			t.Fatal("the spoke's model was asked for a call the plan bound whole")
		}
		if out.calls != 2 {
			t.Errorf("%s: %d model calls, want 2 (the planner, the answer)", answer, out.calls)
		}
		if len(out.dialogs) != 1 || out.dialogs[0].Kind != permissions.KindIrreversible || !strings.Contains(string(out.dialogs[0].Args), "bob@example.com") {
			t.Fatalf("%s: an irreversible call asks, with its arguments: %+v", answer, out.dialogs)
		}
		if ran := len(out.ran) > 0; ran != (answer != permissions.AnswerDeny) {
			t.Fatalf("%s: alpha ran %d calls", answer, len(out.ran))
		}
		if answer == permissions.AnswerDeny && !strings.Contains(out.answer, "did not run") {
			t.Fatalf("a refused call is said: %q", out.answer)
		}
	}
}

// A plan written with only what it needs — no ids (s1, s2, … by place),
// no empty depends_on, no query — runs; an app step of several that the
// plan gave no words is asked in the hub's words, never with the whole
// request, whose other parts are for the other app.
func TestALeanPlanRunsAndKeepsEachAppToItsPart(t *testing.T) {
	t.Parallel()
	const query = "What time is it in Tokyo, and what is 17 * 23?"
	r := hubtest.New(t, hubtest.Config{Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
		HubModel: hubModel, SpokeModelPrefix: "m-", Apps: []apps.App{clock.New(func() time.Time { return presetNow }), calc.New()},
		Script: func(req *api.ChatRequest) ollamatest.Reply {
			switch {
			case isPlan(req):
				// Nothing bound: each spoke's model is asked for its call.
				return ollamatest.JSON(map[string]any{"kind": "apps", "steps": []map[string]any{
					{"functionality": "clock.now"}, {"functionality": "calc.evaluate"}}})
			case req.Model == "m-clock" && lastRole(req, "tool") == "":
				return call("now", map[string]any{"timezone": "Asia/Tokyo"})
			case req.Model == "m-calc" && lastRole(req, "tool") == "":
				return call("evaluate", map[string]any{"expression": "17 * 23"})
			}
			return ollamatest.Text("It is late in Tokyo; 17 * 23 is 391.")
		}})
	chat, _ := r.Op.NewChat(false)
	var plan *hub.Plan
	turn, err := r.Op.Ask(context.Background(), chat.ID, query, func(e hub.Event) {
		if e.Kind == hub.EventPlan {
			plan = e.Plan
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if plan == nil || len(plan.Steps) != 2 || plan.Steps[0].ID != "s1" || plan.Steps[1].ID != "s2" || plan.Fallback || plan.Retried {
		t.Fatalf("plan %+v", plan)
	}
	if !strings.Contains(turn.Answer, "391") {
		t.Fatalf("answer %q", turn.Answer)
	}
	seen := map[string]bool{}
	for _, req := range r.Srv.Requests() {
		if req.Model != "m-clock" && req.Model != "m-calc" {
			continue
		}
		seen[req.Model] = true
		p := promptOf(req)
		if strings.Contains(p, query) {
			t.Errorf("%s was asked with the whole request:\n%s", req.Model, p)
		}
		other := map[string]string{"m-clock": "17 * 23", "m-calc": "Tokyo"}[req.Model]
		if lastRole(&req, "tool") == "" && strings.Contains(p, other) {
			t.Errorf("%s read %q, the other app's part:\n%s", req.Model, other, p)
		}
	}
	if !seen["m-clock"] || !seen["m-calc"] {
		t.Fatalf("both spokes' models are asked: %v", seen)
	}
}

// A field of an earlier step's result reaches a call the plan binds only
// as the user let it: when the data dialog is refused (the exec allowed
// by a rule), the step runs without it and no call carries it — the
// spoke's model is asked, and what it writes is judged as its own.
func TestACallThePlanBindsCarriesOnlySharedData(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-2026-12-05"
	now := fn("now", `{"type":"object","properties":{}}`, `{"type":"object","properties":{"time":{"type":"string"},"timezone":{"type":"string"}},"required":["time","timezone"]}`, apps.EffectRead)
	alpha := &fakeApp{m: apps.Manifest{Name: "alpha", Description: "alpha app", Functions: []apps.Function{now}, Provides: map[string]string{"clock.now": "now"}},
		fn: func(string, map[string]any) (any, error) {
			return map[string]string{"time": secret, "timezone": "UTC"}, nil
		}}
	add := fn("add", `{"type":"object","properties":{"date":{"type":"string"},"days":{"type":"integer"}}}`, `{"type":"object","properties":{"date":{"type":"string"}},"required":["date"]}`, apps.EffectRead)
	beta := &fakeApp{m: apps.Manifest{Name: "beta", Description: "beta app", Functions: []apps.Function{add}, Provides: map[string]string{"clock.date_add": "add"}},
		fn: func(string, map[string]any) (any, error) { return map[string]string{"date": "2026-12-09"}, nil }}
	for _, answer := range []permissions.Answer{permissions.AnswerDeny, permissions.AnswerOnce} {
		prompter := permissionstest.NewPrompter(answer)
		r := hubtest.New(t, hubtest.Config{Apps: []apps.App{alpha, beta}, Prompter: prompter, Rules: allowExec, HubModel: hubModel, SpokeModelPrefix: "m-",
			Script: func(req *api.ChatRequest) ollamatest.Reply {
				switch {
				case isPlan(req):
					return ollamatest.JSON(map[string]any{"kind": "apps", "steps": []map[string]any{
						{"functionality": "clock.now", "app": "alpha"},
						{"functionality": "clock.date_add", "app": "beta", "depends_on": []string{"s1"}, "bind": []map[string]string{{"arg": "date", "from": "s1.time"}, {"arg": "days", "value": "4"}}}}})
				case req.Model == "m-beta" && lastRole(req, "tool") == "":
					return call("add", map[string]any{"date": "2026-12-01", "days": 4})
				}
				return ollamatest.Text("done")
			},
			Modify: func(o *hub.Options) { o.Now = func() time.Time { return presetNow } }})
		chat, _ := r.Op.NewChat(false)
		// The apps' names are words the hub does not read (judge.Reading):
		// they stand in a sentence of their own, apart from the value.
		if _, err := r.Op.Ask(context.Background(), chat.ID, "Use alpha and beta. What is the date 4 days from now?", nil); err != nil {
			t.Fatal(err)
		}
		beta.mu.Lock()
		ran, _ := json.Marshal(beta.calls)
		beta.calls = nil
		beta.mu.Unlock()
		asked := false
		for _, req := range r.Srv.Requests() {
			asked = asked || (req.Model == "m-beta" && len(req.Tools) > 0 && req.Messages[len(req.Messages)-1].Role == "user")
		}
		dialogs := 0
		for _, d := range prompter.Calls() {
			if d.Kind == permissions.KindData {
				dialogs++
			}
		}
		switch answer {
		case permissions.AnswerDeny:
			if strings.Contains(string(ran), secret) || !asked || dialogs == 0 {
				t.Fatalf("refused: beta ran %s (its model asked: %v, data dialogs %d)", ran, asked, dialogs)
			}
		default:
			if !strings.Contains(string(ran), secret) || asked {
				t.Fatalf("shared: beta ran %s, its model asked: %v", ran, asked)
			}
		}
	}
}
