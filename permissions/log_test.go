package permissions_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// TestActionLog: decisions by the user, a grant, a rule and a policy, and a
// note, are all logged in order and persisted in the Store.
func TestActionLog(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	shell := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "shell"}
	calendar := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "calendar"}
	p := permissionstest.NewPrompter(permissions.AnswerSession)
	b := e.broker(t, p,
		permissions.Rule{Effect: permissions.EffectDeny, Kind: "exec", Object: "shell", Where: "c.yaml: permissions.rules[0]"},
		permissions.Rule{Effect: permissions.EffectAllow, Kind: "exec", Object: "calendar", Where: "c.yaml: permissions.rules[1]"},
	)
	mustRequest(t, b, execNotes) // user, session
	mustRequest(t, b, execNotes) // grant
	mustRequest(t, b, shell)     // deny rule
	mustRequest(t, b, calendar)  // allow rule
	if err := b.Note("plan fallback", "hub", "planner output did not parse; answered directly"); err != nil {
		t.Fatal(err)
	}
	b.SetPrompter(permissions.Policy{Answer: permissions.AnswerDeny, Note: "headless"})
	mustRequest(t, b, sendMail) // policy

	want := []struct {
		object  string
		source  permissions.Source
		allowed bool
		note    string
	}{
		{"notes", permissions.SourceUser, true, ""},
		{"notes", permissions.SourceGrant, true, ""},
		{"shell", permissions.SourceRule, false, ""},
		{"calendar", permissions.SourceRule, true, ""},
		{"", "", false, "plan fallback"},
		{"mail", permissions.SourcePolicy, false, ""},
	}
	check := func(t *testing.T, b *permissions.Broker, from int) {
		t.Helper()
		got, err := b.Actions()
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != from+len(want) {
			t.Fatalf("Actions() has %d entries, want %d", len(got), from+len(want))
		}
		for i, w := range want {
			g := got[from+i]
			if g.Seq != uint64(from+i+1) {
				t.Errorf("entry %d: seq %d, want %d", from+i, g.Seq, from+i+1)
			}
			if w.note != "" {
				if g.Note == nil || g.Note.Kind != w.note {
					t.Errorf("entry %d = %+v, want note %q", from+i, g, w.note)
				}
				continue
			}
			if g.Note != nil || g.Request.Object != w.object || g.Decision.Source != w.source ||
				g.Decision.Allowed != w.allowed || g.Decision.RequestID != g.Request.ID || g.Request.ID == "" {
				t.Errorf("entry %d = %+v, want %s by %s allowed=%t", from+i, g, w.object, w.source, w.allowed)
			}
		}
		if got[from].Time.IsZero() {
			t.Error("entry has no time")
		}
	}
	check(t, b, 0)
	if keys, _ := e.kv.Keys("actions/"); len(keys) != len(want) || keys[0] != fmt.Sprintf("actions/%020d", 1) {
		t.Errorf("stored action keys = %v", keys)
	}

	// A new process reads the old log and numbers on after it.
	b2 := e.broker(t, p,
		permissions.Rule{Effect: permissions.EffectDeny, Kind: "exec", Object: "shell"},
		permissions.Rule{Effect: permissions.EffectAllow, Kind: "exec", Object: "calendar"},
	)
	mustRequest(t, b2, execNotes)
	mustRequest(t, b2, execNotes)
	mustRequest(t, b2, shell)
	mustRequest(t, b2, calendar)
	_ = b2.Note("plan fallback", "hub", "again")
	b2.SetPrompter(permissions.Policy{Answer: permissions.AnswerDeny})
	mustRequest(t, b2, sendMail)
	check(t, b2, len(want))
}

func TestActionLogPrivate(t *testing.T) {
	t.Parallel()
	b, err := permissions.NewBroker(permissions.Options{Prompter: permissionstest.NewPrompter(permissions.AnswerOnce)})
	if err != nil {
		t.Fatal(err)
	}
	mustRequest(t, b, execNotes)
	if err := b.Note("masked instruction-like text", "notes", "1 span masked"); err != nil {
		t.Fatal(err)
	}
	got, err := b.Actions()
	if err != nil || len(got) != 2 || got[0].Decision.Source != permissions.SourceUser || got[1].Note == nil {
		t.Errorf("Actions() = %+v, %v", got, err)
	}
}

// TestActionLogFailClosed: a decision that cannot be logged is not returned.
func TestActionLogFailClosed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	b := e.broker(t, nil, permissions.Rule{Effect: permissions.EffectAllow, Kind: "exec"})
	boom := errors.New("disk full")
	e.kv.FailWrites(boom)
	d, err := b.Request(t.Context(), execNotes)
	if !errors.Is(err, boom) || d.Allowed {
		t.Errorf("Request with a failing log = %+v, %v; want the store's error", d, err)
	}
}

// TestGrantUseNotRecorded: a limited grant whose use cannot be written is
// not used.
func TestGrantUseNotRecorded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	p.Script(permissions.Decision{Answer: permissions.AnswerPermanent, Caveats: permissions.Caveats{UsesLeft: 5}})
	b := e.broker(t, p)
	mustRequest(t, b, execNotes)
	e.kv.FailWrites(errors.New("disk full"))
	if d, err := b.Request(t.Context(), execNotes); err == nil || d.Allowed {
		t.Errorf("Request = %+v, %v; want the log's error", d, err)
	}
	if n := len(p.Calls()); n != 2 {
		t.Errorf("prompter called %d times, want 2: a grant whose use cannot be stored is skipped", n)
	}
}

// TestDialogGrantCountsItsOwnCall: the call a dialog allowed is the grant's
// first use, so the manager never shows "used 0 times" for a grant that
// has already let a call through; a later use counts the second.
func TestDialogGrantCountsItsOwnCall(t *testing.T) {
	t.Parallel()
	for _, answer := range []permissions.Answer{permissions.AnswerSession, permissions.AnswerPermanent} {
		e := newEnv(t)
		p := permissionstest.NewPrompter(answer)
		b := e.broker(t, p)
		mustRequest(t, b, execNotes)
		gs := b.Grants()
		if len(gs) != 1 || gs[0].Uses != 1 || gs[0].LastUsed.IsZero() {
			t.Fatalf("%s: grants after the dialog = %+v, want one used once", answer, gs)
		}
		mustRequest(t, b, execNotes)
		if gs := b.Grants(); len(gs) != 1 || gs[0].Uses != 2 || len(p.Calls()) != 1 {
			t.Fatalf("%s: grants after a second call = %+v (%d dialogs), want one used twice", answer, gs, len(p.Calls()))
		}
	}
}
