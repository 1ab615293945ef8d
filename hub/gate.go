package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// gate is the hub's side of one app spoke. The operator builds one per
// spoke and hands it only to that spoke, so the gate's app is the caller's
// identity: nothing a spoke says about itself is believed.
type gate struct {
	o    *Operator
	chat string
	app  string
}

var _ spokes.Gate = (*gate)(nil)

// expected reports whether the running plan gives app a step whose
// functionality maps to fn.
func (g *gate) expected(tr *turnRun, fn string) bool {
	if tr == nil {
		return false
	}
	a, ok := g.o.opts.Apps.App(g.app)
	if !ok {
		return false
	}
	for _, s := range tr.plan.Steps {
		if s.App == g.app && a.Manifest().Provides[s.Functionality] == fn {
			return true
		}
	}
	return false
}

// Authorize applies the effect rules to a call of the spoke's own app:
// irreversible asks every time with the exact arguments (invariant 3); a
// write the plan did not contain needs an approval that says so
// (invariant 5); reads are allowed, and logged when off the plan.
func (g *gate) Authorize(ctx context.Context, fn apps.Function, args json.RawMessage) (spokes.Verdict, error) {
	tr := g.o.turn(g.chat)
	exp := g.expected(tr, fn.Name)
	query := ""
	if tr != nil {
		query = tr.query
	}
	a := assessment{expected: exp, instructions: instructionLike(string(args)), foreign: foreignValues(args, query)}
	switch fn.Effect {
	case apps.EffectRead:
		if !exp {
			g.o.note(tr, "off-plan read", g.app, fmt.Sprintf("%s.%s(%s)", g.app, fn.Name, args))
		}
		return spokes.Verdict{Allowed: true}, nil
	case apps.EffectWrite:
		if exp {
			return spokes.Verdict{Allowed: true}, nil
		}
		a.extra = "writes"
		return g.decide(ctx, tr, permissions.Request{
			Kind: permissions.KindExec, Subject: g.app, Object: g.app, Function: fn.Name, Args: args,
			Detail:  fmt.Sprintf("%s wants to call %s, which writes and was not in the plan", g.app, fn.Name),
			Warning: a.String(), Expected: false,
		})
	default:
		a.irreversible = true
		return g.decide(ctx, tr, permissions.Request{
			Kind: permissions.KindIrreversible, Subject: g.app, Object: g.app, Function: fn.Name, Args: args,
			Detail:  fmt.Sprintf("%s wants to %s", g.app, fn.Name),
			Warning: a.String(), Expected: exp, Irreversible: true,
		})
	}
}

func (g *gate) decide(ctx context.Context, tr *turnRun, r permissions.Request) (spokes.Verdict, error) {
	d, err := g.o.ask(ctx, tr, r)
	if err != nil {
		return spokes.Verdict{}, err
	}
	return spokes.Verdict{Allowed: d.Allowed, Note: d.Note}, nil
}

// Request is inter-spoke communication (DESIGN.md §2): the caller is the
// gate's app; the functionality is checked against the plan and the
// catalog; both sides get ephemeral ids; the request and the response are
// validated against the catalog's schemas and each put to the user as a
// collab permission with the hub's assessment.
func (g *gate) Request(ctx context.Context, functionality string, args json.RawMessage) (json.RawMessage, error) {
	o := g.o
	tr := o.turn(g.chat)
	if tr == nil {
		return nil, errors.New("no request is running")
	}
	entry, ok := o.opts.Apps.Catalog().Get(functionality)
	if !ok {
		o.note(tr, "dropped", g.app, fmt.Sprintf("asked for unknown functionality %q", functionality))
		return nil, fmt.Errorf("%q is not a catalog functionality", functionality)
	}
	var target string
	var cands []string
	for _, p := range o.providers(functionality) {
		if p != g.app {
			cands = append(cands, p)
		}
	}
	switch len(cands) {
	case 0:
		return nil, fmt.Errorf("no other app provides %s", functionality)
	case 1:
		target = cands[0]
	default:
		plan, err := o.resolveApps(ctx, tr, Plan{Steps: []Step{{ID: "isc", Functionality: functionality}}})
		if err != nil {
			return nil, err
		}
		target = plan.Steps[0].App
	}
	if err := apps.Validate(entry.Request, args); err != nil {
		o.note(tr, "dropped", g.app, fmt.Sprintf("malformed request for %s: %v", functionality, err))
		return nil, fmt.Errorf("the request for %s was dropped: %v", functionality, err)
	}
	inPlan := false
	for _, s := range tr.plan.Steps {
		if s.Functionality == functionality {
			inPlan = true
		}
	}
	caller, callee := "spoke-"+newID(), "spoke-"+newID()
	a := assessment{expected: inPlan, instructions: instructionLike(string(args)), foreign: foreignValues(args, tr.query),
		labels: uncleared(o.labelsOf(target, functionality), o.clearance(g.app)), receiver: g.app}
	d, err := o.ask(ctx, tr, permissions.Request{
		Kind: permissions.KindCollab, Subject: g.app, Object: target, Function: functionality, Args: args,
		Detail:  fmt.Sprintf("%s asks %s for %s (exchange %s → %s)", g.app, target, functionality, caller, callee),
		Warning: a.String(), Expected: inPlan, Irreversible: entry.Effect == apps.EffectIrreversible,
	})
	if err != nil {
		return nil, err
	}
	if !d.Allowed {
		return nil, denied("the user did not allow this request", d.Note)
	}
	sp, err := o.spokeFor(tr, target)
	if err != nil {
		return nil, err
	}
	fnName := o.mustApp(target).Manifest().Provides[functionality]
	o.setWorking(target, +1)
	tr.emit(Event{Kind: EventSpoke, App: target, Working: true})
	tr.emit(Event{Kind: EventAppCall, App: target, Function: fnName, Args: args})
	out, err := sp.Invoke(ctx, fnName, args)
	tr.emit(Event{Kind: EventAppResult, App: target, Function: fnName, Result: out, Err: err})
	tr.emit(Event{Kind: EventSpoke, App: target, Working: false})
	o.setWorking(target, -1)
	if err != nil {
		return nil, fmt.Errorf("%s failed: %v", functionality, err)
	}
	if err := apps.Validate(entry.Response, out); err != nil {
		o.note(tr, "dropped", target, fmt.Sprintf("malformed response for %s: %v", functionality, err))
		return nil, fmt.Errorf("the response for %s was dropped: it does not match the catalog", functionality)
	}
	ra := assessment{expected: inPlan, instructions: instructionLike(string(out)),
		labels: uncleared(o.labelsOf(target, functionality), o.clearance(g.app)), receiver: g.app}
	d, err = o.ask(ctx, tr, permissions.Request{
		Kind: permissions.KindCollab, Subject: target, Object: g.app, Function: functionality + " (response)", Args: out,
		Detail:  fmt.Sprintf("Give %s's answer for %s back to %s (exchange %s → %s)", target, functionality, g.app, callee, caller),
		Warning: ra.String(), Expected: inPlan,
	})
	if err != nil {
		return nil, err
	}
	if !d.Allowed {
		return nil, denied("the user did not allow the answer to be passed back", d.Note)
	}
	return out, nil
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
