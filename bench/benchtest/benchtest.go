// Package benchtest is the bench's fake model, for tests and benchmarks
// only: a scripted model that plans each task of a suite as its reference
// solution does and makes its reference calls (FakeSolver), and the plan
// shapes the latency benchmarks run (Shapes).
package benchtest

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/bench"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// FakeSolver is a scripted model for the bench's tests: it plans each
// task of the suite as its reference solution does and makes the
// reference calls in each spoke (or all of them, as app__function, in the
// single-context baseline). With obey, it also makes the calls of every
// injection it reads — in what an app returned, in shared data — as its
// own tool, as app__function, or through request_functionality: a model
// that does what it is told wherever it reads it. With wrong, it sends
// email to the wrong address and writes the wrong file (tasks built to
// fail their checks).
func FakeSolver(s bench.Suite, obey bool) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		c := readCtx(req)
		task, ok := c.task(s)
		switch {
		case hub.IsTriage(req):
			// The hub's triage: whether the request needs a
			// functionality, as the reference plan says.
			kind := "chat"
			for _, st := range task.Plan {
				if ok && st.Functionality != "chat" {
					kind = "apps"
				}
			}
			return ollamatest.JSON(kind)
		case len(req.Format) > 0 && strings.Contains(string(req.Format), `"steps"`):
			// The kind first, as the schema asks.
			if !ok {
				return ollamatest.JSON(orderedPlan("chat", []any{map[string]any{"id": "s1", "functionality": "chat", "query": "chat", "depends_on": []string{}}}))
			}
			kind := "chat"
			for _, st := range task.Plan {
				if st.Functionality != "chat" {
					kind = "apps"
				}
			}
			return ollamatest.JSON(orderedPlan(kind, lean(task.Plan)))
		case len(req.Format) > 0:
			return ollamatest.JSON(map[string]any{})
		case len(req.Tools) > 0:
			// The task's own calls, in this spoke's app (all of them in
			// the baseline); then what an injection asks, through any
			// way there is.
			if ok {
				for _, call := range task.Calls {
					if tc, ok := c.toolCall(call, false); ok {
						return ollamatest.Reply{ToolCalls: []api.ToolCall{tc}}
					}
				}
			}
			if obey {
				for _, inj := range s.Injections {
					if !strings.Contains(c.all, marker(inj.Text)) {
						continue
					}
					for _, call := range inj.Calls {
						if tc, ok := c.toolCall(call, true); ok {
							return ollamatest.Reply{ToolCalls: []api.ToolCall{tc}}
						}
					}
				}
			}
		}
		return ollamatest.Text(c.answer())
	}
}

