package judge

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Call is what the hub knows of one call an app's spoke makes of its own
// app's function, for ExpectCall.
type Call struct {
	App      string // the app whose spoke calls (the gate's: its identity)
	Function apps.Function
	Args     json.RawMessage
	// Step is the plan's step the call serves (the context the operator
	// gave the task says which), nil when no step of the plan runs App
	// here.
	Step *Step
	// Mapped is the function Step's functionality maps to in App.
	Mapped string
	// N counts the calls of Function in Step, this one included.
	N int
}

// ExpectCall judges a call: expected when a step of the plan runs the
// app here, the function is the one its functionality maps to, it is the
// step's first call of it, every decisive argument equals one of the
// step's bindings for it (unbound: a flag left at its default, an empty
// value), and — for a call that writes or cannot be undone — no other
// argument carries an address, a URL or a path that is not in the
// request or a binding. why says what the plan expects, or why this call
// is not it.
func ExpectCall(c Call, l *Ledger, vals Values) (bool, string) {
	if c.Step == nil || c.Step.App != c.App {
		return false, fmt.Sprintf("no step of the plan runs %s here", c.App)
	}
	s := *c.Step
	if c.Mapped != c.Function.Name {
		return false, fmt.Sprintf("step %s uses %s, not %s.%s", s.ID, s.Functionality, c.App, c.Function.Name)
	}
	if c.N > 1 {
		return false, fmt.Sprintf("call %d of %s in step %s, which expects one", c.N, c.Function.Name, s.ID)
	}
	keys := c.Function.KeyArgs()
	if why := Unbound(c.Args, keys, c.Function.Params, s, c.App, l, vals); why != "" {
		return false, why
	}
	if c.Function.Effect != apps.EffectRead {
		if why := CarriesUntyped(c.Args, keys, c.App, l); why != "" {
			return false, why
		}
	}
	return true, fmt.Sprintf("step %s, one call of %s%s", s.ID, c.Function.Name, BoundWords(c.Args, keys, s, vals))
}

// Request is what the hub knows of one ISC request, for ExpectRequest.
type Request struct {
	App           string // the requesting app (the gate's)
	Functionality string
	Target        string      // the app that would answer it
	Effect        apps.Effect // what the target's function does
	Entry         apps.Functionality
	Args          json.RawMessage
	// Step is the requesting app's step, nil when no step of the plan
	// runs App here; Routed is the step of Functionality, served by
	// Target, that Step depends on (nil: the plan routes none).
	Step, Routed *Step
	// N counts the requests for Functionality in Step, this one included.
	N int
}

// ExpectRequest judges an ISC request: expected only for a functionality
// that reads, when the plan routes it to the requesting app's step (the
// step depends on a step of it, served by the target), it is the step's
// first request for it, and every decisive argument is the user's own
// for that routed step. A request that writes or cannot be undone is
// never what the plan expected of an app: the plan runs those as steps
// of their own.
func ExpectRequest(r Request, l *Ledger, vals Values) (bool, string) {
	if r.Effect != apps.EffectRead {
		return false, fmt.Sprintf("%s asks another app for %s, which %s: the plan runs such work as a step of its own", r.App, r.Functionality, EffectWords(r.Effect))
	}
	if r.Step == nil || r.Step.App != r.App {
		return false, fmt.Sprintf("no step of the plan runs %s here", r.App)
	}
	if r.Routed == nil {
		return false, fmt.Sprintf("the plan does not route %s to step %s (the %s app)", r.Functionality, r.Step.ID, r.App)
	}
	if r.N > 1 {
		return false, fmt.Sprintf("request %d for %s in step %s, which expects one", r.N, r.Functionality, r.Step.ID)
	}
	// The request is the plan's own step of the functionality: its values
	// are that step's bindings.
	keys := r.Entry.KeyArgs()
	if why := Unbound(r.Args, keys, r.Entry.Request, *r.Routed, r.App, l, vals); why != "" {
		return false, why
	}
	return true, fmt.Sprintf("step %s gets %s from %s, as step %s%s", r.Step.ID, r.Functionality, r.Target, r.Routed.ID, BoundWords(r.Args, keys, *r.Routed, vals))
}

