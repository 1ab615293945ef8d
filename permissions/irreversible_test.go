package permissions_test

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// TestIrreversibleAlwaysAsks sets up every source that would allow an
// ordinary request and checks that an irreversible one is still put to the
// user, every time.
func TestIrreversibleAlwaysAsks(t *testing.T) {
	t.Parallel()
	// flagged is an exec request whose effect cannot be undone: grants and
	// allow rules for exec cover it by scope, so only invariant 3 stops them.
	flagged := execNotes
	flagged.Irreversible = true
	flagged.Warning = "deletes every note"
	scope := func(r permissions.Request) permissions.Grant {
		return permissions.Grant{Kind: r.Kind, Subject: r.Subject, Object: r.Object, Function: r.Function, Origin: "dialog"}
	}
	tests := []struct {
		name  string
		r     permissions.Request
		rules []permissions.Rule
		setup func(t *testing.T, b *permissions.Broker, r permissions.Request)
	}{
		{"session grant, flagged", flagged, nil, func(t *testing.T, b *permissions.Broker, r permissions.Request) {
			mustPut(t, b, scope(r))
		}},
		{"session grant, kind irreversible", sendMail, nil, func(t *testing.T, b *permissions.Broker, r permissions.Request) {
			mustPut(t, b, scope(r))
		}},
		{"permanent grant, flagged", flagged, nil, func(t *testing.T, b *permissions.Broker, r permissions.Request) {
			g := scope(r)
			g.Permanent = true
			mustPut(t, b, g)
		}},
		{"permanent grant, kind irreversible", sendMail, nil, func(t *testing.T, b *permissions.Broker, r permissions.Request) {
			g := scope(r)
			g.Permanent = true
			mustPut(t, b, g)
		}},
		{"allow rule", flagged, []permissions.Rule{{Effect: permissions.EffectAllow, Kind: "exec", Where: "test.yaml: permissions.rules[0]"}}, nil},
		{"config grant", flagged, nil, func(t *testing.T, b *permissions.Broker, r permissions.Request) {
			g := scope(r)
			g.Origin = "config:test.yaml"
			if err := b.AddConfigGrant(g); err != nil {
				t.Fatal(err)
			}
		}},
		{"grant made by an earlier session answer", flagged, nil, func(t *testing.T, b *permissions.Broker, r permissions.Request) {
			r.Irreversible = false
			p := permissionstest.NewPrompter(permissions.AnswerSession)
			b.SetPrompter(p)
			if d := mustRequest(t, b, r); d.GrantID == "" {
				t.Fatalf("setup: session answer made no grant: %+v", d)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			b := e.broker(t, nil, tt.rules...)
			if tt.setup != nil {
				tt.setup(t, b, tt.r)
			}
			p := permissionstest.NewPrompter(permissions.AnswerOnce)
			b.SetPrompter(p)
			const times = 3
			for i := range times {
				d := mustRequest(t, b, tt.r)
				if d.Source != permissions.SourceUser || !d.Allowed {
					t.Fatalf("request %d decided by %s (%+v), want the user", i, d.Source, d)
				}
			}
			if n := len(p.Calls()); n != times {
				t.Errorf("prompter called %d times for %d irreversible requests", n, times)
			}
		})
	}
}

func mustPut(t *testing.T, b *permissions.Broker, g permissions.Grant) permissions.Grant {
	t.Helper()
	g, err := b.PutGrant(g)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestIrreversibleDenyRuleStillDenies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	b := e.broker(t, p, permissions.Rule{Effect: permissions.EffectDeny, Kind: "irreversible", Subject: "mail"})
	d := mustRequest(t, b, sendMail)
	if d.Allowed || d.Source != permissions.SourceRule {
		t.Errorf("decision = %+v, want denied by the rule", d)
	}
	if len(p.Calls()) != 0 {
		t.Error("prompter asked despite a deny rule")
	}
}

// TestIrreversibleAnswersNotRemembered: a prompter answering permanent or
// session for an irreversible request gets once, and nothing is kept.
func TestIrreversibleAnswersNotRemembered(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   permissions.Decision
		want permissions.Answer
	}{
		{"permanent", permissions.Decision{Answer: permissions.AnswerPermanent}, permissions.AnswerOnce},
		{"session", permissions.Decision{Answer: permissions.AnswerSession}, permissions.AnswerOnce},
		{"remembered deny", permissions.Decision{Answer: permissions.AnswerDeny, Permanent: true}, permissions.AnswerDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			p := permissionstest.NewPrompter(permissions.AnswerOnce)
			p.Script(tt.in)
			b := e.broker(t, p)
			d := mustRequest(t, b, sendMail)
			if d.Answer != tt.want || d.GrantID != "" || d.Permanent {
				t.Errorf("decision = %+v, want %s with no grant", d, tt.want)
			}
			if gs := b.Grants(); len(gs) != 0 {
				t.Errorf("grants after an irreversible answer: %+v", gs)
			}
			if keys, _ := e.kv.Keys("grants/"); len(keys) != 0 {
				t.Errorf("stored grants after an irreversible answer: %v", keys)
			}
			actions, err := b.Actions()
			if err != nil || len(actions) != 1 || actions[0].Decision.Answer != tt.want {
				t.Errorf("action log = %+v, %v; want one %s entry", actions, err, tt.want)
			}
			mustRequest(t, b, sendMail)
			mustRequest(t, e.broker(t, p), sendMail)
			if n := len(p.Calls()); n != 3 {
				t.Errorf("prompter called %d times, want 3", n)
			}
		})
	}
}

