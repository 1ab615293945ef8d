package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// gate is the hub's side of one app spoke. The operator builds one per
// spoke and hands it only to that spoke, so the gate's app is the caller's
// identity: nothing a spoke says about itself is believed. Which plan step
// a call belongs to comes from the context the operator gave the task
// (withStep), never from the spoke.
type gate struct {
	o    *Operator
	chat string
	app  string
}

var _ spokes.Gate = (*gate)(nil)

// stepKey carries the plan step a spoke's task serves.
type stepKey struct{}

func withStep(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, stepKey{}, id)
}

func stepOf(ctx context.Context) string {
	id, _ := ctx.Value(stepKey{}).(string)
	return id
}

// exchangeKey carries an ISC exchange the user has answered: the call it
// allowed runs in the target spoke without a second dialog.
type exchangeKey struct{}

type exchange struct {
	target, function string
	args             json.RawMessage
}

// expectCall is the judgement of a call of the gate's app's function fn
// with args in the step the context names (judge.ExpectCall).
func (g *gate) expectCall(ctx context.Context, tr *turnRun, fn apps.Function, args json.RawMessage) (bool, string) {
	if tr == nil {
		return false, "no request is running"
	}
	c := judge.Call{App: g.app, Function: fn, Args: args}
	if s, ok := tr.plan.step(stepOf(ctx)); ok {
		c.Step = &s
		a, ok := g.o.opts.Apps.App(g.app)
		if !ok && s.App == g.app {
			return false, "the app is not installed"
		}
		if ok {
			c.Mapped = a.Manifest().Provides[s.Functionality]
		}
		if c.Mapped == fn.Name && s.App == g.app {
			c.N = tr.count("call", s.ID, fn.Name)
		}
	}
	return judge.ExpectCall(c, tr.ledger, tr)
}

// Authorize applies the effect rules to a call of the spoke's own app:
// irreversible asks every time with the exact arguments (invariant 3); a
// write the plan did not expect needs an approval that says so
// (invariant 5); reads are allowed, and logged when not expected. A call
// an answered ISC exchange asked for runs without a second dialog.
func (g *gate) Authorize(ctx context.Context, fn apps.Function, args json.RawMessage) (spokes.Verdict, error) {
	tr := g.o.turn(g.chat)
	if err := g.o.callBudget(tr); err != nil {
		return spokes.Verdict{}, err
	}
	if x, ok := ctx.Value(exchangeKey{}).(exchange); ok && x.target == g.app && x.function == fn.Name && bytes.Equal(x.args, args) {
		return spokes.Verdict{Allowed: true, Expected: true}, nil
	}
	var prov []permissions.Provenance
	if tr != nil {
		prov = tr.ledger.Trace(args, fn.KeyArgs(), g.app, fn.Params)
		if s, ok := tr.plan.step(stepOf(ctx)); ok && s.App == g.app {
			prov = judge.MarkBound(prov, args, s, tr)
		}
	}
	exp, why := g.expectCall(ctx, tr, fn, args)
	planned := false
	if tr != nil {
		if s, ok := tr.plan.step(stepOf(ctx)); ok && s.App == g.app && g.o.mappedFunction(g.app, s.Functionality) == fn.Name {
			planned = true
			if !exp {
				tr.noteUnmet(s.ID, why)
			}
		}
	}
	a := judge.Assessment{Expected: exp, Why: why, Instructions: judge.InstructionsIn(args, prov), Provenance: prov, RunsLater: judge.RunsLater(fn, args)}
	switch fn.Effect {
	case apps.EffectRead:
		switch {
		case !exp && planned:
			// The plan's own function, with values it did not bind.
			g.o.note(tr, "unbound read", g.app, fmt.Sprintf("%s.%s(%s): %s", g.app, fn.Name, clip(string(args), 300), why))
		case !exp:
			g.o.note(tr, "off-plan read", g.app, fmt.Sprintf("%s.%s(%s): %s", g.app, fn.Name, clip(string(args), 300), why))
		}
		return spokes.Verdict{Allowed: true, Expected: exp}, nil
	case apps.EffectWrite:
		if exp && len(a.Concerns()) == 0 {
			return spokes.Verdict{Allowed: true, Expected: true}, nil
		}
		r := permissions.Request{
			Kind: permissions.KindExec, Subject: g.app, Object: g.app, Function: fn.Name, Args: args,
			Detail:  fmt.Sprintf("%s wants to call %s, which writes", g.app, fn.Name),
			Explain: g.o.explain(ctx, tr, g.app, fn.Name, args), ExplainedBy: g.app,
			Change: g.o.change(ctx, tr, g.app, fn.Name, args),
		}
		a.Apply(&r)
		return g.decide(ctx, tr, r)
	default:
		a.Irreversible = true
		r := permissions.Request{
			Kind: permissions.KindIrreversible, Subject: g.app, Object: g.app, Function: fn.Name, Args: args,
			Detail: fmt.Sprintf("%s wants to %s", g.app, fn.Name), Irreversible: true,
			Explain: g.o.explain(ctx, tr, g.app, fn.Name, args), ExplainedBy: g.app,
			Change: g.o.change(ctx, tr, g.app, fn.Name, args),
		}
		a.Apply(&r)
		return g.decide(ctx, tr, r)
	}
}

