package permissions_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// source is one thing that may speak about execNotes.
type source int

const (
	denyRule source = iota
	denyGrant
	askRule
	allowRule
	sessionGrant
	permanentGrant
	nSources
)

var sourceNames = [nSources]string{"denyRule", "denyGrant", "askRule", "allowRule", "sessionGrant", "permanentGrant"}

// expect is DESIGN §4's precedence, written out: deny rule > permanent deny
// > ask rule > allow rule / grant > ask the user.
func expect(has func(source) bool, userAllows bool) (permissions.Source, bool) {
	switch {
	case has(denyRule):
		return permissions.SourceRule, false
	case has(denyGrant):
		return permissions.SourceGrant, false
	case has(askRule):
		return permissions.SourceUser, userAllows
	case has(allowRule):
		return permissions.SourceRule, true
	case has(sessionGrant), has(permanentGrant):
		return permissions.SourceGrant, true
	}
	return permissions.SourceUser, userAllows
}

// TestPrecedence tries every combination of sources, with the user allowing
// and denying, and with rules and grants set up in both orders.
func TestPrecedence(t *testing.T) {
	t.Parallel()
	keyFile := filepath.Join(t.TempDir(), "grant.key")
	rule := func(e permissions.Effect) permissions.Rule {
		return permissions.Rule{Effect: e, Kind: "exec", Subject: "hub", Object: "notes", Where: "test: " + string(e)}
	}
	grant := func(deny, permanent bool) permissions.Grant {
		return permissions.Grant{Kind: permissions.KindExec, Subject: "hub", Object: "notes", Deny: deny, Permanent: permanent, Origin: "dialog"}
	}
	for set := range 1 << nSources {
		has := func(s source) bool { return set&(1<<s) != 0 }
		var names []string
		for s := range nSources {
			if has(s) {
				names = append(names, sourceNames[s])
			}
		}
		for _, userAllows := range []bool{true, false} {
			for _, reversed := range []bool{false, true} {
				name := fmt.Sprintf("%s/user_allows=%t/reversed=%t", strings.Join(names, "+"), userAllows, reversed)
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					var rules []permissions.Rule
					var grants []permissions.Grant
					for s, r := range map[source]permissions.Effect{denyRule: permissions.EffectDeny, askRule: permissions.EffectAsk, allowRule: permissions.EffectAllow} {
						if has(s) {
							rules = append(rules, rule(r))
						}
					}
					slices.SortFunc(rules, func(a, b permissions.Rule) int { return strings.Compare(string(a.Effect), string(b.Effect)) })
					if has(denyGrant) {
						grants = append(grants, grant(true, true))
					}
					if has(sessionGrant) {
						grants = append(grants, grant(false, false))
					}
					if has(permanentGrant) {
						grants = append(grants, grant(false, true))
					}
					if reversed {
						slices.Reverse(rules)
						slices.Reverse(grants)
					}
					answer := permissions.AnswerOnce
					if !userAllows {
						answer = permissions.AnswerDeny
					}
					p := permissionstest.NewPrompter(answer)
					b, err := permissions.NewBroker(permissions.Options{
						Store: permissionstest.NewKV(), NotFound: permissionstest.ErrNotFound,
						KeyFile: keyFile, Rules: rules, Prompter: p,
					})
					if err != nil {
						t.Fatal(err)
					}
					var ids []string
					for _, g := range grants {
						g, err := b.PutGrant(g)
						if err != nil {
							t.Fatal(err)
						}
						ids = append(ids, g.ID)
					}

					d := mustRequest(t, b, execNotes)
					wantSource, wantAllowed := expect(has, userAllows)
					if d.Source != wantSource || d.Allowed != wantAllowed {
						t.Errorf("decision = %s allowed=%t, want %s allowed=%t (%+v)", d.Source, d.Allowed, wantSource, wantAllowed, d)
					}
					asked := len(p.Calls()) > 0
					if asked != (wantSource == permissions.SourceUser) {
						t.Errorf("prompter asked = %t, want %t", asked, !asked)
					}
					if d.Source == permissions.SourceGrant && !slices.Contains(ids, d.GrantID) {
						t.Errorf("decided by grant %q, not one of %v", d.GrantID, ids)
					}
					if d.Source == permissions.SourceRule && d.Rule == "" {
						t.Errorf("rule decision does not name its rule: %+v", d)
					}
				})
			}
		}
	}
}
