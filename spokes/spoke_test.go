package spokes_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

func TestMain(m *testing.M) { testenv.Main(m, true) }

// fakeGate records what the spoke asked and allows by a rule.
type fakeGate struct {
	allow     bool
	calls     []string
	requested []string
	// settles are the words Settle gives, in turn; settled the calls it
	// was told of.
	settles []string
	settled []string
}

func (g *fakeGate) Settle(_ context.Context, fn apps.Function, _ spokes.Verdict) string {
	g.settled = append(g.settled, fn.Name)
	if len(g.settles) == 0 {
		return ""
	}
	w := g.settles[0]
	g.settles = g.settles[1:]
	return w
}

func (g *fakeGate) Authorize(_ context.Context, fn apps.Function, _ json.RawMessage) (spokes.Verdict, error) {
	g.calls = append(g.calls, fn.Name)
	return spokes.Verdict{Allowed: g.allow, Note: "fake says no", Expected: g.allow}, nil
}

func (g *fakeGate) Request(_ context.Context, fn string, _ json.RawMessage) (json.RawMessage, error) {
	g.requested = append(g.requested, fn)
	return nil, errors.New("fake hub: not allowed")
}

func toolCall(name string, args map[string]any) ollamatest.Reply {
	a := api.NewToolCallFunctionArguments()
	for k, v := range args {
		a.Set(k, v)
	}
	return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: name, Arguments: a}}}}
}

func newAppSpoke(t *testing.T, gate spokes.Gate, replies ...ollamatest.Reply) (*spokes.Spoke, *ollamatest.Scripted) {
	t.Helper()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, replies...), "m")
	store, err := memory.OpenEphemeral(memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ns, _ := store.Namespace("spoke/calc")
	model, _ := llm.New(llm.Config{Host: srv.Host(), Model: "m"}, nil)
	sp, err := spokes.New(spokes.Config{App: "calc", Impl: calc.New(), Gate: gate, Model: model, Memory: ns, History: 4})
	if err != nil {
		t.Fatal(err)
	}
	sp.Start()
	t.Cleanup(sp.Stop)
	return sp, srv
}

// lastTool returns the content of the last tool message the model read.
func lastTool(srv *ollamatest.Scripted) string {
	reqs := srv.Requests()
	msgs := reqs[len(reqs)-1].Messages
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	return ""
}

func TestToolLoopProducesTheTypedValue(t *testing.T) {
	t.Parallel()
	g := &fakeGate{allow: true}
	sp, srv := newAppSpoke(t, g, toolCall("evaluate", map[string]any{"expression": "0.1+0.2"}), ollamatest.Text("It is 0.3."))
	res, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "0.1+0.2?", Functionality: "calc.evaluate"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != "It is 0.3." || !strings.Contains(string(res.Value), `"result":"0.3"`) || len(res.Calls) != 1 || res.Usage.Calls != 2 {
		t.Fatalf("result %+v value %s", res, res.Value)
	}
	if len(g.calls) != 1 || g.calls[0] != "evaluate" {
		t.Fatalf("the gate must see every call: %v", g.calls)
	}
	// The app's tools, plus request_functionality, were offered.
	tools := srv.Requests()[0].Tools
	if len(tools) != 2 || tools[1].Function.Name != apps.RequestFunctionality {
		t.Fatalf("tools %+v", tools)
	}
}

func TestBadToolCallsGetClearMessages(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		call  ollamatest.Reply
		allow bool
		want  string
	}{
		{"hallucinated tool", toolCall("send_money", map[string]any{"to": "x"}), true, "there is no function"},
		{"bad arguments", toolCall("evaluate", map[string]any{"expr": 1}), true, "arguments of evaluate"},
		{"denied", toolCall("evaluate", map[string]any{"expression": "1+1"}), false, "fake says no"},
		{"app error", toolCall("evaluate", map[string]any{"expression": "1/0"}), true, "evaluate failed"},
		{"isc refused", toolCall(apps.RequestFunctionality, map[string]any{"functionality": "mail.send", "arguments": map[string]any{}}), true, "fake hub: not allowed"},
		{"isc malformed", toolCall(apps.RequestFunctionality, map[string]any{"what": "x"}), true, "request_functionality needs"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			sp, srv := newAppSpoke(t, &fakeGate{allow: tc.allow}, tc.call, ollamatest.Text("sorry"))
			res, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "q", Functionality: "calc.evaluate"})
			if err != nil {
				t.Fatalf("a bad call must not fail the task: %v", err)
			}
			if got := lastTool(srv); !strings.Contains(got, tc.want) {
				t.Fatalf("the model read %q, want %q", got, tc.want)
			}
			if res.Value != nil || res.Text != "sorry" {
				t.Fatalf("result %+v", res)
			}
		})
	}
}