func (g *gate) decide(ctx context.Context, tr *turnRun, r permissions.Request) (spokes.Verdict, error) {
	d, err := g.o.ask(ctx, tr, r)
	if err != nil {
		return spokes.Verdict{}, err
	}
	return spokes.Verdict{Allowed: d.Allowed, Note: d.Note, Expected: r.Expected}, nil
}

// expectRequest is the judgement of an ISC request of the gate's app for
// functionality fn, answered by target (judge.ExpectRequest).
func (g *gate) expectRequest(ctx context.Context, tr *turnRun, fn, target string, args json.RawMessage, entry apps.Functionality) (bool, string) {
	r := judge.Request{App: g.app, Functionality: fn, Target: target, Effect: g.o.effectOf(target, fn), Entry: entry, Args: args}
	if r.Effect == apps.EffectRead {
		if s, ok := tr.plan.step(stepOf(ctx)); ok {
			r.Step = &s
			if t, ok := tr.routedStep(s.ID, fn, target); ok && s.App == g.app {
				r.Routed = &t
				r.N = tr.count("isc", s.ID, fn)
			}
		}
	}
	return judge.ExpectRequest(r, tr.ledger, tr)
}

// Request is inter-spoke communication (DESIGN.md §2): the caller is the
// gate's app; the functionality is checked against the catalog; an app
// never gets its own functionality; when several other apps provide it,
// the choice is part of the collab dialog (one dialog with every
// candidate, naming the requester and the functionality, never expected,
// never permanent); the
// request and the response are validated against the catalog's schemas
// and each put to the user as a collab permission with the hub's
// judgement. The call runs in the target's spoke without waiting for that
// spoke's own task (spokes.Spoke.Invoke), so two apps asking each other
// cannot deadlock.
func (g *gate) Request(ctx context.Context, functionality string, args json.RawMessage) (json.RawMessage, error) {
	o := g.o
	tr := o.turn(g.chat)
	if tr == nil {
		return nil, errors.New("no request is running")
	}
	if err := o.callBudget(tr); err != nil {
		return nil, err
	}
	entry, ok := o.opts.Apps.Catalog().Get(functionality)
	if !ok {
		o.note(tr, "dropped", g.app, fmt.Sprintf("asked for unknown functionality %q", clip(functionality, 80)))
		return nil, fmt.Errorf("%q is not a catalog functionality", clip(functionality, 80))
	}
	if _, own := o.mustApp(g.app).Manifest().Provides[functionality]; own {
		o.note(tr, "dropped", g.app, fmt.Sprintf("asked the hub for %s, which it provides itself", functionality))
		return nil, fmt.Errorf("%s is this app's own functionality: call the app's function directly", functionality)
	}
	var cands []string
	for _, p := range o.providers(functionality) {
		if p != g.app {
			cands = append(cands, p)
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("no other app provides %s", functionality)
	}
	if err := apps.Validate(entry.Request, args); err != nil {
		o.note(tr, "dropped", g.app, fmt.Sprintf("malformed request for %s: %v", functionality, err))
		return nil, fmt.Errorf("the request for %s was dropped: %v", functionality, err)
	}
	args = apps.Project(entry.Request, args)
	prov := tr.ledger.Trace(args, entry.KeyArgs(), g.app, entry.Request)
	step := stepOf(ctx)
	carried := append(slices.Clone(o.mustApp(g.app).Manifest().Labels), tr.receivedLabels(step)...)
	var target string
	var expected bool
	if len(cands) == 1 {
		c := cands[0]
		exp, why := g.expectRequest(ctx, tr, functionality, c, args, entry)
		if t, ok := tr.routedStep(stepOf(ctx), functionality, c); ok {
			prov = judge.MarkBound(prov, args, t, tr)
		}
		a := judge.Assessment{Expected: exp, Why: why, Instructions: judge.InstructionsIn(args, prov), Provenance: prov,
			Irreversible: o.effectOf(c, functionality) == apps.EffectIrreversible,
			Carried:      carried, Receiver: c}
		a.Labels = judge.Uncleared(a.Carried, o.clearance(c))
		r := permissions.Request{Kind: permissions.KindCollab, Subject: g.app, Object: c, Function: functionality, Args: args,
			Detail: fmt.Sprintf("%s asks %s for %s", g.app, c, functionality), Explain: o.explain(ctx, tr, c, o.mappedFunction(c, functionality), args), ExplainedBy: c}
		a.Apply(&r)
		d, err := o.ask(ctx, tr, r)
		if err != nil {
			return nil, err
		}
		if !d.Allowed {
			return nil, denied("the user did not allow this request", d.Note)
		}
		target, expected = c, exp
	} else {
		// Several apps could answer: one dialog with every candidate, never
		// expected (the plan chose none), never permanent; a rule may
		// choose, a policy never does.
		var labels []string
		for _, c := range cands {
			for _, l := range judge.Uncleared(carried, o.clearance(c)) {
				if !slices.Contains(labels, l) {
					labels = append(labels, l)
				}
			}
		}
		a := judge.Assessment{Expected: false, Why: fmt.Sprintf("%s asked for %s, which %d apps offer (%s): the plan did not choose one", g.app, functionality, len(cands), strings.Join(cands, ", ")),
			Instructions: judge.InstructionsIn(args, prov), Provenance: prov, Choice: true,
			Irreversible: o.effectOf(cands[0], functionality) == apps.EffectIrreversible,
			Carried:      carried, Labels: labels}
		r := permissions.Request{Kind: permissions.KindCollab, Subject: g.app, Function: functionality, Args: args, Choices: cands, NoPermanent: true,
			Detail: fmt.Sprintf("%s asks for %s, which %d apps offer (%s). Which should answer it?", g.app, functionality, len(cands), strings.Join(cands, ", "))}
		a.Apply(&r)
		d, err := o.ask(ctx, tr, r)
		if err != nil {
			return nil, err
		}
		if !d.Allowed || d.Choice == "" {
			return nil, errors.New("the user chose none of the apps that offer " + functionality)
		}
		target = d.Choice
	}
	sp, err := o.spokeFor(tr, target)
	if err != nil {
		return nil, err
	}
	o.recordAppContext(tr, target)
	fnName := o.mustApp(target).Manifest().Provides[functionality]
	o.setWorking(target, +1)
	tr.emit(Event{Kind: EventSpoke, App: target, Working: true})
	tr.emit(Event{Kind: EventAppCall, App: target, Function: fnName, Args: args})
	xctx := context.WithValue(ctx, exchangeKey{}, exchange{target: target, function: fnName, args: args})
	out, err := sp.Invoke(xctx, fnName, args)
	tr.emit(Event{Kind: EventAppResult, App: target, Function: fnName, Result: out, Err: err})
	tr.emit(Event{Kind: EventSpoke, App: target, Working: false})
	o.setWorking(target, -1)
	if err != nil {
		tr.ledger.AppText(target+"."+fnName, err.Error())
		return nil, fmt.Errorf("%s failed: %v", functionality, err)
	}
	if err := apps.Validate(entry.Response, out); err != nil {
		o.note(tr, "dropped", target, fmt.Sprintf("malformed response for %s: %v", functionality, err))
		return nil, fmt.Errorf("the response for %s was dropped: it does not match the catalog", functionality)
	}
	out = apps.Project(entry.Response, out)
	tr.ledger.App(target+"."+fnName, out)
	ra := judge.Assessment{Expected: expected, Instructions: judge.InstructionLike(string(out)),
		Carried: o.labelsOf(target, functionality), Receiver: g.app,
		Provenance: tr.ledger.Trace(out, nil, g.app, nil)}
	ra.Labels = judge.Uncleared(ra.Carried, o.clearance(g.app))
	if expected {
		ra.Why = fmt.Sprintf("the answer to the request the plan expected")
	} else {
		ra.Why = "the answer to a request the plan did not expect"
	}
	r := permissions.Request{Kind: permissions.KindCollab, Subject: target, Object: g.app, Function: functionality + " (response)", Args: out,
		Detail: fmt.Sprintf("Give the %s app's answer for %s back to %s", target, functionality, g.app)}
	ra.Apply(&r)
	d, err := o.ask(ctx, tr, r)
	if err != nil {
		return nil, err
	}
	if !d.Allowed {
		return nil, denied("the user did not allow the answer to be passed back", d.Note)
	}
	tr.ledger.Allowed(g.app, target+"."+fnName, out)
	tr.received(step, ra.Carried)
	return out, nil
}

// routedStep is the step of functionality fn, served by target, that
// step depends on: the plan's own request of fn, if there is one.
func (t *turnRun) routedStep(step, fn, target string) (Step, bool) {
	s, ok := t.plan.step(step)
	if !ok {
		return Step{}, false
	}
	for _, d := range s.DependsOn {
		if x, ok := t.plan.step(d); ok && x.Functionality == fn && x.App == target {
			return x, true
		}
	}
	return Step{}, false
}

// effectOf is the effect of the function app maps functionality to: the
// stricter of the catalog's and the app's own.
func (o *Operator) effectOf(app, functionality string) apps.Effect {
	eff := apps.EffectRead
	if e, ok := o.opts.Apps.Catalog().Get(functionality); ok {
		eff = e.Effect
	}
	if a, ok := o.opts.Apps.App(app); ok {
		if f, ok := a.Manifest().Function(a.Manifest().Provides[functionality]); ok {
			eff = apps.Stricter(eff, f.Effect)
		}
	}
	return eff
}

func denied(msg, note string) error {
	if note != "" {
		msg += ": " + note
	}
	return errors.New(msg)
}

func (o *Operator) mustApp(name string) apps.App {
	a, _ := o.opts.Apps.App(name)
	return a
}

// ErrCallBudget is matched by the error of an app call past the turn's
// budget (Options.CallsPerTurn).
var ErrCallBudget = errors.New("this turn has made as many app calls as it may")

// callBudget counts one app call (or ISC request) of the turn and refuses
// it past Options.CallsPerTurn.
func (o *Operator) callBudget(tr *turnRun) error {
	if tr == nil {
		return nil
	}
	limit := o.opts.CallsPerTurn
	if limit <= 0 {
		limit = DefaultCallsPerTurn
	}
	if n := tr.count("budget", "", ""); n > limit {
		if n == limit+1 {
			o.note(tr, "limit", "hub", fmt.Sprintf("the turn reached its %d app calls (limits.tool_calls_per_turn); later calls are refused", limit))
		}
		return fmt.Errorf("%w (%d, limits.tool_calls_per_turn): answer with what you have", ErrCallBudget, limit)
	}
	return nil
}
