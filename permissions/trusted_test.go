package permissions_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

func TestTrustedSession(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerDeny)
	b, err := permissions.NewBroker(permissions.Options{Prompter: p,
		Rules: []permissions.Rule{{Effect: permissions.EffectAsk, Kind: "collab", Object: "drive", Where: "test"}}})
	if err != nil {
		t.Fatal(err)
	}
	expected := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "mail", Expected: true}
	unexpected := permissions.Request{Kind: permissions.KindCollab, Subject: "mail", Object: "notes", Function: "notes.search", Warning: "NOT expected", Expected: false}
	irreversible := permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send", Warning: "cannot be undone", Expected: true, Irreversible: true}
	askRuled := permissions.Request{Kind: permissions.KindCollab, Subject: "mail", Object: "drive", Function: "drive.read", Warning: "w", Expected: true}

	ask := func(r permissions.Request) permissions.Decision {
		d, err := b.Request(context.Background(), r)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := ask(expected); d.Allowed || len(p.Calls()) != 1 {
		t.Fatalf("trusted mode off: the user decides (%+v)", d)
	}
	b.SetTrusted(true)
	if d := ask(expected); !d.Allowed || d.Source != permissions.SourcePolicy || len(p.Calls()) != 1 {
		t.Fatalf("trusted mode on: an expected flow passes without a prompt (%+v, %d prompts)", d, len(p.Calls()))
	}
	for _, r := range []permissions.Request{unexpected, irreversible, askRuled} {
		before := len(p.Calls())
		if d := ask(r); d.Allowed || len(p.Calls()) != before+1 {
			t.Fatalf("%s %s must still be asked in trusted mode (%+v)", r.Kind, r.Object, d)
		}
	}
	acts, _ := b.Actions()
	if len(acts) != 5 {
		t.Fatalf("every decision, trusted ones included, is logged: %d entries", len(acts))
	}
	b.SetTrusted(false)
	if d := ask(expected); d.Allowed {
		t.Fatal("turning trusted mode off must bring the prompt back")
	}
}

func TestRevokeAllOfAnApp(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerSession)
	b, _ := permissions.NewBroker(permissions.Options{Prompter: p})
	exec := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "mail"}
	other := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "notes"}
	for _, r := range []permissions.Request{exec, other} {
		if _, err := b.Request(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.RevokeAll("mail"); err != nil {
		t.Fatal(err)
	}
	gs := b.Grants()
	if len(gs) != 1 || gs[0].Object != "notes" {
		t.Fatalf("revoking mail's grants must take the hub → mail exec grant and keep notes': %+v", gs)
	}
}

// A private turn's broker decides by the main broker's stored grants and
// spends their uses there: a grant with uses left decides exactly that
// many requests, however many private brokers ask.
func TestPrivateBrokersSpendTheMainGrantsUses(t *testing.T) {
	t.Parallel()
	kv := permissionstest.NewKV()
	p := permissionstest.NewPrompter(permissions.AnswerDeny)
	p.Script(permissions.Decision{Answer: permissions.AnswerPermanent, Caveats: permissions.Caveats{UsesLeft: 2}})
	main, err := permissions.NewBroker(permissions.Options{Store: kv, NotFound: permissionstest.ErrNotFound, KeyFile: filepath.Join(t.TempDir(), "key"), Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	req := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "mail", Expected: true}
	if d, _ := main.Request(context.Background(), req); !d.Allowed || len(p.Calls()) != 1 {
		t.Fatalf("the first request makes the grant: %+v", d)
	}
	var allowed int
	for range 3 {
		priv, err := permissions.NewBroker(permissions.Options{Store: permissionstest.NewKV(), NotFound: permissionstest.ErrNotFound, Prompter: p, Grants: main})
		if err != nil {
			t.Fatal(err)
		}
		if d, _ := priv.Request(context.Background(), req); d.Allowed {
			allowed++
		}
	}
	if allowed != 2 || len(p.Calls()) != 2 {
		t.Fatalf("a two-use grant decided %d private requests (%d prompts); want 2, then a prompt", allowed, len(p.Calls()))
	}
	if gs := main.Grants(); len(gs) != 0 {
		t.Fatalf("the spent grant must be gone from the main broker: %+v", gs)
	}
}
