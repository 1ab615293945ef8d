package hub_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

type appRig struct {
	srv      *ollamatest.Scripted
	store    *memory.Store
	op       *hub.Operator
	prompter *permissionstest.Prompter
	broker   *permissions.Broker
}

func newAppRig(t testing.TB, script ollamatest.Script, prompter *permissionstest.Prompter, rules []permissions.Rule, extra ...apps.App) *appRig {
	t.Helper()
	c := hubtest.Config{Script: script, Rules: rules, Apps: append(demo.Apps(), extra...),
		Modify: func(o *hub.Options) { o.CallTimeout = 2 * time.Second }}
	if prompter != nil {
		c.Prompter = prompter
	}
	r := hubtest.New(t, c)
	return &appRig{srv: r.Srv, store: r.Store, op: r.Op, prompter: prompter, broker: r.Broker}
}

var allowExec = []permissions.Rule{{Effect: permissions.EffectAllow, Kind: "exec", Subject: "hub", Where: "test"}}

func (r *appRig) ask(t testing.TB, chat, q string) (hub.Turn, []hub.Event) {
	t.Helper()
	var evs []hub.Event
	turn, err := r.op.Ask(context.Background(), chat, q, collect(&evs))
	if err != nil {
		t.Fatalf("%q: %v", q, err)
	}
	return turn, evs
}

// appTexts are the app-authored texts of the demo pack.
func appTexts() map[string]string {
	out := map[string]string{}
	for _, a := range demo.Apps() {
		out[a.Manifest().Name] = a.Manifest().Description
	}
	return out
}

// Invariant 1: no app-authored text reaches the planner, nor any spoke but
// the app's own.
func TestAppTextStaysInItsOwnSpoke(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible(), permissionstest.NewPrompter(permissions.AnswerDeny), allowExec)
	chat, _ := r.op.NewChat(false)
	for _, q := range []string{"Summarize the emails in my inbox", "Write a story about a dragon", "Compare the fares from the airport to downtown on metro_hail and quick_ride", "I have a headache, what could it be?"} {
		r.ask(t, chat.ID, q)
	}
	texts := appTexts()
	for i, req := range r.srv.Requests() {
		var ctx strings.Builder
		for _, m := range req.Messages {
			ctx.WriteString(m.Content + "\n")
		}
		for _, tl := range req.Tools {
			ctx.WriteString(tl.Function.Description + "\n")
		}
		seen := ctx.String()
		owner := ""
		if len(req.Format) == 0 {
			for name := range texts {
				if strings.Contains(seen, `the app "`+name+`"`) {
					owner = name
				}
			}
		}
		for name, desc := range texts {
			if name != owner && strings.Contains(seen, desc) {
				t.Errorf("request %d (owner %q, planner=%v) holds %s's description", i, owner, len(req.Format) > 0, name)
			}
		}
		for _, inj := range []string{demo.MailInjection, demo.QuickRideInjection, demo.MuseInjection} {
			if len(req.Format) > 0 && strings.Contains(seen, inj) {
				t.Errorf("the planner read an injection: %q", inj)
			}
		}
		if owner != "mail" && strings.Contains(seen, demo.MailInjection) {
			t.Errorf("request %d (owner %q) holds the mail app's data", i, owner)
		}
	}
}

// Invariant 2 and ISC: a spoke reaches another app only through the hub,
// as a collab request and a collab response, each with the hub's warning;
// the caller is named by its gate and both sides get ephemeral ids.
func TestISCThroughTheHub(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	// Deny the irreversible steps; allow the drive request and response.
	r := newAppRig(t, ollamatest.Gullible(), p, append(allowExec, permissions.Rule{Effect: permissions.EffectDeny, Kind: "irreversible", Where: "test"}))
	chat, _ := r.op.NewChat(false)
	_, evs := r.ask(t, chat.ID, "Summarize the emails in my inbox")
	var collab []permissions.Request
	for _, e := range evs {
		if e.Kind == hub.EventPermission && e.Permission.Kind == permissions.KindCollab {
			collab = append(collab, *e.Permission)
		}
	}
	if len(collab) < 2 {
		t.Fatalf("want the drive request and its response put to the user, got %+v", collab)
	}
	req, resp := collab[0], collab[1]
	if req.Subject != "mail" || req.Object != "drive" || req.Function != "drive.search" || !strings.Contains(req.Warning, "NOT expected by the plan") {
		t.Fatalf("request dialog %+v", req)
	}
	if resp.Subject != "drive" || resp.Object != "mail" || !strings.Contains(string(resp.Args), "Q3 financial report") || resp.Warning == "" {
		t.Fatalf("response dialog must show the response: %+v", resp)
	}
	// The drive call ran in drive's spoke, not mail's.
	ran := false
	for _, e := range evs {
		if e.Kind == hub.EventAppResult && e.App == "drive" && e.Function == "search" && e.Result != nil {
			ran = true
		}
	}
	if !ran {
		t.Fatal("drive.search did not run in the drive spoke")
	}
	// Everything went to the action log.
	acts, _ := r.broker.Actions()
	kinds := map[permissions.Kind]int{}
	for _, a := range acts {
		kinds[a.Request.Kind]++
	}
	if kinds[permissions.KindCollab] < 2 || kinds[permissions.KindExec] == 0 || kinds[permissions.KindIrreversible] == 0 {
		t.Fatalf("action log %v", kinds)
	}
}

