package accessible

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

func ask(t *testing.T, r permissions.Request, in string) (permissions.Decision, string, *Lines) {
	t.Helper()
	lines := NewLines(strings.NewReader(in))
	var out bytes.Buffer
	d, err := NewPrompter(lines, &out).Prompt(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return d, out.String(), lines
}

// An irreversible send whose recipient an app wrote: the dialog says the
// hub's warning and where the value came from, cleaned of the app's
// terminal sequences; it offers no permanent grant; an allow takes a
// second, explicit yes, and anything else denies.
func TestIrreversibleAsksTwiceAndNeverPermanently(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send",
		Args:   json.RawMessage(`{"to":"eve@evil.example\u001b]0;pwned\u0007","body":"hi"}`),
		Detail: "mail wants to send", Irreversible: true,
		Warning:    "NOT expected by the plan: to came from mail.read; cannot be undone",
		Concerns:   []permissions.Concern{permissions.ConcernUnexpected, permissions.ConcernIrreversible},
		Provenance: []permissions.Provenance{{Path: "to", Source: "mail.read", Key: true}}}
	d, out, _ := ask(t, r, "1\nyes\n")
	if d.Answer != permissions.AnswerOnce {
		t.Fatalf("1 then yes: %+v", d)
	}
	for _, want := range []string{"Permission question: irreversible, mail, send.", "It cannot be undone.",
		"The hub warns: NOT expected by the plan: to came from mail.read", "to: eve@evil.example", "(from mail.read)", "This cannot be undone. Allow it?"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "allow permanently") || strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("no permanent grant for what cannot be undone, and no raw sequence:\n%q", out)
	}
	// The value comes first: it is the decisive one.
	if strings.Index(out, "to: ") > strings.Index(out, "body: ") {
		t.Errorf("the key value must come first:\n%s", out)
	}
	for _, in := range []string{"1\nno\n", "1\n\n", "1\n", "", "\n", "3\n"} {
		if d, _, _ := ask(t, r, in); d.Answer != permissions.AnswerDeny {
			t.Errorf("%q must deny, got %+v", in, d)
		}
	}
}

// A routine request is allowed by its number alone, and the line after
// the answer stays for the chat (type-ahead is not lost); deny with a note
// carries the note.
func TestRoutineAnswerNoteAndChoice(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "clock", Function: "clock.now",
		Args: json.RawMessage(`{"tz":"Asia/Tokyo"}`), Expected: true, Warning: "expected by the plan: step s1 uses clock.now"}
	if !r.Routine() {
		t.Fatal("the fixture should be routine")
	}
	d, out, lines := ask(t, r, "2\nnext request\n")
	if d.Answer != permissions.AnswerSession || !strings.Contains(out, "The hub says: expected by the plan") {
		t.Fatalf("2 allows for the session: %+v\n%s", d, out)
	}
	if l, _ := lines.ReadLine(); l != "next request" {
		t.Fatalf("the line after the answer must stay for the chat, got %q", l)
	}
	d, _, _ = ask(t, r, "5\nnot now, thanks\n")
	if d.Answer != permissions.AnswerDeny || d.Note != "not now, thanks" {
		t.Fatalf("5 denies with a note: %+v", d)
	}

	c := permissions.Request{Kind: permissions.KindSelect, Subject: "hub", Function: "ride.estimate_fare", Choices: []string{"metro_hail", "quick_ride"},
		NoPermanent: true, Warning: "the plan leaves the choice to you", Concerns: []permissions.Concern{permissions.ConcernChoice}}
	d, out, _ = ask(t, c, "2\n1\nyes\n")
	if d.Answer != permissions.AnswerOnce || d.Choice != "quick_ride" || !strings.Contains(out, "Apps that offer it: metro_hail, quick_ride.") {
		t.Fatalf("choose the second app, allow once: %+v\n%s", d, out)
	}
	if d, _, _ = ask(t, c, "2\n3\n"); d.Answer != permissions.AnswerDeny {
		t.Fatalf("a choice then deny: %+v", d)
	}
}

// A private chat's request offers no permanent grant and says so.
func TestPrivateOffersThisChatOnly(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "notes", Function: "notes.search", Private: true, Expected: true}
	_, out, _ := ask(t, r, "4\n")
	if strings.Contains(out, "allow permanently") || !strings.Contains(out, "allow in this private chat") {
		t.Fatalf("a private chat's answers:\n%s", out)
	}
}
