package judge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// InstructionLike names the kinds of instruction-like text found in s
// (package guard), for a dialog's warning. It is a second line of
// defence: no judgement below depends on it finding anything.
func InstructionLike(s string) []string { return guard.Kinds(s) }

// InstructionsIn names the kinds of instruction-like text in a call's
// arguments, leaving out the values that are the user's own (typed,
// planned from the user's words, a schema default, as prov traced them):
// a request the user typed ("send an email to bob saying hello") is what
// the user asked for, not an order slipped into the call. Every other
// value — an app's output, an unknown one, one past the trace's bound —
// and every property name is read.
func InstructionsIn(args json.RawMessage, prov []permissions.Provenance) []string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return InstructionLike(string(args))
	}
	own := map[string]bool{}
	for _, p := range prov {
		if p.Trusted() {
			own[p.Path] = true
		}
	}
	var b strings.Builder
	WalkLeaves(v, "", func(path, _ string, leaf any) {
		b.WriteString(path)
		b.WriteString("\n")
		if s, ok := leaf.(string); ok && !own[path] {
			b.WriteString(s)
			b.WriteString("\n")
		}
	})
	return InstructionLike(b.String())
}

// Assessment is the hub's judgement of one request: whether the plan
// expected it (and why not), what cannot be undone, which labels the
// receiver is not cleared for, instruction-like content, and where each
// value came from. apply writes it into the request: the warning line,
// Expected, Concerns, Provenance, Labels.
type Assessment struct {
	Expected     bool
	Why          string // why it is not expected (or, when expected, what the plan says)
	Irreversible bool
	Labels       []string // labels the receiver is not cleared for
	Carried      []string // every label of what the request carries
	Receiver     string
	Instructions []string
	Provenance   []permissions.Provenance
	// inWhy: the labels and instructions are already named in why.
	InWhy bool
	// freeText are fields of free text an app wrote that the request
	// carries to an app outside bulkhead's process.
	FreeText []string
	// choice: it chooses among apps the plan left open (candidates).
	Choice     bool
	Candidates []string
	// declared: the plan expected this flow, and what it carries made it
	// not routine (settled); why then holds the plan's reason.
	Declared bool
	carries  string
	// runsLater are the files the call changes that other programs run
	// or trust later, each with who does ("…: git runs this file before
	// every commit"): the hub's words, from sandbox.Protected.
	RunsLater []string
	// args are the request's arguments (Apply takes them from the
	// request): a value of them not the user's is shown as Shown shows it
	// where it is not plain ASCII.
	args json.RawMessage
}

// foreign lists the decisive values that did not come from the user
// (typed, planned or allowed), as "to ← from mail.read"; a value outside
// plain ASCII with how it shows: "to written by a model, from nothing
// you typed — bob@xn--exmple-4nf.com (U+0430 CYRILLIC SMALL LETTER A)".
func (a Assessment) foreign() []string {
	var out []string
	var leaves map[string]any
	for _, p := range a.Provenance {
		if p.Key && !p.Trusted() {
			w := fmt.Sprintf("%s %s", pathName(p.Path), DescribeSource(p))
			if leaves == nil {
				leaves = map[string]any{}
				var v any
				if json.Unmarshal(a.args, &v) == nil {
					WalkLeaves(v, "", func(path, _ string, leaf any) { leaves[path] = leaf })
				}
			}
			if s, ok := leaves[p.Path].(string); ok {
				if sh := Shown(s); sh != "" {
					w += " — " + sh
				}
			}
			out = append(out, w)
		}
	}
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("and %d more", len(out)-4))
	}
	return out
}

func pathName(p string) string {
	if p == "" {
		return "the value"
	}
	return p
}

// concerns are the risks the judgement found.
func (a Assessment) Concerns() []permissions.Concern {
	a = a.settled()
	var out []permissions.Concern
	if !a.Expected && !a.Declared {
		// A flow the plan declared is not routine for what it carries
		// (its own concern below), not for being unexpected.
		out = append(out, permissions.ConcernUnexpected)
	}
	if a.Irreversible {
		out = append(out, permissions.ConcernIrreversible)
	}
	if len(a.Labels) > 0 {
		out = append(out, permissions.ConcernLabels)
	}
	if len(a.Instructions) > 0 {
		out = append(out, permissions.ConcernInstructions)
	}
	if len(a.foreign()) > 0 {
		out = append(out, permissions.ConcernForeign)
	}
	if len(a.FreeText) > 0 {
		out = append(out, permissions.ConcernFreeText)
	}
	if a.Choice {
		out = append(out, permissions.ConcernChoice)
	}
	if len(a.RunsLater) > 0 {
		out = append(out, permissions.ConcernRunsLater)
	}
	return out
}

