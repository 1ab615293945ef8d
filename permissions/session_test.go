package permissions_test

import (
	"context"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// TestSessionsKeepTheirOwnAnswers: one broker serving two client
// sessions — a session grant covers its own session only and goes with
// it, a permanent grant covers both, and trusted-session mode is a
// session's own.
func TestSessionsKeepTheirOwnAnswers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerSession)
	b := e.broker(t, p)
	a := permissions.WithSession(context.Background(), "a")
	bb := permissions.WithSession(context.Background(), "b")

	if d, err := b.Request(a, execNotes); err != nil || d.Source != permissions.SourceUser {
		t.Fatalf("first request of a: %+v %v", d, err)
	}
	if d, _ := b.Request(a, execNotes); d.Source != permissions.SourceGrant {
		t.Fatalf("a's session grant should decide a's next request: %+v", d)
	}
	if d, _ := b.Request(bb, execNotes); d.Source != permissions.SourceUser {
		t.Fatalf("a's session grant decided b's request: %+v", d)
	}
	if n := len(p.Calls()); n != 2 {
		t.Fatalf("%d dialogs, want 2 (one per session)", n)
	}
	if p.Calls()[1].Session != "b" {
		t.Fatalf("the dialog does not say whose it is: %+v", p.Calls()[1])
	}
	b.EndSession("a")
	for _, g := range b.Grants() {
		if g.Session == "a" {
			t.Fatalf("a's grant outlived its session: %+v", g)
		}
	}
	if d, _ := b.Request(a, execNotes); d.Source != permissions.SourceUser {
		t.Fatalf("an ended session's grant still decides: %+v", d)
	}

	// A permanent answer is every session's.
	p.Script(permissions.Decision{Answer: permissions.AnswerPermanent})
	mail := execNotes
	mail.Object = "mail"
	mustRequest(t, b, mail)
	if d, _ := b.Request(bb, mail); d.Source != permissions.SourceGrant {
		t.Fatalf("a permanent grant should cover every session: %+v", d)
	}

	// Trusted-session mode is one session's.
	b.SetTrustedIn("a", true)
	cal := execNotes
	cal.Object = "calendar"
	if d, _ := b.Request(a, cal); d.Source != permissions.SourcePolicy || !d.Allowed {
		t.Fatalf("a is trusted: %+v", d)
	}
	if d, _ := b.Request(bb, cal); d.Source != permissions.SourceUser {
		t.Fatalf("a's trusted mode decided b's request: %+v", d)
	}
	if b.TrustedIn("b") || !b.TrustedIn("a") || b.Trusted() {
		t.Fatal("TrustedIn is not per session")
	}
}

// TestSessionsAskApart: a dialog open in one session does not hold back
// another session's; within one session they still come one at a time.
func TestSessionsAskApart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	p.Gate = make(chan struct{})
	p.Started = make(chan permissions.Request, 4)
	b := e.broker(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan string, 3)
	ask := func(session, object string) {
		r := execNotes
		r.Object = object
		if _, err := b.Request(permissions.WithSession(ctx, session), r); err != nil {
			t.Error(err)
		}
		done <- session + "/" + object
	}
	go ask("a", "one")
	<-p.Started
	go ask("b", "two")
	select {
	case r := <-p.Started:
		if r.Session != "b" {
			t.Fatalf("second dialog from %q", r.Session)
		}
	case <-ctx.Done():
		t.Fatal("b's dialog waited behind a's")
	}
	go ask("a", "three")
	select {
	case r := <-p.Started:
		t.Fatalf("a's second dialog opened while its first showed: %+v", r)
	case <-time.After(100 * time.Millisecond):
	}
	for range 3 {
		p.Gate <- struct{}{}
		<-done
	}
	if p.MaxActive() != 2 {
		t.Fatalf("at most %d dialogs at once, want 2", p.MaxActive())
	}
}
