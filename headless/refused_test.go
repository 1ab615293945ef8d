package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// A turn that answered but whose step a denial stopped fails the run
// (ErrRefused, wrapped in ErrFailed: exit 1). The plain output says what
// did not run where the answer does not say it already; --json names it
// on the answer event, and writes nothing else.
func TestARefusedStepFailsTheRun(t *testing.T) {
	t.Parallel()
	const refused = "mail.send did not run — the user did not allow send: denied by --on-prompt=deny"
	said := hub.Event{Kind: hub.EventAnswer, Text: "I could not.\n\n" + refused + ".", Refused: []string{refused}}
	unsaid := hub.Event{Kind: hub.EventAnswer, Text: "Here is your summary.", Refused: []string{refused}}
	for _, c := range []struct {
		name    string
		answer  hub.Event
		opts    Options
		errOut  string
		refused bool // in the JSON answer
	}{
		{"the answer says it", said, Options{}, "", false},
		{"the answer does not say it", unsaid, Options{}, "bulkhead: not done: " + refused + "\n", false},
		{"json", unsaid, Options{JSON: true}, "", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var out, errOut bytes.Buffer
			err := Run(context.Background(), scripted{events: []hub.Event{c.answer}}, "q", c.opts, &out, &errOut)
			if !errors.Is(err, ErrRefused) || !errors.Is(err, ErrFailed) {
				t.Fatalf("Run: %v, want ErrRefused and ErrFailed", err)
			}
			if errOut.String() != c.errOut {
				t.Fatalf("stderr %q, want %q", errOut.String(), c.errOut)
			}
			if c.refused {
				var ev Event
				if json.Unmarshal(out.Bytes(), &ev) != nil || ev.Type != "answer" || len(ev.Refused) != 1 || ev.Refused[0] != refused {
					t.Fatalf("the answer event: %s", out.String())
				}
			}
		})
	}
	// Nothing refused: nothing failed.
	var out bytes.Buffer
	if err := Run(context.Background(), scripted{events: []hub.Event{{Kind: hub.EventAnswer, Text: "done"}}}, "q", Options{}, &out, &out); err != nil {
		t.Fatalf("Run: %v", err)
	}
}

// The hint after a dialog no one answered names the most careful policy
// that allows that dialog, and that policy does allow it: expected for
// a routine request, judged for an irreversible one the plan declared
// (expected never allows it, and no rule can), once for one the hub
// warned of; where no policy allows it (a choice among apps), it says
// why and names a rule.
func TestTheHintNamesAPolicyThatAllowsTheDialog(t *testing.T) {
	t.Parallel()
	run := permissions.Request{ID: "r1", Kind: permissions.KindExec, Subject: "hub", Object: "clock", Function: "clock.now", Expected: true}
	send := permissions.Request{ID: "r2", Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send", Expected: true,
		Concerns: []permissions.Concern{permissions.ConcernIrreversible}}
	foreign := send
	foreign.Concerns = append([]permissions.Concern{permissions.ConcernForeign}, send.Concerns...)
	choice := permissions.Request{ID: "r3", Kind: permissions.KindCollab, Subject: "travel", Function: "ride.estimate_fare", Choices: []string{"metro_hail", "quick_ride"},
		Concerns: []permissions.Concern{permissions.ConcernChoice}}
	for _, c := range []struct {
		name   string
		r      permissions.Request
		policy string
		words  []string
	}{
		{"routine", run, "expected", []string{"--on-prompt=expected", "or add a rule"}},
		{"irreversible, declared", send, "judged", []string{"--on-prompt=judged", "not routine (irreversible)", "no rule can allow an irreversible action"}},
		{"warned of", foreign, "once", []string{"--on-prompt=once", "foreign-values, irreversible"}},
		{"a choice among apps", choice, "", []string{"no --on-prompt policy allows this request", "a policy does not choose", "add a rule"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			// The run sees the dialog, its denial and the turn's end.
			r := c.r
			b := scripted{events: []hub.Event{
				{Kind: hub.EventPermission, Permission: &r},
				{Kind: hub.EventDecision, Decision: &permissions.Decision{RequestID: r.ID, Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "not answered"}},
			}, err: fmt.Errorf("permission for %s: %w", r.Kind, permissions.ErrUnanswerable)}
			var out bytes.Buffer
			err := Run(context.Background(), b, "q", Options{}, &out, &out)
			var u *Unanswered
			if !errors.As(err, &u) || u.Request == nil || u.Request.ID != r.ID {
				t.Fatalf("Run: %v, want the dialog no one answered", err)
			}
			hint := u.Hint()
			if c.policy != "" && !strings.Contains(hint, "run bulkhead ask --retry --chat c1 --on-prompt="+c.policy) {
				t.Fatalf("the hint names no retry with %s:\n%s", c.policy, hint)
			}
			for _, w := range c.words {
				if !strings.Contains(hint, w) {
					t.Fatalf("the hint lacks %q:\n%s", w, hint)
				}
			}
			if c.policy == "" {
				return
			}
			// The policy named allows the request (the broker makes any
			// answer but a denial an allow).
			p, _ := OnPrompt(c.policy)
			if d, err := p.Prompt(context.Background(), r); err != nil || d.Answer == permissions.AnswerDeny {
				t.Fatalf("--on-prompt=%s answers %+v, %v", c.policy, d, err)
			}
		})
	}
}