// String is the warning line a dialog shows.
func (a Assessment) String() string {
	var parts []string
	switch {
	case a.Declared:
		// The plan declared the flow: the concern is what it carries, and
		// the warning says so rather than that the plan did not expect it.
		d := "declared by the plan"
		if a.Why != "" {
			d += " (" + a.Why + ")"
		}
		parts = append(parts, d+", but NOT expected to carry "+a.carries)
	case a.Expected && a.Why != "":
		// The plan's reason is one part of the warning: a dialog draws it
		// calm and each concern after it on its own.
		parts = append(parts, a.reason())
	case a.Expected:
		parts = append(parts, "expected by the plan")
	case a.Why != "":
		parts = append(parts, "NOT expected by the plan: "+a.Why)
	default:
		parts = append(parts, "NOT expected by the plan")
	}
	if a.Irreversible {
		parts = append(parts, "cannot be undone")
	}
	if len(a.Labels) > 0 && !a.InWhy {
		parts = append(parts, fmt.Sprintf("carries %s data, which %s is not cleared for", strings.Join(a.Labels, ", "), a.Receiver))
	}
	if len(a.Instructions) > 0 {
		parts = append(parts, "instruction-like content ("+strings.Join(a.Instructions, ", ")+")")
	}
	if f := a.foreign(); len(f) > 0 {
		parts = append(parts, "values you did not type: "+strings.Join(f, "; "))
	}
	if len(a.FreeText) > 0 {
		parts = append(parts, fmt.Sprintf("carries free text an app wrote (%s) to %s, which runs outside bulkhead", strings.Join(a.FreeText, ", "), a.Receiver))
	}
	if a.Choice && len(a.Candidates) > 0 {
		parts = append(parts, fmt.Sprintf("the plan leaves the choice among %s to you", strings.Join(a.Candidates, ", ")))
	}
	parts = append(parts, a.RunsLater...)
	return strings.Join(parts, "; ")
}

// settled is the judgement with what the request carries taken into
// account: a flow the plan expected is no longer what it expected when it
// carries data its receiver is not cleared for (invariant 6). Whether
// text reads as instructions does not decide what is expected (the
// detector is a signal, and a concern of its own, never a defence).
func (a Assessment) settled() Assessment {
	if !a.Expected {
		return a
	}
	if len(a.Labels) > 0 {
		a.Expected = false
		a.Declared = true
		a.carries = fmt.Sprintf("%s data, which %s is not cleared for", strings.Join(a.Labels, ", "), a.Receiver)
		a.InWhy = true
	}
	return a
}

// apply writes the judgement into r.
func (a Assessment) Apply(r *permissions.Request) {
	a = a.settled()
	if a.args == nil {
		a.args = r.Args
	}
	r.Warning = a.String()
	r.Expected = a.Expected
	r.Reason = ""
	if a.Expected && a.Why != "" && !a.Declared {
		r.Reason = a.reason()
	}
	r.Irreversible = r.Irreversible || a.Irreversible
	r.Concerns = a.Concerns()
	r.Provenance = a.Provenance
	r.Labels = permissionsLabels(a.Carried)
}

func permissionsLabels(ls []string) []string {
	if len(ls) == 0 {
		return nil
	}
	out := append([]string(nil), ls...)
	sort.Strings(out)
	j := 0
	for i, l := range out {
		if i == 0 || l != out[j-1] {
			out[j] = l
			j++
		}
	}
	return out[:j]
}

// uncleared returns the labels not covered by a clearance.
func Uncleared(labels, clearance []string) []string {
	var out []string
	for _, l := range labels {
		ok := false
		for _, c := range clearance {
			if c == l {
				ok = true
			}
		}
		if !ok {
			out = append(out, l)
		}
	}
	return permissionsLabels(out)
}

// EffectWords says what a function of effect e does, as a clause:
// "reads", "writes", "cannot be undone".
func EffectWords(e apps.Effect) string {
	switch e {
	case apps.EffectRead:
		return "reads"
	case apps.EffectWrite:
		return "writes"
	case apps.EffectIrreversible:
		return "cannot be undone"
	}
	return "does what its app says (" + string(e) + ")"
}

// reason is the plan's reason for an expected request, as the warning's
// first clause: the user's words in it unchanged (Request.Reason).
func (a Assessment) reason() string {
	return "expected by the plan: " + a.Why
}
