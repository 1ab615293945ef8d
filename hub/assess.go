package hub

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// instructionLike names the kinds of instruction-like text found in s
// (package guard), for a dialog's warning. It is a second line of
// defence: no judgement below depends on it finding anything.
func instructionLike(s string) []string { return guard.Kinds(s) }

// instructionsIn names the kinds of instruction-like text in a call's
// arguments, leaving out the values that are the user's own (typed,
// planned from the user's words, a schema default, as prov traced them):
// a request the user typed ("send an email to bob saying hello") is what
// the user asked for, not an order slipped into the call. Every other
// value — an app's output, an unknown one, one past the trace's bound —
// and every property name is read.
func instructionsIn(args json.RawMessage, prov []permissions.Provenance) []string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return instructionLike(string(args))
	}
	own := map[string]bool{}
	for _, p := range prov {
		if p.Trusted() {
			own[p.Path] = true
		}
	}
	var b strings.Builder
	walkLeaves(v, "", func(path, _ string, leaf any) {
		b.WriteString(path)
		b.WriteString("\n")
		if s, ok := leaf.(string); ok && !own[path] {
			b.WriteString(s)
			b.WriteString("\n")
		}
	})
	return instructionLike(b.String())
}

// assessment is the hub's judgement of one request: whether the plan
// expected it (and why not), what cannot be undone, which labels the
// receiver is not cleared for, instruction-like content, and where each
// value came from. apply writes it into the request: the warning line,
// Expected, Concerns, Provenance, Labels.
type assessment struct {
	expected     bool
	why          string // why it is not expected (or, when expected, what the plan says)
	irreversible bool
	labels       []string // labels the receiver is not cleared for
	carried      []string // every label of what the request carries
	receiver     string
	instructions []string
	provenance   []permissions.Provenance
	// inWhy: the labels and instructions are already named in why.
	inWhy bool
	// freeText are fields of free text an app wrote that the request
	// carries to an app outside bulkhead's process.
	freeText []string
	// choice: it chooses among apps the plan left open (candidates).
	choice     bool
	candidates []string
	// declared: the plan expected this flow, and what it carries made it
	// not routine (settled); why then holds the plan's reason.
	declared  bool
	uncleared string
	// runsLater are the files the call changes that other programs run
	// or trust later, each with who does ("…: git runs this file before
	// every commit"): the hub's words, from sandbox.Protected.
	runsLater []string
}

// foreign lists the decisive values that did not come from the user
// (typed, planned or allowed), as "to ← from mail.read".
func (a assessment) foreign() []string {
	var out []string
	for _, p := range a.provenance {
		if p.Key && !p.Trusted() {
			out = append(out, fmt.Sprintf("%s %s", pathName(p.Path), describeSource(p)))
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
func (a assessment) concerns() []permissions.Concern {
	a = a.settled()
	var out []permissions.Concern
	if !a.expected && !a.declared {
		// A flow the plan declared is not routine for what it carries
		// (its own concern below), not for being unexpected.
		out = append(out, permissions.ConcernUnexpected)
	}
	if a.irreversible {
		out = append(out, permissions.ConcernIrreversible)
	}
	if len(a.labels) > 0 {
		out = append(out, permissions.ConcernLabels)
	}
	if len(a.instructions) > 0 {
		out = append(out, permissions.ConcernInstructions)
	}
	if len(a.foreign()) > 0 {
		out = append(out, permissions.ConcernForeign)
	}
	if len(a.freeText) > 0 {
		out = append(out, permissions.ConcernFreeText)
	}
	if a.choice {
		out = append(out, permissions.ConcernChoice)
	}
	if len(a.runsLater) > 0 {
		out = append(out, permissions.ConcernRunsLater)
	}
	return out
}

// String is the warning line a dialog shows.
func (a assessment) String() string {
	var parts []string
	switch {
	case a.declared:
		// The plan declared the flow: the concern is what it carries, and
		// the warning says so rather than that the plan did not expect it.
		d := "declared by the plan"
		if a.why != "" {
			d += " (" + a.why + ")"
		}
		parts = append(parts, d+", but NOT expected to carry "+a.uncleared)
	case a.expected && a.why != "":
		// The plan's reason is one part of the warning: a dialog draws it
		// calm and each concern after it on its own.
		parts = append(parts, "expected by the plan: "+strings.ReplaceAll(a.why, "; ", ", "))
	case a.expected:
		parts = append(parts, "expected by the plan")
	case a.why != "":
		parts = append(parts, "NOT expected by the plan: "+a.why)
	default:
		parts = append(parts, "NOT expected by the plan")
	}
	if a.irreversible {
		parts = append(parts, "cannot be undone")
	}
	if len(a.labels) > 0 && !a.inWhy {
		parts = append(parts, fmt.Sprintf("carries %s data, which %s is not cleared for", strings.Join(a.labels, ", "), a.receiver))
	}
	if len(a.instructions) > 0 {
		parts = append(parts, "instruction-like content ("+strings.Join(a.instructions, ", ")+")")
	}
	if f := a.foreign(); len(f) > 0 {
		parts = append(parts, "values you did not type: "+strings.Join(f, "; "))
	}
	if len(a.freeText) > 0 {
		parts = append(parts, fmt.Sprintf("carries free text an app wrote (%s) to %s, which runs outside bulkhead", strings.Join(a.freeText, ", "), a.receiver))
	}
	if a.choice && len(a.candidates) > 0 {
		parts = append(parts, fmt.Sprintf("the plan leaves the choice among %s to you", strings.Join(a.candidates, ", ")))
	}
	parts = append(parts, a.runsLater...)
	return strings.Join(parts, "; ")
}

// settled is the judgement with what the request carries taken into
// account: a flow the plan expected is no longer what it expected when it
// carries data its receiver is not cleared for (invariant 6). Whether
// text reads as instructions does not decide what is expected (the
// detector is a signal, and a concern of its own, never a defence).
func (a assessment) settled() assessment {
	if !a.expected {
		return a
	}
	if len(a.labels) > 0 {
		a.expected = false
		a.declared = true
		a.uncleared = fmt.Sprintf("%s data, which %s is not cleared for", strings.Join(a.labels, ", "), a.receiver)
		a.inWhy = true
	}
	return a
}

// apply writes the judgement into r.
func (a assessment) apply(r *permissions.Request) {
	a = a.settled()
	r.Warning = a.String()
	r.Expected = a.expected
	r.Irreversible = r.Irreversible || a.irreversible
	r.Concerns = a.concerns()
	r.Provenance = a.provenance
	r.Labels = permissionsLabels(a.carried)
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
func uncleared(labels, clearance []string) []string {
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

// effectWords says what a function of effect e does, as a clause:
// "reads", "writes", "cannot be undone".
func effectWords(e apps.Effect) string {
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
