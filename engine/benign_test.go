package engine_test

// The benign-task suite: everyday requests over the built-in apps (and
// one demo app), counting the dialogs each puts to the user with the
// defaults (no rules) and with the documented starter rules
// (docs/starter-rules.yaml). Targets: at most one dialog per app per turn
// with the defaults; none for reads under the starter rules. The table is
// in the log: go test ./engine -run TestBenignTasks -v.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/apps/clock"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/apps/notes"
	"github.com/bulkhead-dev/bulkhead/apps/shell"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// benignCall is one call a helpful model makes in an app's spoke.
type benignCall struct {
	fn   string
	args map[string]any
}

type benignTask struct {
	query string
	reads bool // only reads: no dialog under the starter rules
	demo  bool // a demo app, which the starter rules do not cover
	plan  []map[string]any
	calls map[string][]benignCall // by app
	// crush and claude are what those assistants would prompt for the
	// same work, by their documented defaults ("" where nothing compares).
	crush, claude string
}

func bstep(id, fn, query string, deps ...string) map[string]any {
	if deps == nil {
		deps = []string{}
	}
	return map[string]any{"id": id, "functionality": fn, "query": query, "depends_on": deps}
}

func benignTasks() []benignTask {
	return []benignTask{
		{query: "What time is it in Tokyo?", reads: true,
			plan:  []map[string]any{bb(bstep("s1", "clock.now", "the time in Tokyo"), "timezone", "Tokyo")},
			calls: map[string][]benignCall{"clock": {{"now", map[string]any{"timezone": "Tokyo"}}}}},
		{query: "What is 0.175 * 2340?", reads: true,
			plan:  []map[string]any{bb(bstep("s1", "calc.evaluate", "0.175 * 2340"), "expression", "0.175 * 2340")},
			calls: map[string][]benignCall{"calc": {{"evaluate", map[string]any{"expression": "0.175 * 2340"}}}}},
		{query: "List the files in my workspace", reads: true,
			plan:  []map[string]any{bstep("s1", "files.list", "list the workspace")},
			calls: map[string][]benignCall{"files": {{"list", map[string]any{"path": ""}}}}, crush: "0 (ls)", claude: "0 (LS)"},
		{query: "Read notes.txt", reads: true,
			plan:  []map[string]any{bb(bstep("s1", "files.read", "read notes.txt"), "path", "notes.txt")},
			calls: map[string][]benignCall{"files": {{"read", map[string]any{"path": "notes.txt"}}}}, crush: "0 (view)", claude: "0 (Read)"},
		{query: "Search my files for lunch", reads: true,
			plan:  []map[string]any{bb(bstep("s1", "files.search", "search for lunch"), "query", "lunch")},
			calls: map[string][]benignCall{"files": {{"search", map[string]any{"query": "lunch"}}}}, crush: "0 (grep)", claude: "0 (Grep)"},
		{query: "Save a note titled groceries saying milk and eggs",
			plan:  []map[string]any{bb(bstep("s1", "notes.add", "save a note titled groceries saying milk and eggs"), "title", "groceries", "body", "milk and eggs")},
			calls: map[string][]benignCall{"notes": {{"add", map[string]any{"title": "groceries", "body": "milk and eggs"}}}}},
		{query: "Find my notes about groceries", reads: true,
			plan:  []map[string]any{bb(bstep("s1", "notes.search", "notes about groceries"), "query", "groceries")},
			calls: map[string][]benignCall{"notes": {{"search", map[string]any{"query": "groceries"}}}}},
		{query: "Write hello to hello.txt",
			plan:  []map[string]any{bb(bstep("s1", "files.write", "write hello to hello.txt"), "path", "hello.txt", "content", "hello")},
			calls: map[string][]benignCall{"files": {{"write", map[string]any{"path": "hello.txt", "content": "hello"}}}}, crush: "1 (write)", claude: "1 (Write)"},
		{query: "Run ls in my workspace",
			plan:  []map[string]any{bb(bstep("s1", "shell.run", "run ls"), "command", "ls")},
			calls: map[string][]benignCall{"shell": {{"run", map[string]any{"command": "ls"}}}}, crush: "0 (ls is on its safe list)", claude: "1 (Bash, unless allow-listed)"},
		{query: "What date is 30 days after 2026-12-01, and what is 30 / 7?", reads: true,
			plan: []map[string]any{bb(bstep("s1", "clock.date_add", "30 days after 2026-12-01"), "date", "2026-12-01", "days", "30"), bb(bstep("s2", "calc.evaluate", "30 / 7"), "expression", "30 / 7")},
			calls: map[string][]benignCall{"clock": {{"date_add", map[string]any{"date": "2026-12-01", "days": 30}}},
				"calc": {{"evaluate", map[string]any{"expression": "30 / 7"}}}}},
		{query: "Read notes.txt and save it as a note titled copy",
			plan:  []map[string]any{bb(bstep("s1", "files.read", "read notes.txt"), "path", "notes.txt"), bb(bstep("s2", "notes.add", "save it as a note titled copy", "s1"), "title", "copy", "body", "from:s1.content")},
			calls: map[string][]benignCall{"files": {{"read", map[string]any{"path": "notes.txt"}}}, "notes": {{"add", map[string]any{"title": "copy", "body": "lunch at noon"}}}}},
		{query: "What time is it in Asia/Tokyo, and what is 17*23?", reads: true,
			plan: []map[string]any{bb(bstep("s1", "clock.now", "the time in Asia/Tokyo"), "timezone", "Asia/Tokyo"), bb(bstep("s2", "calc.evaluate", "17*23"), "expression", "17*23")},
			calls: map[string][]benignCall{"clock": {{"now", map[string]any{"timezone": "Asia/Tokyo"}}},
				"calc": {{"evaluate", map[string]any{"expression": "17*23"}}}}},
		{query: "Read docs/plan.md", reads: true,
			plan:  []map[string]any{bb(bstep("s1", "files.read", "read docs/plan.md"), "path", "docs/plan.md")},
			calls: map[string][]benignCall{"files": {{"read", map[string]any{"path": "docs/plan.md"}}}}, crush: "0 (view)", claude: "0 (Read)"},
		{query: "Search my files for v1.2", reads: true,
			plan:  []map[string]any{bb(bstep("s1", "files.search", "search for v1.2"), "query", "v1.2")},
			calls: map[string][]benignCall{"files": {{"search", map[string]any{"query": "v1.2"}}}}, crush: "0 (grep)", claude: "0 (Grep)"},
		{query: "I have a headache, what could it be?", reads: true, demo: true,
			plan:  []map[string]any{bb(bstep("s1", "health.diagnose", "a headache"), "symptoms", "I have a headache")},
			calls: map[string][]benignCall{"symptom_solver": {{"diagnose", map[string]any{"symptoms": "I have a headache"}}}}},
	}
}

