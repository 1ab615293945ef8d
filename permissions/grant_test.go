package permissions_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

func TestSessionGrant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerSession)
	b := e.broker(t, p)
	first := mustRequest(t, b, execNotes)
	if first.Source != permissions.SourceUser || first.Answer != permissions.AnswerSession || first.GrantID == "" {
		t.Fatalf("first decision = %+v, want a session answer that made a grant", first)
	}
	second := mustRequest(t, b, execNotes)
	if second.Source != permissions.SourceGrant || !second.Allowed || second.GrantID != first.GrantID {
		t.Fatalf("second decision = %+v, want allowed by grant %s", second, first.GrantID)
	}
	if n := len(p.Calls()); n != 1 {
		t.Errorf("prompter called %d times, want 1", n)
	}
	actions, err := b.Actions()
	if err != nil {
		t.Fatal(err)
	}
	if len(actions) != 2 || actions[1].Decision.Source != permissions.SourceGrant {
		t.Errorf("action log = %+v, want the second entry decided by the grant", actions)
	}
	if keys, _ := e.kv.Keys("grants/"); len(keys) != 0 {
		t.Errorf("session grant stored: %v", keys)
	}

	// A new process over the same store does not have it.
	b2 := e.broker(t, p)
	if d := mustRequest(t, b2, execNotes); d.Source != permissions.SourceUser {
		t.Errorf("after restart, decision = %+v, want the user asked again", d)
	}
}

func TestPermanentGrant(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerPermanent)
	first := mustRequest(t, e.broker(t, p), execNotes)
	if first.Answer != permissions.AnswerPermanent || first.GrantID == "" {
		t.Fatalf("first decision = %+v, want a permanent grant", first)
	}
	if _, err := e.kv.Get("grants/" + first.GrantID); err != nil {
		t.Fatalf("permanent grant not in the store when Request returned: %v", err)
	}
	b2 := e.broker(t, p)
	d := mustRequest(t, b2, execNotes)
	if d.Source != permissions.SourceGrant || d.GrantID != first.GrantID || d.Answer != permissions.AnswerPermanent {
		t.Errorf("after restart, decision = %+v, want allowed by grant %s", d, first.GrantID)
	}
	if n := len(p.Calls()); n != 1 {
		t.Errorf("prompter called %d times, want 1", n)
	}
	if invalid := b2.Invalid(); len(invalid) != 0 {
		t.Errorf("Invalid() = %+v, want none", invalid)
	}
}

func TestPermanentDeny(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	p.Script(permissions.Decision{Answer: permissions.AnswerDeny, Permanent: true, Note: "never open my notes"})
	first := mustRequest(t, e.broker(t, p), execNotes)
	if first.Allowed || !first.Permanent || first.GrantID == "" {
		t.Fatalf("first decision = %+v, want a remembered deny", first)
	}
	d := mustRequest(t, e.broker(t, p), execNotes)
	if d.Allowed || d.Source != permissions.SourceGrant || d.Note != "never open my notes" {
		t.Errorf("after restart, decision = %+v, want denied by the grant with its note", d)
	}
}

