package permissions_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

var netRequest = permissions.Request{
	Kind: permissions.KindNetwork, Subject: "sock", Object: "api.example.com:443",
	Detail: "sock may connect to api.example.com:443", Warning: "Network: sock could send anything it has read.",
}

// held is a lease's holder that counts its stops.
func held(l *permissions.Lease) *atomic.Int32 {
	n := new(atomic.Int32)
	l.Hold("sock", func() { n.Add(1) })
	return n
}

// The access a decision gave lasts as long as what allowed it: a once
// answer and a session grant end with their session (and serve only
// it), a stored grant with its revocation, any grant at its expiry; a
// private turn's broker keeps its leases with the main broker's grants.
// Ending stops every holder once; holding an ended lease stops at once.
func TestLeasesEndWithWhatAllowedThem(t *testing.T) {
	t.Parallel()
	ctxA := permissions.WithSession(context.Background(), "a")
	ctxB := permissions.WithSession(context.Background(), "b")

	t.Run("once", func(t *testing.T) {
		t.Parallel()
		b := newEnv(t).broker(t, permissionstest.NewPrompter(permissions.AnswerOnce))
		d, err := b.Request(ctxA, netRequest)
		if err != nil || !d.Allowed {
			t.Fatal(d, err)
		}
		l := b.Lease("a", d)
		stops := held(l)
		if !l.For(ctxA) || l.For(ctxB) {
			t.Fatal("a once answer serves its session's calls only")
		}
		b.EndSession("b")
		if l.Ended() || stops.Load() != 0 {
			t.Fatal("another session's end ended it")
		}
		b.EndSession("a")
		if !l.Ended() || stops.Load() != 1 {
			t.Fatalf("its session's end must end it: ended %v, %d stops", l.Ended(), stops.Load())
		}
		b.EndSession("a")
		if stops.Load() != 1 {
			t.Fatal("a lease ends once")
		}
		late := new(atomic.Int32)
		l.Hold("late", func() { late.Add(1) })
		if late.Load() != 1 {
			t.Fatal("holding an ended lease must stop at once")
		}
	})

	t.Run("session grant", func(t *testing.T) {
		t.Parallel()
		b := newEnv(t).broker(t, permissionstest.NewPrompter(permissions.AnswerSession))
		d, _ := b.Request(ctxA, netRequest)
		l := b.Lease("a", d)
		stops := held(l)
		if d.GrantID == "" || l.For(ctxB) {
			t.Fatalf("a session grant's lease: %+v", d)
		}
		// b cannot revoke a's session grant, so nothing stops
		if _, err := b.RevokeIn("b", d.GrantID); err == nil || stops.Load() != 0 {
			t.Fatalf("another session revoked it: %v, %d stops", err, stops.Load())
		}
		r, err := b.RevokeIn("a", d.GrantID)
		if err != nil || !slices.Equal(r.Stopped, []string{"sock"}) || stops.Load() != 1 {
			t.Fatalf("revoke: %+v %v, %d stops", r, err, stops.Load())
		}
	})

	t.Run("stored grant", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		b := e.broker(t, permissionstest.NewPrompter(permissions.AnswerPermanent))
		d, _ := b.Request(ctxA, netRequest)
		first := b.Lease("a", d)
		d2, _ := b.Request(ctxB, netRequest) // decided by the grant, in another session
		second := b.Lease("b", d2)
		s1, s2 := held(first), held(second)
		if d2.GrantID != d.GrantID || !first.For(ctxB) || !second.For(ctxA) {
			t.Fatalf("a stored grant serves every session: %+v %+v", d, d2)
		}
		b.EndSession("a")
		if first.Ended() {
			t.Fatal("a stored grant's lease ended with a session")
		}
		r, err := b.RevokeAllIn("", "sock")
		if err != nil || r.N != 1 || !slices.Equal(r.Stopped, []string{"sock"}) || s1.Load() != 1 || s2.Load() != 1 {
			t.Fatalf("revoke all: %+v %v, stops %d %d", r, err, s1.Load(), s2.Load())
		}
	})

	t.Run("expiry", func(t *testing.T) {
		t.Parallel()
		p := permissionstest.NewPrompter(permissions.AnswerSession)
		p.Script(permissions.Decision{Answer: permissions.AnswerSession, Caveats: permissions.Caveats{Expires: time.Now().Add(50 * time.Millisecond)}})
		b, err := permissions.NewBroker(permissions.Options{Prompter: p})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := b.Request(ctxA, netRequest)
		l := b.Lease("a", d)
		stopped := make(chan struct{})
		l.Hold("sock", func() { close(stopped) })
		select {
		case <-stopped:
		case <-time.After(20 * time.Second):
			t.Fatal("an expired grant's lease did not end")
		}
	})

	t.Run("private broker", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		main := e.broker(t, permissionstest.NewPrompter(permissions.AnswerPermanent))
		mustRequest(t, main, netRequest)
		priv, err := permissions.NewBroker(permissions.Options{Grants: main, Prompter: permissionstest.NewPrompter(permissions.AnswerDeny)})
		if err != nil {
			t.Fatal(err)
		}
		d, err := priv.Request(ctxA, netRequest)
		if err != nil || d.Source != permissions.SourceGrant {
			t.Fatalf("the private turn decides by the main grant: %+v %v", d, err)
		}
		stops := held(priv.Lease("a", d))
		r, err := main.RevokeReport(d.GrantID)
		if err != nil || stops.Load() != 1 || !slices.Equal(r.Stopped, []string{"sock"}) {
			t.Fatalf("revoking the main grant must stop the private turn's process: %+v %v", r, err)
		}
	})
}