func TestAddConfigGrantIrreversible(t *testing.T) {
	t.Parallel()
	b := newEnv(t).broker(t, nil)
	err := b.AddConfigGrant(permissions.Grant{
		Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send",
		Origin: "config:/home/u/.config/bulkhead/config.yaml",
	})
	if err == nil || !strings.Contains(err.Error(), "config:/home/u/.config/bulkhead/config.yaml") {
		t.Fatalf("AddConfigGrant(irreversible) error = %v, want one naming the origin", err)
	}
	if gs := b.Grants(); len(gs) != 0 {
		t.Errorf("refused grant held: %+v", gs)
	}
	for _, bad := range []permissions.Kind{"*", ""} {
		if err := b.AddConfigGrant(permissions.Grant{Kind: bad, Subject: "mail", Origin: "config:c.yaml"}); err == nil || !strings.Contains(err.Error(), "config:c.yaml") {
			t.Errorf("AddConfigGrant(kind %q) error = %v, want one naming the origin", bad, err)
		}
	}
}

func TestValidateRules(t *testing.T) {
	t.Parallel()
	rule := func(e permissions.Effect, kind, where string) permissions.Rule {
		return permissions.Rule{Effect: e, Kind: kind, Subject: "mail", Where: where}
	}
	tests := []struct {
		name  string
		rules []permissions.Rule
		bad   []string // Wheres the error must name; none: valid
	}{
		{"allow exec", []permissions.Rule{rule("allow", "exec", "c.yaml: permissions.rules[0]")}, nil},
		{"deny anything", []permissions.Rule{rule("deny", "*", "c.yaml: permissions.rules[0]")}, nil},
		{"ask anything", []permissions.Rule{rule("ask", "", "c.yaml: permissions.rules[0]")}, nil},
		{"allow irreversible", []permissions.Rule{rule("allow", "irreversible", "c.yaml: permissions.rules[3]")}, []string{"c.yaml: permissions.rules[3]"}},
		{"allow star", []permissions.Rule{rule("allow", "*", "c.yaml: permissions.rules[1]")}, []string{"c.yaml: permissions.rules[1]"}},
		{"allow empty kind", []permissions.Rule{rule("allow", "", "c.yaml: permissions.rules[2]")}, []string{"c.yaml: permissions.rules[2]"}},
		{"allow prefix", []permissions.Rule{rule("allow", "irr*", "c.yaml: permissions.rules[4]")}, []string{"c.yaml: permissions.rules[4]"}},
		{"two bad, one good", []permissions.Rule{
			rule("allow", "*", "a.yaml: permissions.rules[0]"),
			rule("allow", "exec", "a.yaml: permissions.rules[1]"),
			rule("allow", "irreversible", "a.yaml: permissions.rules[2]"),
		}, []string{"a.yaml: permissions.rules[0]", "a.yaml: permissions.rules[2]"}},
		{"bad effect", []permissions.Rule{rule("maybe", "exec", "c.yaml: permissions.rules[5]")}, []string{"c.yaml: permissions.rules[5]"}},
		{"unknown kind", []permissions.Rule{rule("deny", "exce", "c.yaml: permissions.rules[6]")}, []string{"c.yaml: permissions.rules[6]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			err := permissions.ValidateRules(tt.rules)
			if len(tt.bad) == 0 {
				if err != nil {
					t.Fatalf("ValidateRules = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatal("ValidateRules = nil, want an error")
			}
			for _, where := range tt.bad {
				if !strings.Contains(err.Error(), where) {
					t.Errorf("error %q does not name %q", err, where)
				}
			}
			if strings.Contains(err.Error(), "rules[1]") && tt.name == "two bad, one good" {
				t.Errorf("error names the valid rule: %q", err)
			}
			if _, nerr := permissions.NewBroker(permissions.Options{Rules: tt.rules}); nerr == nil {
				t.Error("NewBroker accepted rules ValidateRules refuses")
			}
		})
	}
}