// marker is the head of an injection's text, as it reads in JSON too.
func marker(text string) string {
	if i := strings.IndexAny(text, `"\`); i > 0 {
		text = text[:i]
	}
	return strings.TrimSpace(text)
}

type solverCtx struct {
	app     string // the spoke's app, "" for none
	queries []string
	all     string          // everything it reads
	results []string        // tool results, as read
	tools   map[string]bool // offered
	done    map[string]bool
	bound   map[string]any // arguments the plan gives
}

func readCtx(req *api.ChatRequest) *solverCtx {
	c := &solverCtx{app: ollamatest.SpokeApp(req), tools: map[string]bool{}, done: map[string]bool{}, bound: map[string]any{}}
	var all strings.Builder
	for _, t := range req.Tools {
		c.tools[t.Function.Name] = true
	}
	for _, m := range req.Messages {
		all.WriteString(m.Content + "\n")
		switch m.Role {
		case "user":
			c.queries = append(c.queries, m.Content)
		case "assistant":
			for _, tc := range m.ToolCalls {
				c.done[ollamatest.CallKey(tc.Function.Name, tc.Function.Arguments.ToMap())] = true
			}
		case "tool":
			c.results = append(c.results, m.Content)
		}
	}
	c.all = all.String()
	if len(c.queries) > 0 {
		c.bound = ollamatest.PlanArgs(c.queries[len(c.queries)-1])
	}
	return c
}

// task is the suite's task this request is about: by its query, or by
// one of its plan's step queries (what a spoke is given).
func (c *solverCtx) task(s bench.Suite) (bench.Task, bool) {
	for i := len(c.queries) - 1; i >= 0; i-- {
		q := c.queries[i]
		for _, t := range s.Tasks {
			if strings.Contains(q, t.Query) {
				return t, true
			}
		}
		for _, t := range s.Tasks {
			for _, st := range t.Plan {
				if strings.HasPrefix(q, st.Query) {
					return t, true
				}
			}
		}
	}
	return bench.Task{}, false
}

// toolCall is call as a tool offered here, if it is and was not made yet;
// ask lets it go through request_functionality when the app is another.
func (c *solverCtx) toolCall(call bench.Call, ask bool) (api.ToolCall, bool) {
	args := map[string]any{}
	for k, v := range call.Args {
		if f, ok := v.(string); ok && strings.HasPrefix(f, "$") {
			v = c.field(f[1:])
		}
		args[k] = v
	}
	var name string
	switch {
	case c.tools[call.App+"__"+call.Function]:
		name = call.App + "__" + call.Function
	case c.app == call.App && c.tools[call.Function]:
		name = call.Function
		// The arguments the plan gives, as they are.
		for k, v := range c.bound {
			if _, ok := args[k]; ok {
				args[k] = v
			}
		}
	case ask && c.app != call.App && c.tools["request_functionality"]:
		name = "request_functionality"
		args = map[string]any{"functionality": call.App + "." + call.Function, "arguments": args}
	default:
		return api.ToolCall{}, false
	}
	if c.done[ollamatest.CallKey(name, args)] {
		return api.ToolCall{}, false
	}
	a := api.NewToolCallFunctionArguments()
	keys := make([]string, 0, len(args))
	for k := range args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		a.Set(k, args[k])
	}
	return api.ToolCall{Function: api.ToolCallFunction{Name: name, Arguments: a}}, true
}

// field is a field of the results it read, the latest first.
func (c *solverCtx) field(name string) any {
	for i := len(c.results) - 1; i >= 0; i-- {
		var v map[string]any
		if json.Unmarshal([]byte(c.results[i]), &v) == nil {
			if f, ok := v[name]; ok {
				return f
			}
		}
	}
	return ""
}

// answer says what it read: the tool results and the data shared with it.
//
// It says the values it read — each tool result's, or each step's value
// in the data a synthesis reads — and nothing of their wrapping, so that
// a baseline and a synthesis that read the same values write answers of
// the same length.
func (c *solverCtx) answer() string {
	var parts []string
	for _, r := range c.results {
		var v any
		if json.Unmarshal([]byte(r), &v) == nil {
			parts = append(parts, Leaves(v)...)
		}
	}
	if len(c.queries) > 0 {
		if _, block, ok := strings.Cut(c.queries[len(c.queries)-1], "```json\n"); ok {
			block, _, _ = strings.Cut(block, "\n```")
			var steps []map[string]any
			if json.Unmarshal([]byte(block), &steps) == nil {
				for _, st := range steps {
					parts = append(parts, Leaves(st["value"])...)
				}
			} else {
				parts = append(parts, block)
			}
		}
	}
	if len(parts) == 0 {
		return "The sea is wide and grey,\nit keeps the light all day."
	}
	return fmt.Sprintf("Here is what I found: %s", strings.Join(parts, " "))
}

// Leaves are the scalar values in v, in a stable order.
func Leaves(v any) []string {
	var out []string
	judge.WalkLeaves(v, "", func(_, _ string, leaf any) {
		if leaf != nil {
			out = append(out, fmt.Sprint(leaf))
		}
	})
	return out
}

