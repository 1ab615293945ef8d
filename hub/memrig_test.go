package hub_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// memRig is an operator with long-term memory on, a hub model and one
// model per app ("m-<app>"), on a data directory the tests can scan.
type memRig struct {
	srv    *ollamatest.Scripted
	dir    string
	store  *memory.Store
	op     *hub.Operator
	broker *permissions.Broker
	rig    *hubtest.Rig
}

type memRigOpts struct {
	script   ollamatest.Script
	apps     []apps.App
	catalog  *apps.Catalog // nil: apps.Default()
	prompter permissions.Prompter
	rules    []permissions.Rule
	detector guard.Detector
	models   []string // extra model names the server knows
}

func newMemRig(t *testing.T, o memRigOpts) *memRig {
	t.Helper()
	r := hubtest.New(t, hubtest.Config{
		Script: o.script, Apps: append([]apps.App{}, o.apps...), Catalog: o.catalog, Prompter: o.prompter, Rules: o.rules,
		HubModel: hubModel, SpokeModelPrefix: "m-", Models: o.models,
		Modify: func(opts *hub.Options) {
			opts.CallTimeout = 2 * time.Second
			opts.Memory = hub.MemoryOptions{Enabled: true, Detector: o.detector}
		},
	})
	return &memRig{srv: r.Srv, dir: r.Dir, store: r.Store, op: r.Op, broker: r.Broker, rig: r}
}

func (r *memRig) close() { r.rig.Close() }

func (r *memRig) ask(t *testing.T, chat, q string) (hub.Turn, []hub.Event) {
	t.Helper()
	var evs []hub.Event
	turn, err := r.op.Ask(context.Background(), chat, q, collect(&evs))
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	return turn, evs
}

func (r *memRig) flush(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := r.op.FlushMemory(ctx); err != nil {
		t.Fatal(err)
	}
}

func (r *memRig) lt(t *testing.T, owner string) *memory.LongTerm {
	t.Helper()
	ns, err := r.store.Namespace(owner)
	if err != nil {
		t.Fatal(err)
	}
	return ns.LongTerm()
}

// notes returns the action log's notes of a kind.
func (r *memRig) notes(t *testing.T, kind string) []permissions.Note {
	t.Helper()
	acts, err := r.broker.Actions()
	if err != nil {
		t.Fatal(err)
	}
	var out []permissions.Note
	for _, a := range acts {
		if a.Note != nil && a.Note.Kind == kind {
			out = append(out, *a.Note)
		}
	}
	return out
}

// promptOf is everything a request put in front of a model.
func promptOf(req api.ChatRequest) string {
	var b strings.Builder
	for _, m := range req.Messages {
		b.WriteString(m.Role + ": " + m.Content + "\n")
	}
	return b.String()
}

func isSummary(req *api.ChatRequest) bool {
	return strings.HasPrefix(hub.UpkeepTask(req), hub.SummaryMarker)
}

func isExtract(req *api.ChatRequest) bool {
	return strings.HasPrefix(hub.UpkeepTask(req), hub.ExtractMarker)
}

func isPlan(req *api.ChatRequest) bool {
	return len(req.Format) > 0 && !isExtract(req) && !isSummary(req)
}

// fakeApp is an app whose functions a test scripts; it records calls.
type fakeApp struct {
	m  apps.Manifest
	fn func(name string, args map[string]any) (any, error)

	mu    sync.Mutex
	calls []map[string]any
}

func (f *fakeApp) Manifest() apps.Manifest { return f.m }

func (f *fakeApp) Call(_ context.Context, c apps.Call) (json.RawMessage, error) {
	var args map[string]any
	_ = json.Unmarshal(c.Args, &args)
	f.mu.Lock()
	f.calls = append(f.calls, map[string]any{"function": c.Function, "args": args})
	f.mu.Unlock()
	v, err := f.fn(c.Function, args)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func (f *fakeApp) called(fn string) []map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []map[string]any
	for _, c := range f.calls {
		if c["function"] == fn {
			out = append(out, c["args"].(map[string]any))
		}
	}
	return out
}

func fn(name, params, result string, effect apps.Effect) apps.Function {
	return apps.Function{Name: name, Description: name, Params: json.RawMessage(params), Result: json.RawMessage(result), Effect: effect}
}

func call(name string, args map[string]any) ollamatest.Reply {
	a := api.NewToolCallFunctionArguments()
	for k, v := range args {
		a.Set(k, v)
	}
	return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: name, Arguments: a}}}}
}

// lastRole is the content of the last message with role.
func lastRole(req *api.ChatRequest, role string) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == role {
			return req.Messages[i].Content
		}
	}
	return ""
}

func plan(steps ...map[string]any) ollamatest.Reply {
	for _, s := range steps {
		if _, ok := s["depends_on"]; !ok {
			s["depends_on"] = []string{}
		}
		if _, ok := s["query"]; !ok {
			s["query"] = "q"
		}
	}
	return ollamatest.JSON(map[string]any{"steps": steps})
}
