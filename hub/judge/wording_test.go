package judge

import (
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// A flow the plan declared that carries labels its receiver is not
// cleared for says so — declared, and not expected to carry them — rather
// than that the plan did not expect it; it stays not routine. An expected
// request's reason is one part of its warning, its concerns the others.
func TestJudgementSaysWhatItFound(t *testing.T) {
	var r permissions.Request
	Assessment{Expected: true, Why: "step s2 binds s1.assessment", Carried: []string{"medical"}, Labels: []string{"medical"}, Receiver: "travel_mate"}.Apply(&r)
	if r.Expected || !strings.HasPrefix(r.Warning, "declared by the plan (step s2 binds s1.assessment), but NOT expected to carry medical data, which travel_mate is not cleared for") {
		t.Errorf("a declared flow with uncleared labels: expected=%v %q", r.Expected, r.Warning)
	}
	if slices.Contains(r.Concerns, permissions.ConcernUnexpected) || !slices.Contains(r.Concerns, permissions.ConcernLabels) || r.Routine() {
		t.Errorf("its concern is the labels, and it is not routine: %v", r.Concerns)
	}

	var u permissions.Request
	Assessment{Expected: false, Why: "no step of the plan runs mail here", Carried: []string{"medical"}, Labels: []string{"medical"}, Receiver: "mail"}.Apply(&u)
	if !strings.HasPrefix(u.Warning, "NOT expected by the plan: no step of the plan runs mail here") || !slices.Contains(u.Concerns, permissions.ConcernUnexpected) {
		t.Errorf("an undeclared flow stays NOT expected: %q %v", u.Warning, u.Concerns)
	}

	var x permissions.Request
	Assessment{Expected: true, Why: "step s1, one call of send; bound by the plan", Irreversible: true}.Apply(&x)
	// The reason is the warning's first clause whole — the user's words
	// in it unchanged, a semicolon included — and the concerns follow.
	if x.Reason != "expected by the plan: step s1, one call of send; bound by the plan" || x.Warning != x.Reason+"; cannot be undone" {
		t.Errorf("the plan's reason is one part, the concern another: reason %q, warning %q", x.Reason, x.Warning)
	}
	for e, want := range map[string]string{"read": "reads", "write": "writes", "irreversible": "cannot be undone"} {
		if got := EffectWords(apps.Effect(e)); got != want {
			t.Errorf("EffectWords(%s) = %q, want %q", e, got, want)
		}
	}
}

// The user's words are quoted as they wrote them: a backslash they typed
// is one backslash, a quote mark theirs, nothing escaped.
func TestYourWordsAreQuotedAsWritten(t *testing.T) {
	t.Parallel()
	q := `run: printf 'line one\nline two' "x"`
	if got := (Binding{Arg: "command", Value: "printf", Quote: q}).Describe(); got != `bound by the plan from your words: "`+q+`"` {
		t.Errorf("Describe: %s", got)
	}
}