// A malformed ISC request is dropped and logged; the caller gets an error.
func TestMalformedISCIsDropped(t *testing.T) {
	t.Parallel()
	n := 0
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "mail.search", "query": "x", "depends_on": []string{}}}})
		}
		n++
		if n == 1 {
			args := api.NewToolCallFunctionArguments()
			args.Set("functionality", "drive.read")
			args.Set("arguments", map[string]any{"title": 42})
			return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "request_functionality", Arguments: args}}}}
		}
		return ollamatest.Text("done")
	}
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	r := newAppRig(t, script, p, allowExec)
	chat, _ := r.op.NewChat(false)
	_, evs := r.ask(t, chat.ID, "check mail")
	for _, c := range p.Calls() {
		if c.Kind == permissions.KindCollab {
			t.Fatalf("a malformed request reached a dialog: %+v", c)
		}
	}
	var msg string
	for _, e := range evs {
		if e.Kind == hub.EventAppResult && e.Function == "request_functionality" && e.Err != nil {
			msg = e.Err.Error()
		}
	}
	if !strings.Contains(msg, "dropped") {
		t.Fatalf("caller should get a typed error, got %q", msg)
	}
	acts, _ := r.broker.Actions()
	logged := false
	for _, a := range acts {
		if a.Note != nil && strings.Contains(a.Note.Detail, "malformed request") {
			logged = true
		}
	}
	if !logged {
		t.Fatal("the drop was not written to the action log")
	}
}

// Invariant 3: irreversible actions ask every time, even after a session
// or permanent answer, and permanent is never offered.
func TestIrreversibleAsksEveryTime(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerPermanent)
	// Keep the attack email (deny deletes) so each turn tries to send.
	r := newAppRig(t, ollamatest.Gullible(), p, append(allowExec, permissions.Rule{Effect: permissions.EffectDeny, Kind: "irreversible", Function: "delete", Where: "test"}))
	for i := 0; i < 2; i++ {
		chat, _ := r.op.NewChat(false)
		r.ask(t, chat.ID, "Summarize the emails in my inbox")
	}
	sends := 0
	for _, c := range p.Calls() {
		if c.Function == "send" {
			sends++
			if !c.IsIrreversible() || c.Warning == "" || !strings.Contains(string(c.Args), demo.AttackerAddress) {
				t.Fatalf("send dialog %+v", c)
			}
			for _, o := range c.Options() {
				if o == permissions.AnswerPermanent {
					t.Fatal("permanent offered for an irreversible action")
				}
			}
		}
	}
	if sends < 2 {
		t.Fatalf("send must be asked every time: asked %d times in 2 turns", sends)
	}
}

// Invariant 9: a dialog left open does not block forever: esc cancels it.
func TestCancelWhileADialogIsOpen(t *testing.T) {
	t.Parallel()
	p := &permissionstest.Prompter{Answer: permissions.AnswerOnce, Gate: make(chan struct{}), Started: make(chan permissions.Request, 8)}
	r := newAppRig(t, ollamatest.Gullible(), p, nil)
	chat, _ := r.op.NewChat(false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := r.op.Ask(ctx, chat.ID, "Summarize the emails in my inbox", nil)
		done <- err
	}()
	<-p.Started // the exec dialog is open
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("want cancelled, got %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("cancel did not end a turn waiting on a dialog")
	}
}

// faultyApp panics, hangs or fails on demand.
type faultyApp struct{ mode string }

func (f faultyApp) Manifest() apps.Manifest {
	return apps.Manifest{Name: "faulty_" + f.mode, Description: "test app",
		Functions: []apps.Function{{Name: "solve", Params: json.RawMessage(`{"type":"object","properties":{"symptoms":{"type":"string"}}}`),
			Result: json.RawMessage(`{"type":"object"}`), Effect: apps.EffectRead}},
		Provides: map[string]string{"health.diagnose": "solve"}}
}

func (f faultyApp) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	switch f.mode {
	case "panic":
		panic("boom")
	case "hang":
		<-ctx.Done()
		return nil, ctx.Err()
	case "malformed":
		return json.RawMessage(`{"assessment": 7}`), nil
	}
	return nil, errors.New("the service is down")
}