// TestPrivateMode: with no Store nothing persists; permanent answers make
// session grants.
func TestPrivateMode(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerPermanent)
	b, err := permissions.NewBroker(permissions.Options{Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	d := mustRequest(t, b, execNotes)
	if d.Answer != permissions.AnswerSession {
		t.Errorf("private permanent answer = %s, want session", d.Answer)
	}
	if d := mustRequest(t, b, execNotes); d.Source != permissions.SourceGrant {
		t.Errorf("second decision = %+v, want the session grant", d)
	}
	if gs := b.Grants(); len(gs) != 1 || gs[0].Permanent {
		t.Errorf("Grants() = %+v, want one session grant", gs)
	}
}

func TestCaveats(t *testing.T) {
	t.Parallel()
	args := func(s string) json.RawMessage { return json.RawMessage(s) }
	write := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "files", Function: "write"}
	with := func(a string) permissions.Request { r := write; r.Args = args(a); return r }
	tests := []struct {
		name    string
		caveats permissions.Caveats
		answer  permissions.Answer
		steps   []step
	}{
		{"expired", permissions.Caveats{Expires: newClock().Now().Add(time.Hour)}, permissions.AnswerSession, []step{
			{r: write, byGrant: true}, {advance: 2 * time.Hour, r: write, byGrant: false},
		}},
		{"expired, permanent", permissions.Caveats{Expires: newClock().Now().Add(time.Hour)}, permissions.AnswerPermanent, []step{
			{r: write, byGrant: true}, {advance: time.Hour, r: write, byGrant: false},
		}},
		{"uses run out", permissions.Caveats{UsesLeft: 2}, permissions.AnswerSession, []step{
			{r: write, byGrant: true}, {r: write, byGrant: true}, {r: write, byGrant: false},
		}},
		{"uses run out, permanent, across restarts", permissions.Caveats{UsesLeft: 2}, permissions.AnswerPermanent, []step{
			{r: write, byGrant: true}, {restart: true, r: write, byGrant: true}, {restart: true, r: write, byGrant: false},
		}},
		{"exact arg", permissions.Caveats{Args: map[string]string{"mode": "append", "n": "3"}}, permissions.AnswerSession, []step{
			{r: with(`{"mode":"append","n":3}`), byGrant: true},
			{r: with(`{"mode":"truncate","n":3}`), byGrant: false},
			{r: with(`{"mode":"append","n":4}`), byGrant: false},
			{r: with(`{"mode":"append"}`), byGrant: false},
			{r: write, byGrant: false},
		}},
		{"path prefix", permissions.Caveats{Args: map[string]string{"path": "/home/u/work/"}}, permissions.AnswerPermanent, []step{
			{r: with(`{"path":"/home/u/work/a.txt"}`), byGrant: true},
			{restart: true, r: with(`{"path":"/home/u/work/sub/b.txt"}`), byGrant: true},
			{r: with(`{"path":"/home/u/work/../.ssh/id_ed25519"}`), byGrant: false},
			{r: with(`{"path":"/home/u/workshop/x"}`), byGrant: false},
			{r: with(`{"path":"/etc/passwd"}`), byGrant: false},
			{r: with(`{"path":["/home/u/work/a"]}`), byGrant: false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := permissionstest.NewPrompter(permissions.AnswerOnce)
			p.Script(permissions.Decision{Answer: tt.answer, Caveats: tt.caveats})
			b := e.broker(t, p)
			if d := mustRequest(t, b, tt.steps[0].r); d.GrantID == "" {
				t.Fatalf("setup answer made no grant: %+v", d)
			}
			for i, s := range tt.steps {
				e.clock.Advance(s.advance)
				if s.restart {
					b = e.broker(t, p)
				}
				asked := len(p.Calls())
				d := mustRequest(t, b, s.r)
				if got := d.Source == permissions.SourceGrant; got != s.byGrant {
					t.Fatalf("step %d (%s): decided by %s (%+v), want by grant = %t", i, s.r.Args, d.Source, d, s.byGrant)
				}
				if !s.byGrant && len(p.Calls()) != asked+1 {
					t.Fatalf("step %d: not decided by the grant, but the user was not asked", i)
				}
			}
			if invalid := b.Invalid(); len(invalid) != 0 {
				t.Errorf("grants invalid after uses: %+v", invalid)
			}
		})
	}
}

type step struct {
	advance time.Duration
	restart bool
	r       permissions.Request
	byGrant bool
}

func TestCaveatsHold(t *testing.T) {
	t.Parallel()
	now := newClock().Now()
	tests := []struct {
		name string
		c    permissions.Caveats
		args string
		want bool
	}{
		{"none", permissions.Caveats{}, ``, true},
		{"before expiry", permissions.Caveats{Expires: now.Add(time.Second)}, ``, true},
		{"at expiry", permissions.Caveats{Expires: now}, ``, false},
		{"negative uses", permissions.Caveats{UsesLeft: -1}, ``, false},
		{"args not an object", permissions.Caveats{Args: map[string]string{"a": "1"}}, `[1]`, false},
		{"no args", permissions.Caveats{Args: map[string]string{"a": "1"}}, ``, false},
		{"number", permissions.Caveats{Args: map[string]string{"a": "1"}}, `{"a":1}`, true},
		{"bool", permissions.Caveats{Args: map[string]string{"a": "true"}}, `{"a":true}`, true},
		{"string", permissions.Caveats{Args: map[string]string{"a": "x"}}, `{"a":"x","b":2}`, true},
		{"dir itself", permissions.Caveats{Args: map[string]string{"p": "/srv/"}}, `{"p":"/srv"}`, true},
		{"root", permissions.Caveats{Args: map[string]string{"p": "/"}}, `{"p":"/x/y"}`, true},
		{"root, relative", permissions.Caveats{Args: map[string]string{"p": "/"}}, `{"p":"x/y"}`, false},
		{"relative dir", permissions.Caveats{Args: map[string]string{"p": "work/"}}, `{"p":"work/a"}`, true},
		{"relative escape", permissions.Caveats{Args: map[string]string{"p": "work/"}}, `{"p":"work/../../a"}`, false},
		{"workspace", permissions.Caveats{Args: map[string]string{"p": "./"}}, `{"p":"a/b"}`, true},
		{"workspace escape", permissions.Caveats{Args: map[string]string{"p": "./"}}, `{"p":"a/../../b"}`, false},
		{"workspace absolute", permissions.Caveats{Args: map[string]string{"p": "./"}}, `{"p":"/etc"}`, false},
		{"empty path", permissions.Caveats{Args: map[string]string{"p": "/srv/"}}, `{"p":""}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.c.Hold(json.RawMessage(tt.args), now); got != tt.want {
				t.Errorf("Hold(%s) = %t, want %t", tt.args, got, tt.want)
			}
		})
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	calendar := execNotes
	calendar.Object = "calendar"
	mail := permissions.Request{Kind: permissions.KindExec, Subject: "mail", Object: "mail"}
	tests := []struct {
		name   string
		revoke func(b *permissions.Broker, notesGrant string) error
		asked  []permissions.Request // asked again; the others still granted
	}{
		{"one", func(b *permissions.Broker, id string) error { return b.Revoke(id) }, []permissions.Request{execNotes}},
		{"subject", func(b *permissions.Broker, _ string) error { return b.RevokeAll("hub") }, []permissions.Request{execNotes, calendar}},
		{"all", func(b *permissions.Broker, _ string) error { return b.RevokeAll("") }, []permissions.Request{execNotes, calendar, mail}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := permissionstest.NewPrompter(permissions.AnswerPermanent)
			b := e.broker(t, p)
			notesGrant := mustRequest(t, b, execNotes).GrantID
			mustRequest(t, b, calendar)
			p.Script(permissions.Decision{Answer: permissions.AnswerSession})
			mustRequest(t, b, mail)
			if err := tt.revoke(b, notesGrant); err != nil {
				t.Fatal(err)
			}
			for _, bb := range []*permissions.Broker{b, e.broker(t, p)} {
				for _, r := range []permissions.Request{execNotes, calendar, mail} {
					if bb != b && r.Subject == "mail" {
						continue // a session grant: gone with the process anyway
					}
					p := permissionstest.NewPrompter(permissions.AnswerOnce)
					bb.SetPrompter(p)
					mustRequest(t, bb, r)
					wantAsked := false
					for _, a := range tt.asked {
						wantAsked = wantAsked || a.Object == r.Object
					}
					if asked := len(p.Calls()) == 1; asked != wantAsked {
						t.Errorf("%s→%s after revoke (restarted=%t): asked = %t, want %t", r.Subject, r.Object, bb != b, asked, wantAsked)
					}
				}
			}
		})
	}
	t.Run("unknown", func(t *testing.T) {
		t.Parallel()
		b := newEnv(t).broker(t, nil)
		if err := b.Revoke("nope"); !errors.Is(err, permissions.ErrUnknownGrant) {
			t.Errorf("Revoke(unknown) = %v, want ErrUnknownGrant", err)
		}
	})
}
