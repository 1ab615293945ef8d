package permissions_test

import (
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// A stored grant's earlier bytes, written back, decide nothing: not a
// spent grant's, not a revoked one's, not a copy from before a use (more
// uses left), not one whose ledger entry was removed with it. Each is
// kept as invalid, and the request is put to the user again. The grant as
// it stands now still decides (the control).
func TestReplayedGrantsDecideNothing(t *testing.T) {
	t.Parallel()
	permanentFor := func(uses int) permissions.Decision {
		return permissions.Decision{Answer: permissions.AnswerPermanent, Caveats: permissions.Caveats{UsesLeft: uses}}
	}
	cases := []struct {
		name  string
		uses  int
		after func(t *testing.T, e *env, b *permissions.Broker, id string) // what happens between the copy and its return
		extra func(e *env, id string)                                      // what else the attacker does
		ok    bool
	}{
		{name: "current (control)", uses: 3, after: func(t *testing.T, e *env, b *permissions.Broker, id string) {}, ok: true},
		{name: "spent", uses: 1, after: func(t *testing.T, e *env, b *permissions.Broker, id string) {
			mustRequest(t, b, execNotes)
		}},
		{name: "used since", uses: 3, after: func(t *testing.T, e *env, b *permissions.Broker, id string) {
			mustRequest(t, b, execNotes)
		}},
		{name: "revoked", uses: 0, after: func(t *testing.T, e *env, b *permissions.Broker, id string) {
			if err := b.Revoke(id); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "revoked, ledger entry removed too", uses: 0, after: func(t *testing.T, e *env, b *permissions.Broker, id string) {
			if err := b.Revoke(id); err != nil {
				t.Fatal(err)
			}
		}, extra: func(e *env, id string) { _ = e.kv.Delete("ledger/" + id) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := permissionstest.NewPrompter(permissions.AnswerOnce)
			p.Script(permanentFor(c.uses))
			b := e.broker(t, p)
			id := mustRequest(t, b, execNotes).GrantID
			copied, err := e.kv.Get("grants/" + id)
			if err != nil {
				t.Fatal(err)
			}
			c.after(t, e, b, id)
			if err := e.kv.Set("grants/"+id, copied); err != nil {
				t.Fatal(err)
			}
			if c.extra != nil {
				c.extra(e, id)
			}
			p2 := permissionstest.NewPrompter(permissions.AnswerOnce)
			b2 := e.broker(t, p2)
			d := mustRequest(t, b2, execNotes)
			if c.ok {
				if d.Source != permissions.SourceGrant {
					t.Fatalf("the current grant must decide: %+v", d)
				}
				return
			}
			if d.Source != permissions.SourceUser || len(p2.Calls()) != 1 {
				t.Fatalf("a grant written back decided: %+v", d)
			}
			if inv := b2.Invalid(); len(inv) != 1 || inv[0].ID != id {
				t.Fatalf("the written-back grant must be listed invalid: %+v", inv)
			}
		})
	}
}

// A grant stored before the ledger is taken once and written again
// under it; its old bytes, written back after that, decide nothing.
func TestGrantsFromBeforeTheLedger(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.broker(t, nil)
	g := permissions.Grant{ID: "legacy1", Kind: permissions.KindExec, Subject: "hub", Object: "notes", Permanent: true, Origin: "dialog", Created: time.Now()}
	if err := b.PutLegacyGrant(g); err != nil {
		t.Fatal(err)
	}
	old, _ := e.kv.Get("grants/legacy1")
	b2 := e.broker(t, nil)
	if d := mustRequest(t, b2, execNotes); d.Source != permissions.SourceGrant {
		t.Fatalf("a grant from before the ledger must still count: %+v", d)
	}
	if _, err := e.kv.Get("ledger/legacy1"); err != nil {
		t.Fatalf("it must be in the ledger now: %v", err)
	}
	_ = e.kv.Set("grants/legacy1", old)
	b3 := e.broker(t, permissionstest.NewPrompter(permissions.AnswerDeny))
	if d := mustRequest(t, b3, execNotes); d.Source == permissions.SourceGrant {
		t.Fatalf("its old bytes written back decided: %+v", d)
	}
}

// Once the store holds a ledger, a grant without a generation is an old
// copy: one from before the ledger, spent since, written back with its
// ledger entry removed decides nothing.
func TestPreLedgerGrantsCannotComeBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.broker(t, nil)
	g := permissions.Grant{ID: "legacy2", Kind: permissions.KindExec, Subject: "hub", Object: "notes", Permanent: true, Origin: "dialog", Created: time.Now(),
		Caveats: permissions.Caveats{UsesLeft: 1}}
	if err := b.PutLegacyGrant(g); err != nil {
		t.Fatal(err)
	}
	old, _ := e.kv.Get("grants/legacy2")
	b2 := e.broker(t, nil)
	if d := mustRequest(t, b2, execNotes); d.Source != permissions.SourceGrant {
		t.Fatalf("a grant from before the ledger must still count once: %+v", d)
	}
	_ = e.kv.Set("grants/legacy2", old)
	_ = e.kv.Delete("ledger/legacy2")
	p := permissionstest.NewPrompter(permissions.AnswerDeny)
	b3 := e.broker(t, p)
	if d := mustRequest(t, b3, execNotes); d.Source == permissions.SourceGrant || len(p.Calls()) != 1 {
		t.Fatalf("a spent pre-ledger grant written back decided: %+v", d)
	}
}