// leanStep is a step as a model that follows the planner's prompt and
// its grammar writes it: the functionality first (the one property
// required), then only what the plan needs.
type leanStep struct {
	Functionality string              `json:"functionality"`
	App           string              `json:"app,omitempty"`
	Bind          []map[string]string `json:"bind,omitempty"`
	DependsOn     []string            `json:"depends_on,omitempty"`
	ID            string              `json:"id,omitempty"`
	Query         string              `json:"query,omitempty"`
}

// lean writes a reference plan so: ids by position, no empty depends_on,
// no query for a lone step (it answers the user's own words).
func lean(steps []bench.Step) []leanStep {
	out := make([]leanStep, len(steps))
	for i, s := range steps {
		out[i] = leanStep{Functionality: s.Functionality, App: s.App, Bind: s.Bind, DependsOn: s.DependsOn}
		if s.ID != fmt.Sprintf("s%d", i+1) {
			out[i].ID = s.ID
		}
		if len(steps) > 1 {
			out[i].Query = s.Query
		}
	}
	return out
}

// orderedPlan is a plan with its kind first (struct fields marshal in
// order).
func orderedPlan(kind string, steps any) any {
	return struct {
		Kind  string `json:"kind"`
		Steps any    `json:"steps"`
	}{kind, steps}
}

// shapes are requests of each plan shape, with their reference solutions.
func Shapes() bench.Suite {
	fare := strconv.FormatFloat(demo.MetroHailFare("airport", "downtown"), 'f', -1, 64)
	base := bench.Builtin()
	pick := func(id string) bench.Task {
		for _, t := range base.Tasks {
			if t.ID == id {
				return t
			}
		}
		panic(id)
	}
	chat, calc, chain := pick("chat"), pick("calc"), pick("offer-to-bob")
	chat.ID, calc.ID, chain.ID = "chat", "one app", "two steps, one after the other + synthesis"
	return bench.Suite{Env: base.Env, Tasks: []bench.Task{
		chat,
		calc,
		{ID: "two functions + synthesis", Query: "What time is it in Tokyo, and what is 17 * 23?",
			Check: func(s bench.State) error {
				if !strings.Contains(s.Answer, "391") {
					return fmt.Errorf("no 391 in %q", s.Answer)
				}
				return nil
			},
			Plan: []bench.Step{
				{ID: "s1", Functionality: "clock.now", Query: "the time in Tokyo", DependsOn: []string{}, Bind: []map[string]string{{"arg": "timezone", "value": "Tokyo"}}},
				{ID: "s2", Functionality: "calc.evaluate", Query: "17 * 23", DependsOn: []string{}, Bind: []map[string]string{{"arg": "expression", "value": "17 * 23"}}}},
			Calls: []bench.Call{{App: "clock", Function: "now", Args: map[string]any{"timezone": "Tokyo"}}, {App: "calc", Function: "evaluate", Args: map[string]any{"expression": "17 * 23"}}}},
		{ID: "one function on two apps + synthesis", Query: "Compare the fares from the airport to downtown on metro_hail and quick_ride",
			Check: func(s bench.State) error {
				if !strings.Contains(s.Answer, fare) {
					return fmt.Errorf("no %s in %q", fare, s.Answer)
				}
				return nil
			},
			Plan: []bench.Step{
				{ID: "s1", Functionality: "ride.estimate_fare", App: "metro_hail", Query: "fare airport to downtown", DependsOn: []string{}, Bind: []map[string]string{{"arg": "from", "value": "airport"}, {"arg": "to", "value": "downtown"}}},
				{ID: "s2", Functionality: "ride.estimate_fare", App: "quick_ride", Query: "fare airport to downtown", DependsOn: []string{}, Bind: []map[string]string{{"arg": "from", "value": "airport"}, {"arg": "to", "value": "downtown"}}}},
			Calls: []bench.Call{{App: "metro_hail", Function: "estimate_fare", Args: map[string]any{"from": "airport", "to": "downtown"}}, {App: "quick_ride", Function: "estimate_fare", Args: map[string]any{"from": "airport", "to": "downtown"}}}},
		chain,
	}}
}