func TestEndlessToolCallsStop(t *testing.T) {
	t.Parallel()
	var replies []ollamatest.Reply
	for i := 0; i < 40; i++ {
		replies = append(replies, toolCall("evaluate", map[string]any{"expression": strings.Repeat("1+", i) + "1"}))
	}
	sp, _ := newAppSpoke(t, &fakeGate{allow: true}, replies...)
	_, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "q"})
	if err == nil || !strings.Contains(err.Error(), "gave up after") {
		t.Fatalf("want the loop bounded, got %v", err)
	}
}

func TestStoppedSpokeRefusesWork(t *testing.T) {
	t.Parallel()
	sp, _ := newAppSpoke(t, &fakeGate{allow: true})
	sp.Stop()
	if _, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "q"}); !errors.Is(err, spokes.ErrStopped) {
		t.Fatalf("want ErrStopped, got %v", err)
	}
}

// A spoke stores its answer masked (the hub's Mask), hands the unmasked
// result back, and puts its own summary into its next context.
func TestSpokeMasksWhatItStoresAndReadsItsSummary(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, ollamatest.Text("POISON here"), ollamatest.Text("fine")), "m")
	store, _ := memory.OpenEphemeral(memory.Options{})
	t.Cleanup(func() { store.Close() })
	ns, _ := store.Namespace("spoke/vanilla")
	model, _ := llm.New(llm.Config{Host: srv.Host(), Model: "m"}, nil)
	masked := 0
	sp, err := spokes.New(spokes.Config{App: "vanilla", Model: model, Memory: ns, History: 4,
		Mask: func(_ context.Context, s string) string { masked++; return strings.ReplaceAll(s, "POISON", "[masked]") }})
	if err != nil {
		t.Fatal(err)
	}
	sp.Start()
	t.Cleanup(sp.Stop)
	res, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "q1"})
	if err != nil || res.Text != "POISON here" || res.Logged != 1 {
		t.Fatalf("result %+v %v", res, err)
	}
	its, _ := ns.Interactions("c")
	if len(its) != 1 || its[0].Output != "[masked] here" || masked != 1 {
		t.Fatalf("stored %+v (masked %d times)", its, masked)
	}
	ns.LongTerm().SetSummary(memory.Summary{Chat: "c", Text: "OWN-SUMMARY"})
	if _, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "q2"}); err != nil {
		t.Fatal(err)
	}
	var ctx strings.Builder
	for _, m := range srv.Requests()[1].Messages {
		ctx.WriteString(m.Content + "\n")
	}
	if !strings.Contains(ctx.String(), "OWN-SUMMARY") || !strings.Contains(ctx.String(), "[masked] here") || strings.Contains(ctx.String(), "POISON") {
		t.Fatalf("working memory:\n%s", ctx.String())
	}
}

// expectOnce is a gate that allows every call and judges expected only
// the call numbered expected (from 1).
type expectOnce struct {
	n, expected int
}

func (g *expectOnce) Authorize(context.Context, apps.Function, json.RawMessage) (spokes.Verdict, error) {
	g.n++
	return spokes.Verdict{Allowed: true, Expected: g.n == g.expected}, nil
}

func (g *expectOnce) Request(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("no")
}

func (g *expectOnce) Settle(context.Context, apps.Function, spokes.Verdict) string { return "" }

// A step's typed value is the result of the call the gate judged
// expected, never another call of the same function before or after it;
// with ValueOnly the task ends once it is made, without a prose answer.
func TestTheValueIsTheExpectedCalls(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		expected int
		want     string
	}{{1, `"result":"2"`}, {2, `"result":"30"`}} {
		sp, _ := newAppSpoke(t, &expectOnce{expected: c.expected},
			toolCall("evaluate", map[string]any{"expression": "1+1"}),
			toolCall("evaluate", map[string]any{"expression": "5*6"}),
			ollamatest.Text("Done."))
		res, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "q", Functionality: "calc.evaluate"})
		if err != nil || !strings.Contains(string(res.Value), c.want) {
			t.Fatalf("expected call %d: value %s, err %v", c.expected, res.Value, err)
		}
	}
	sp, srv := newAppSpoke(t, &expectOnce{expected: 1},
		toolCall("evaluate", map[string]any{"expression": "1+1"}),
		ollamatest.Text("never asked"))
	res, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "q", Functionality: "calc.evaluate", ValueOnly: true})
	if err != nil || !strings.Contains(string(res.Value), `"result":"2"`) || len(srv.Requests()) != 1 {
		t.Fatalf("ValueOnly: value %s, %d model calls (want 1), err %v", res.Value, len(srv.Requests()), err)
	}
}