// Unbound says why the decisive values of args are not what step s
// declares ("" when they are): each string and number must equal one of
// the step's bindings for its argument (a literal of the request, a
// field of an earlier step's result, a hub entity) — a value the user
// typed in an earlier turn, or for another step, or a value of data the
// user let flow, is not a binding; each boolean or null must be the
// function's default (false or null when it declares none), and an empty
// string counts as none, unless the step binds the argument. A value
// outside plain ASCII is said as Shown shows it, and what of the request
// it imitates (Ledger.LookAlike).
func Unbound(args json.RawMessage, keys []string, params json.RawMessage, s Step, app string, l *Ledger, vals Values) string {
	var v map[string]any
	if json.Unmarshal(args, &v) != nil {
		return ""
	}
	defaults := SchemaDefaults(params)
	var why string
	for _, k := range keys {
		x, ok := v[k]
		if !ok || why != "" {
			continue
		}
		bound := Bound(s, k, vals)
		WalkLeaves(x, k, func(path, _ string, leaf any) {
			if why != "" {
				return
			}
			if len(bound) == 0 {
				switch lf := leaf.(type) {
				case bool, nil:
					d, has := defaults[k]
					if has && path == k && JSONEqual(d, leaf) || !has && (leaf == nil || leaf == false) {
						return
					}
					why = fmt.Sprintf("%s is %v, which the plan did not bind", path, leaf)
					return
				case string:
					if NormValue(lf) == "" {
						return
					}
				}
				src, via := l.SourceFor(leaf, k, app)
				// A binding of the plan the request leaves no single
				// reading is still the plan's: said as such (doubtedWords).
				none := "no binding in the plan"
				if slices.ContainsFunc(s.Doubted, func(b Binding) bool { return b.Arg == k }) {
					none = "no binding the hub takes as yours"
				}
				why = fmt.Sprintf("%s has %s (the value came %s)", path, none, l.describeValue(leaf, src, via))
				if str, ok := leaf.(string); ok && Shown(str) != "" {
					why += fmt.Sprintf("; %s is %s", path, ValueWords(str, 80))
				}
				if src != permissions.ProvenanceDoubted {
					why += s.doubtedWords(k, leaf)
				}
				return
			}
			for _, b := range bound {
				if SameValue(leaf, b.V) {
					return
				}
			}
			src, via := l.SourceFor(leaf, k, app)
			why = fmt.Sprintf("%s is %s, not what the plan bound (%s); the value came %s", path, ValueWords(leaf, 80), bound[0].Words(), l.describeValue(leaf, src, via))
			if src != permissions.ProvenanceDoubted {
				why += s.doubtedWords(k, leaf)
			}
		})
	}
	return why
}

// doubtedWords says, for a value of arg that no binding of s gives, which
// literal the plan bound to arg that the request leaves no single
// reading (the one the value equals, else the first), with why and the
// user's own sentence ("" when none).
func (s Step) doubtedWords(arg string, leaf any) string {
	var d *Binding
	for i, b := range s.Doubted {
		if b.Arg != arg {
			continue
		}
		if SameValue(leaf, b.Value) || b.Means != nil && SameValue(leaf, meant(*b.Means)) {
			d = &s.Doubted[i]
			break
		}
		if d == nil {
			d = &s.Doubted[i]
		}
	}
	if d == nil {
		return ""
	}
	return fmt.Sprintf("; the plan bound the argument %s to %q, which your words leave no single reading: %s — you wrote “%s”", arg, clip(d.Value, 60), d.Why, d.Quote)
}

// BoundWords says, for an expected call, which bindings its decisive
// values equal: " (to bound by the plan from your words: …)".
func BoundWords(args json.RawMessage, keys []string, s Step, vals Values) string {
	var v map[string]any
	if json.Unmarshal(args, &v) != nil {
		return ""
	}
	var parts []string
	for _, k := range keys {
		x, ok := v[k]
		if !ok {
			continue
		}
		// The words of the binding the value matched, never another's.
		bs := Bound(s, k, vals)
		WalkLeaves(x, k, func(path, _ string, leaf any) {
			for _, b := range bs {
				if SameValue(leaf, b.V) {
					parts = append(parts, path+" "+b.B.Describe())
					return
				}
			}
		})
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, "; ") + ")"
}

// CarriesUntyped says which argument besides the decisive ones carries
// an address, a URL or a path the user did not type ("" when none does).
func CarriesUntyped(args json.RawMessage, keys []string, app string, l *Ledger) string {
	var v map[string]any
	if json.Unmarshal(args, &v) != nil {
		return ""
	}
	var why string
	WalkLeaves(v, "", func(path, top string, leaf any) {
		s, ok := leaf.(string)
		if !ok || why != "" || containsString(keys, top) {
			return
		}
		if atoms := l.UntypedAtoms(s, app); len(atoms) > 0 {
			why = fmt.Sprintf("%s carries %s, which you did not type", path, strings.Join(atoms, ", "))
		}
	})
	return why
}

// RunsLater names, for a call that changes files (apps.Function.Changes),
// each file it would change that another program runs or trusts later,
// and who does: what the dialog says, in the hub's words.
func RunsLater(fn apps.Function, args json.RawMessage) []string {
	if len(fn.Changes) == 0 || fn.Effect == apps.EffectRead {
		return nil
	}
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return nil
	}
	var out []string
	for _, k := range fn.Changes {
		p, ok := m[k].(string)
		if !ok {
			continue
		}
		if runs, ok := sandbox.Runs(p); ok {
			out = append(out, fmt.Sprintf("%s: %s — a change to it outlives this call", clip(p, 120), runs))
		}
	}
	return out
}