// What an allow rule allowed lasts while the rules allow it: the rule's
// removal from the config (SetRules) ends it and stops its holders, as
// does a deny or ask rule that now covers it; a change that leaves it
// allowed ends nothing. A private turn's broker's rule lease ends by
// the main broker's rules, and a lease made after the rules changed
// under its decision is ended from the start.
func TestARulesRemovalEndsWhatItAllowed(t *testing.T) {
	t.Parallel()
	ctxA := permissions.WithSession(context.Background(), "a")
	ctxB := permissions.WithSession(context.Background(), "b")
	allowSock := permissions.Rule{Effect: permissions.EffectAllow, Kind: "network", Subject: "sock", Object: "api.example.com:443"}
	allowOther := permissions.Rule{Effect: permissions.EffectAllow, Kind: "network", Subject: "other"}
	// ruled is a broker with rules, whose network request is decided by
	// allowSock, and the lease of that decision, held.
	ruled := func(t *testing.T) (*permissions.Broker, *permissions.Lease, *atomic.Int32) {
		t.Helper()
		b := newEnv(t).broker(t, permissionstest.NewPrompter(permissions.AnswerDeny), allowSock)
		d, err := b.Request(ctxA, netRequest)
		if err != nil || !d.Allowed || d.Source != permissions.SourceRule {
			t.Fatalf("the allow rule must decide: %+v %v", d, err)
		}
		l := b.Lease("a", d)
		return b, l, held(l)
	}

	t.Run("removed", func(t *testing.T) {
		t.Parallel()
		b, l, stops := ruled(t)
		if !l.For(ctxB) {
			t.Fatal("a rule's allow is no session's")
		}
		// Another rule first: allowSock still allows it.
		if err := b.SetRules([]permissions.Rule{allowOther, allowSock}); err != nil {
			t.Fatal(err)
		}
		b.EndSession("a")
		if l.Ended() || stops.Load() != 0 {
			t.Fatal("a change that keeps the rule, or a session's end, ended it")
		}
		if err := b.SetRules([]permissions.Rule{allowOther}); err != nil {
			t.Fatal(err)
		}
		if !l.Ended() || stops.Load() != 1 {
			t.Fatalf("the rule's removal must end what it allowed: ended %v, %d stops", l.Ended(), stops.Load())
		}
	})

	t.Run("denied now", func(t *testing.T) {
		t.Parallel()
		for _, effect := range []permissions.Effect{permissions.EffectDeny, permissions.EffectAsk} {
			b, l, stops := ruled(t)
			over := permissions.Rule{Effect: effect, Kind: "network", Object: "api.example.com:*"}
			if err := b.SetRules([]permissions.Rule{allowSock, over}); err != nil {
				t.Fatal(err)
			}
			if !l.Ended() || stops.Load() != 1 {
				t.Fatalf("an %s rule that now covers it must end it: ended %v, %d stops", effect, l.Ended(), stops.Load())
			}
		}
	})

	t.Run("private broker", func(t *testing.T) {
		t.Parallel()
		main := newEnv(t).broker(t, permissionstest.NewPrompter(permissions.AnswerDeny), allowSock)
		priv, err := permissions.NewBroker(permissions.Options{Grants: main, Rules: main.Rules(), Prompter: permissionstest.NewPrompter(permissions.AnswerDeny)})
		if err != nil {
			t.Fatal(err)
		}
		d, err := priv.Request(ctxA, netRequest)
		if err != nil || d.Source != permissions.SourceRule {
			t.Fatalf("the private turn decides by the rule: %+v %v", d, err)
		}
		stops := held(priv.Lease("a", d))
		if err := main.SetRules(nil); err != nil || stops.Load() != 1 {
			t.Fatalf("the main broker's rule removal must stop the private turn's process: %v, %d stops", err, stops.Load())
		}
	})

	t.Run("removed before the lease", func(t *testing.T) {
		t.Parallel()
		b := newEnv(t).broker(t, permissionstest.NewPrompter(permissions.AnswerDeny), allowSock)
		d, err := b.Request(ctxA, netRequest)
		if err != nil || d.Source != permissions.SourceRule {
			t.Fatalf("%+v %v", d, err)
		}
		if err := b.SetRules(nil); err != nil {
			t.Fatal(err)
		}
		l := b.Lease("a", d)
		if stops := held(l); !l.Ended() || stops.Load() != 1 {
			t.Fatalf("a lease of a rule gone since its decision must end at once: ended %v, %d stops", l.Ended(), stops.Load())
		}
	})
}