// A spoke's context continues its last turn's — the last exchange
// appended — so a model server reads only the new exchange; past the
// History window the exchanges shown move in blocks of half the window,
// not at every turn: with a window of four, a chat of thirteen turns
// (one of them failed) breaks the continuation only where the first
// exchange shown changed, and every turn shows three or four exchanges
// (two, while the failed turn is among the last four), the most recent,
// in order. Before, the window moved at every turn once full,
// and each turn re-read every exchange shown.
func TestASpokesContextContinuesTheLastTurns(t *testing.T) {
	t.Parallel()
	const window = 4
	turns := 13
	var replies []ollamatest.Reply
	for i := range turns {
		if i == 6 {
			replies = append(replies, ollamatest.Reply{Status: 500, Error: "the model failed"})
			continue
		}
		replies = append(replies, ollamatest.Text(fmt.Sprintf("answer %d", i+1)))
	}
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, replies...), "m")
	store, _ := memory.OpenEphemeral(memory.Options{})
	t.Cleanup(func() { store.Close() })
	ns, _ := store.Namespace("spoke/vanilla")
	model, _ := llm.New(llm.Config{Host: srv.Host(), Model: "m"}, nil)
	sp, err := spokes.New(spokes.Config{App: "vanilla", Model: model, Memory: ns, History: window, System: "You are helpful."})
	if err != nil {
		t.Fatal(err)
	}
	sp.Start()
	t.Cleanup(sp.Stop)
	for i := range turns {
		_, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: fmt.Sprintf("question %d", i+1)})
		if (err != nil) != (i == 6) {
			t.Fatalf("turn %d: %v", i+1, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != turns {
		t.Fatalf("%d requests for %d turns", len(reqs), turns)
	}
	shown := func(req api.ChatRequest) (qs []string) {
		for _, m := range req.Messages[:len(req.Messages)-1] {
			if m.Role == "user" {
				qs = append(qs, m.Content)
			}
		}
		return qs
	}
	breaks := 0
	for i, req := range reqs {
		qs := shown(req)
		done := i
		if i > 6 {
			done-- // the failed turn is never shown
		}
		lower := window/2 + 1
		if i > 6 && i-6 <= window {
			lower-- // the failed turn takes a place in the window
		}
		if len(qs) > window || (done > window && len(qs) < lower) || (done <= window && len(qs) != done) {
			t.Errorf("turn %d shows %d exchanges (window %d): %q", i+1, len(qs), window, qs)
		}
		if len(qs) > 0 && qs[len(qs)-1] != fmt.Sprintf("question %d", i-boolInt(i == 7)) {
			t.Errorf("turn %d: the last exchange shown is %q", i+1, qs[len(qs)-1])
		}
		if i == 0 || i == 7 { // after the failed turn, the last turn's context was not completed
			continue
		}
		prev := reqs[i-1].Messages
		cont := len(req.Messages) > len(prev) && reflect.DeepEqual(req.Messages[:len(prev)], prev)
		if !cont {
			breaks++
			if len(qs) > 0 && len(shown(reqs[i-1])) > 0 && qs[0] == shown(reqs[i-1])[0] {
				t.Errorf("turn %d's context does not continue turn %d's, yet the same exchange begins it", i+1, i)
			}
		}
	}
	// Turns 8, 10 and 12 begin with another exchange (the failed turn 7
	// counts among the window's seqs); moving at every turn broke 7 times.
	if breaks != 3 {
		t.Errorf("the context's continuation broke %d times in %d turns with a window of %d, want 3", breaks, turns, window)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// What became of the files a call wrote (the hub's Settle) reaches the
// model beside the call's result; the step's typed value is the result
// alone. A call the gate refused is not settled.
func TestTheModelReadsWhatBecameOfItsChanges(t *testing.T) {
	t.Parallel()
	g := &fakeGate{allow: true, settles: []string{"The user discarded your changes in /w; none of them is in the folder."}}
	sp, srv := newAppSpoke(t, g, toolCall("evaluate", map[string]any{"expression": "1+1"}), ollamatest.Text("2."))
	res, err := sp.Do(context.Background(), spokes.Task{Chat: "c", Query: "1+1?", Functionality: "calc.evaluate"})
	if err != nil {
		t.Fatal(err)
	}
	if tool := lastTool(srv); !strings.Contains(tool, `"your_file_changes":"The user discarded your changes`) || !strings.Contains(tool, `"result":"2"`) {
		t.Errorf("the model reads: %s", tool)
	}
	if strings.Contains(string(res.Value), "discarded") || !strings.Contains(string(res.Value), `"result":"2"`) {
		t.Errorf("the typed value is the result alone: %s", res.Value)
	}
	if len(g.settled) != 1 {
		t.Errorf("settled %v", g.settled)
	}
	g2 := &fakeGate{allow: false}
	sp2, _ := newAppSpoke(t, g2, toolCall("evaluate", map[string]any{"expression": "1+1"}), ollamatest.Text("no."))
	if _, err := sp2.Do(context.Background(), spokes.Task{Chat: "c", Query: "1+1?", Functionality: "calc.evaluate"}); err != nil {
		t.Fatal(err)
	}
	if len(g2.settled) != 0 {
		t.Errorf("a refused call is not settled: %v", g2.settled)
	}
}