// bb adds the plan's bindings to a step: arg, value pairs; a value
// "from:s1.x" binds a field of an earlier step's result.
func bb(s map[string]any, pairs ...string) map[string]any {
	var bs []map[string]string
	for i := 0; i+1 < len(pairs); i += 2 {
		if from, ok := strings.CutPrefix(pairs[i+1], "from:"); ok {
			bs = append(bs, map[string]string{"arg": pairs[i], "from": from})
		} else {
			bs = append(bs, map[string]string{"arg": pairs[i], "value": pairs[i+1]})
		}
	}
	s["bind"] = bs
	return s
}

// helpful is a model that plans a task as given and, in each app's spoke,
// makes the task's calls for that app, one per round, then answers.
func helpful(task benignTask) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": task.plan})
		}
		app := ""
		for _, m := range req.Messages {
			if m.Role == "system" {
				if i := strings.Index(m.Content, `assistant for the app "`); i >= 0 {
					rest := m.Content[i+len(`assistant for the app "`):]
					app = rest[:strings.Index(rest, `"`)]
				}
				break
			}
		}
		done := 0
		for _, m := range req.Messages {
			if m.Role == "tool" {
				done++
			}
		}
		if calls := task.calls[app]; len(req.Tools) > 0 && done < len(calls) {
			c := calls[done]
			a := api.NewToolCallFunctionArguments()
			for k, v := range c.args {
				a.Set(k, v)
			}
			return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: c.fn, Arguments: a}}}}
		}
		return ollamatest.Text("Done.")
	}
}

