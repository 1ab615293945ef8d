package tui

import (
	"context"
	"encoding/json"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// draftRequest has a recipient, a path and a number among its arguments.
var draftRequest = permissions.Request{Kind: permissions.KindCollab, Subject: "mail", Object: "files", Function: "files.write_draft",
	Args:   json.RawMessage(`{"to":"bob@example.com","path":"docs/drafts/q3.txt","lines":3}`),
	Detail: "mail asks files to keep a draft", Warning: "expected by the plan", Expected: true}

// recvDecision waits for a dialog's decision, failing the test rather than
// hanging when none comes.
func recvDecision(t *testing.T, got <-chan permissions.Decision) permissions.Decision {
	t.Helper()
	select {
	case d := <-got:
		return d
	case <-time.After(10 * time.Second):
		t.Fatal("the dialog was never answered")
	}
	return permissions.Decision{}
}

// prompt puts req to the dialog and returns where its decision will come.
func prompt(t *testing.T, d *driver, p *Prompter, req permissions.Request) <-chan permissions.Decision {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	out := make(chan permissions.Decision, 1)
	go func() {
		dec, _ := p.Prompt(ctx, req)
		out <- dec
	}()
	d.untilView("the dialog of "+req.Detail, func(string) bool {
		pd := d.model().perm
		return pd != nil && pd.Request().Detail == req.Detail
	})
	d.graceOver()
	return out
}

func caveatDriver(t *testing.T, w, h int) (*driver, *Prompter) {
	t.Helper()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := r.options()
	p := NewPrompter()
	opts.Prompter = p
	return newDriver(t, opts, w, h, atSeen), p
}

// s and p choose the grant's limits before it is saved: the Decision
// carries them; esc goes back to the answers.
func TestCaveatStepChoosesTheLimits(t *testing.T) {
	t.Parallel()
	d, p := caveatDriver(t, 100, 34)
	got := prompt(t, d, p, draftRequest)

	d.key(char('s'))
	if !d.model().perm.Limiting() || !strings.Contains(d.view(), "Limits of this session grant") {
		t.Fatalf("s must open the caveat step:\n%s", d.view())
	}
	d.key(keyEsc)
	v := d.view()
	if d.model().perm == nil || d.model().perm.Limiting() || !strings.Contains(v, "s allow for this session") || p.Pending() != 1 {
		t.Fatalf("esc must go back to the answers, unanswered:\n%s", v)
	}

	d.key(char('p'))
	d.key(keyRight) // expires: 1 hour
	d.key(keyDown)
	d.key(keyRight)
	d.key(keyRight) // uses: 5
	d.key(keyDown)
	d.key(keyRight) // only: the path's folder
	v = d.view()
	for _, want := range []string{"Limits of this permanent grant", "│   expires  1 hour 2 of 4 ", "│   uses     5 3 of 4 ",
		"▸ only     ← only under this folder: path=docs/drafts/ → 2 of 4"} {
		if !strings.Contains(v, want) {
			t.Errorf("caveat step lacks %q:\n%s", want, v)
		}
	}
	if s := d.model().perm.Scope(); s != "allow collab mail → files files.write_draft, only path under docs/drafts/, for 1 hour, 5 uses, permanently" {
		t.Errorf("scope %q", s)
	}
	d.key(keyEnter)
	dec := recvDecision(t, got)
	want := permissions.Caveats{Expires: seenAt.Add(time.Hour), UsesLeft: 5, Args: map[string]string{"path": "docs/drafts/"}}
	if dec.Answer != permissions.AnswerPermanent || !dec.Caveats.Expires.Equal(want.Expires) || dec.Caveats.UsesLeft != 5 || !maps.Equal(dec.Caveats.Args, want.Args) {
		t.Fatalf("decision %+v, want permanent with %+v", dec, want)
	}

	// today, unlimited, the exact recipient.
	got = prompt(t, d, p, draftRequest)
	d.key(char('s'))
	d.key(keyRight)
	d.key(keyRight) // today
	d.key(keyUp)    // wraps to the argument row
	for range 3 {
		d.key(keyRight) // any → folder → path → to
	}
	if v := d.view(); !strings.Contains(v, "← only to this recipient: to=bob@example.com → 4 of 4") {
		t.Fatalf("recipient constraint:\n%s", v)
	}
	d.key(keyEnter)
	dec = recvDecision(t, got)
	midnight := time.Date(2025, 3, 15, 0, 0, 0, 0, time.UTC)
	if dec.Answer != permissions.AnswerSession || !dec.Caveats.Expires.Equal(midnight) || dec.Caveats.UsesLeft != 0 ||
		!maps.Equal(dec.Caveats.Args, map[string]string{"to": "bob@example.com"}) {
		t.Fatalf("decision %+v", dec)
	}

	// o answers at once, with no limits.
	got = prompt(t, d, p, draftRequest)
	d.key(char('o'))
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce || dec.Caveats.Expires.IsZero() == false || dec.Caveats.Args != nil {
		t.Fatalf("once: %+v", dec)
	}
	d.idle()
}

// An irreversible request offers neither s nor p, so it has no caveat step.
func TestIrreversibleDialogHasNoCaveatStep(t *testing.T) {
	t.Parallel()
	d, p := caveatDriver(t, 100, 34)
	send := permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send", Irreversible: true,
		Args: json.RawMessage(`{"to":"bob@example.com"}`), Detail: "mail wants to send", Warning: "expected by the plan; cannot be undone"}
	got := prompt(t, d, p, send)
	for _, k := range []rune{'s', 'p'} {
		d.key(char(k))
		if d.model().perm.Limiting() || strings.Contains(d.view(), "Limits of") || p.Pending() != 1 {
			t.Fatalf("%c on an irreversible request:\n%s", k, d.view())
		}
	}
	// Keys it does not answer are typing: they went to the input box.
	if v := d.model().input.value(); v != "sp" {
		t.Fatalf("s and p must reach the input box, got %q", v)
	}
	d.graceOver()
	d.key(char('o'))
	d.key(keyEnter) // a risky allow is a choice, then enter
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce {
		t.Fatalf("decision %+v", dec)
	}
	d.idle()
}

// A request of a private chat offers no permanent answer, and its
// session grant no limit that would keep the private text; free text
// with a slash is offered no folder.
func TestPrivateRequestsKeepNothing(t *testing.T) {
	t.Parallel()
	d, p := caveatDriver(t, 100, 30)
	req := draftRequest
	req.Private, req.Detail = true, "a private chat's draft"
	req.Args = json.RawMessage(`{"to":"bob@example.com","body":"my results and/or the diagnosis"}`)
	got := prompt(t, d, p, req)
	v := d.view()
	if strings.Contains(v, "allow permanently") || !strings.Contains(v, "allow in this private chat") {
		t.Fatalf("the private dialog:\n%s", v)
	}
	d.key(char('p'))
	if d.model().perm == nil || d.model().perm.Limiting() {
		t.Fatal("p did something in a private chat's dialog")
	}
	d.graceOver() // a key the dialog does not take is typing: it waits again
	d.key(char('s'))
	if v := d.view(); !d.model().perm.Limiting() || !regexp.MustCompile(`only +any arguments \(nothing to limit\)`).MatchString(v) {
		t.Fatalf("the private session grant offers argument limits:\n%s", v)
	}
	d.key(keyEnter)
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerSession || len(dec.Caveats.Args) != 0 {
		t.Fatalf("decision %+v", dec)
	}
}