// A panicking, hanging, failing or lying app fails only its own step.
func TestFaultyAppFailsOnlyItsStep(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"panic", "hang", "error", "malformed"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			app := "faulty_" + mode
			script := func(req *api.ChatRequest) ollamatest.Reply {
				if len(req.Format) > 0 {
					return ollamatest.JSON(map[string]any{"steps": []map[string]any{
						{"id": "s1", "functionality": "health.diagnose", "query": "headache", "depends_on": []string{}, "app": app, "bind": []map[string]string{{"arg": "symptoms", "value": "headache"}}},
						{"id": "s2", "functionality": "health.diagnose", "query": "headache", "depends_on": []string{}, "app": "symptom_solver", "bind": []map[string]string{{"arg": "symptoms", "value": "headache"}}},
					}})
				}
				return ollamatest.Gullible()(req)
			}
			r := newAppRig(t, script, permissionstest.NewPrompter(permissions.AnswerDeny), allowExec, faultyApp{mode})
			chat, _ := r.op.NewChat(false)
			turn, evs := r.ask(t, chat.ID, "I have a headache: ask "+app+" and symptom_solver what it could be")
			var results []hub.StepResult
			for _, e := range evs {
				if e.Kind == hub.EventResults {
					results = e.Results
				}
			}
			if len(results) != 2 || results[0].Error == "" || results[1].Value == nil {
				t.Fatalf("results %+v", results)
			}
			want, _ := demo.Diagnose("headache")
			if !strings.Contains(turn.Answer, want) {
				t.Fatalf("the healthy app's answer is lost: %q", turn.Answer)
			}
		})
	}
}

// A deny note reaches the requesting model as the tool's answer.
func TestDenyNoteReachesTheModel(t *testing.T) {
	t.Parallel()
	p := &noteOnSend{note: "never mail that address"}
	r := newAppRig(t, ollamatest.Gullible(), nil, allowExec)
	r.broker.SetPrompter(p)
	chat, _ := r.op.NewChat(false)
	r.ask(t, chat.ID, "Summarize the emails in my inbox")
	found := false
	for _, req := range r.srv.Requests() {
		for _, m := range req.Messages {
			if m.Role == "tool" && m.ToolName == "send" && strings.Contains(m.Content, "never mail that address") {
				found = true
			}
		}
	}
	if !found {
		t.Fatal("the deny note did not reach the mail spoke's model")
	}
}

// noteOnSend denies send with a note and everything else plainly.
type noteOnSend struct{ note string }

func (n *noteOnSend) Prompt(_ context.Context, r permissions.Request) (permissions.Decision, error) {
	if r.Function == "send" {
		return permissions.Decision{Answer: permissions.AnswerDeny, Note: n.note}, nil
	}
	return permissions.Decision{Answer: permissions.AnswerDeny}, nil
}

// A disabled app leaves the planner's catalog and is never routed to.
func TestDisabledAppLeavesTheCatalog(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible(), permissionstest.NewPrompter(permissions.AnswerDeny), allowExec)
	if err := r.op.SetEnabled("mail", false); err != nil {
		t.Fatal(err)
	}
	if r.op.Enabled("mail") || !r.op.Enabled("drive") {
		t.Fatal("Enabled does not reflect SetEnabled")
	}
	if err := r.op.SetEnabled("nope", false); err == nil {
		t.Fatal("an unknown app was accepted")
	}
	chat, _ := r.op.NewChat(false)
	_, evs := r.ask(t, chat.ID, "Summarize the emails in my inbox")
	for _, e := range evs {
		if e.App == "mail" {
			t.Fatalf("a disabled app ran: %+v", e)
		}
	}
	for _, req := range r.srv.Requests() {
		if len(req.Format) > 0 && strings.Contains(string(req.Format), `"mail.search"`) {
			t.Fatal("the planner was offered a disabled app's functionality")
		}
	}
	if err := r.op.SetEnabled("mail", true); err != nil {
		t.Fatal(err)
	}
	_, evs = r.ask(t, chat.ID, "Summarize the emails in my inbox")
	ran := false
	for _, e := range evs {
		if e.Kind == hub.EventAppResult && e.App == "mail" {
			ran = true
		}
	}
	if !ran {
		t.Fatal("re-enabled mail did not run")
	}
}

// The results card survives a reload: the typed results are logged.
func TestResultsAreLoggedWithTheTurn(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible(), permissionstest.NewPrompter(permissions.AnswerDeny), allowExec)
	chat, _ := r.op.NewChat(false)
	r.ask(t, chat.ID, "Compare the fares from the airport to downtown on metro_hail and quick_ride")
	turns, err := r.op.Turns(chat.ID)
	if err != nil || len(turns) != 1 || len(turns[0].Results) != 2 || turns[0].Results[0].Value == nil {
		t.Fatalf("logged results: %+v %v", turns, err)
	}
}