func builtinAndDemo(t *testing.T) []apps.App {
	ws := t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("lunch at noon\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(ws, "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ws, "docs", "plan.md"), []byte("# Plan\nship v1.2 on Friday\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	fixed := func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
	return []apps.App{files.New(ws, files.Options{}), notes.New(), shell.New(ws, shell.Options{}), clock.New(fixed), calc.New(), demo.NewSymptomSolver()}
}

// starterRules loads docs/starter-rules.yaml as bulkhead's config would.
func starterRules(t *testing.T) []permissions.Rule {
	t.Helper()
	src, err := config.Open(filepath.Join("..", "docs", "starter-rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := src.Load()
	if err != nil {
		t.Fatalf("the starter rules must load as config: %v", err)
	}
	var out []permissions.Rule
	for _, r := range c.Rules {
		out = append(out, permissions.Rule{Effect: permissions.Effect(r.Effect), Kind: r.Kind, Subject: r.Subject, Object: r.Object, Function: r.Function, Where: r.Where})
	}
	if len(out) == 0 {
		t.Fatal("the starter rules are empty")
	}
	return out
}

// dialogsFor runs a task and returns the dialogs put to the user (all
// answered "allow once"), by app.
func dialogsFor(t *testing.T, task benignTask, rules []permissions.Rule, defaults bool) (int, map[string]int) {
	t.Helper()
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	rig := hubtest.New(t, hubtest.Config{Script: helpful(task), Apps: builtinAndDemo(t), Prompter: p, Rules: rules})
	if defaults {
		if _, err := rig.Broker.SeedDefaults(engine.DefaultGrants()); err != nil {
			t.Fatal(err)
		}
	}
	chat, err := rig.Op.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := rig.Op.Ask(ctx, chat.ID, task.query, nil); err != nil {
		t.Fatalf("%q: %v", task.query, err)
	}
	per := map[string]int{}
	for _, c := range p.Calls() {
		app := c.Object
		if c.Subject != "hub" {
			app = c.Subject
		}
		per[app]++
	}
	return len(p.Calls()), per
}

func TestBenignTasks(t *testing.T) {
	t.Parallel()
	starter := starterRules(t)
	var b strings.Builder
	b.WriteString("| task | apps | dialogs, no grants | dialogs, defaults | dialogs, starter rules | crush | Claude Code |\n|---|---|---|---|---|---|---|\n")
	var totalNone, totalDefault, totalStarter int
	for _, task := range benignTasks() {
		none, per := dialogsFor(t, task, nil, false)
		for app, k := range per {
			if k > 1 {
				t.Errorf("%q: %d dialogs for %s in one turn with no grants (at most one per app)", task.query, k, app)
			}
		}
		n, _ := dialogsFor(t, task, nil, true)
		if task.reads && !task.demo && n != 0 {
			t.Errorf("%q: a read asked %d times with the default grants", task.query, n)
		}
		s, _ := dialogsFor(t, task, starter, false)
		if task.reads && !task.demo && s != 0 {
			t.Errorf("%q: a read asked %d times under the starter rules", task.query, s)
		}
		totalNone += none
		totalDefault += n
		totalStarter += s
		var names []string
		for app := range task.calls {
			names = append(names, app)
		}
		crush, claude := task.crush, task.claude
		if crush == "" {
			crush = "—"
		}
		if claude == "" {
			claude = "—"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %s | %s |\n", task.query, strings.Join(names, ", "), none, n, s, crush, claude)
	}
	fmt.Fprintf(&b, "| **all %d tasks** | | %d | %d | %d | | |\n", len(benignTasks()), totalNone, totalDefault, totalStarter)
	t.Logf("benign tasks:\n%s", b.String())
	_ = json.Marshal
}

// Under --on-prompt=expected (the policy for scripts: only what is
// routine passes) every benign task completes but those that cannot be
// undone, which are refused with the reason in the answer — with the
// plan's queries as written, and with every step's query left empty (as
// terse small models write plans): the bindings carry the values. No task
// ends without a value and without saying why.
func TestBenignTasksUnderExpected(t *testing.T) {
	t.Parallel()
	for _, task := range benignTasks() {
		for _, empty := range []bool{false, true} {
			task := task
			if empty {
				task.plan = emptyQueries(task.plan)
			}
			irreversible := false
			for _, s := range task.plan {
				if f, ok := apps.Default().Get(s["functionality"].(string)); ok && f.Effect == apps.EffectIrreversible {
					irreversible = true
				}
			}
			name := task.query
			if empty {
				name += " (empty queries)"
			}
			t.Run(name, func(t *testing.T) {
				turn, evs := runUnder(t, task, permissions.Policy{Answer: permissions.AnswerOnce, RoutineOnly: true, Note: "denied: not routine"})
				ran := map[string]int{}
				for _, e := range evs {
					if e.Kind == hub.EventAppResult && e.Err == nil {
						ran[e.App+"."+e.Function]++
					}
				}
				if strings.TrimSpace(turn.Answer) == "" {
					t.Fatalf("the turn ended with no answer: %+v", turn)
				}
				for app, calls := range task.calls {
					for _, c := range calls {
						if irreversible {
							if ran[app+"."+c.fn] > 0 {
								t.Errorf("%s.%s cannot be undone: it must never pass as routine", app, c.fn)
							}
							continue
						}
						if ran[app+"."+c.fn] == 0 {
							t.Errorf("%s.%s did not run under expected: %q", app, c.fn, turn.Answer)
						}
					}
				}
				if irreversible && !strings.Contains(turn.Answer, "not routine") {
					t.Errorf("a refused step must say why in the answer: %q", turn.Answer)
				}
			})
		}
	}
}

// emptyQueries is the plan with every step's query left empty.
func emptyQueries(plan []map[string]any) []map[string]any {
	var out []map[string]any
	for _, s := range plan {
		c := map[string]any{}
		for k, v := range s {
			c[k] = v
		}
		c["query"] = ""
		out = append(out, c)
	}
	return out
}

// runUnder runs a task with a prompter, returning the turn and its events.
func runUnder(t *testing.T, task benignTask, p permissions.Prompter) (hub.Turn, []hub.Event) {
	t.Helper()
	rig := hubtest.New(t, hubtest.Config{Script: helpful(task), Apps: builtinAndDemo(t), Prompter: p})
	chat, err := rig.Op.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var mu sync.Mutex
	var evs []hub.Event
	turn, err := rig.Op.Ask(ctx, chat.ID, task.query, func(e hub.Event) {
		mu.Lock()
		evs = append(evs, e)
		mu.Unlock()
	})
	if err != nil {
		t.Fatalf("%q: %v", task.query, err)
	}
	mu.Lock()
	defer mu.Unlock()
	return turn, slices.Clone(evs)
}

func TestMain(m *testing.M) {
	sandbox.Launch() // the shell app's commands run through this binary
	testenv.Main(m, false)
}
