package hub_test

import (
	"context"
	"slices"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// A private chat's requests say they are private (no permanent answer is
// offered, no limit holds their text); its session grants are listed
// and revoked for the permission manager, and go with the chat.
func TestPrivateChatRequestsAndGrants(t *testing.T) {
	t.Parallel()
	p := permissionstest.NewPrompter(permissions.AnswerSession)
	rig := hubtest.New(t, hubtest.Config{Script: ollamatest.Gullible(), Apps: []apps.App{demo.NewMail()}, Prompter: p})
	priv, err := rig.Op.NewChat(true)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := rig.Op.Ask(context.Background(), priv.ID, "check my emails", nil); err != nil {
		t.Fatal(err)
	}
	calls := p.Calls()
	if len(calls) == 0 {
		t.Fatal("no dialog")
	}
	for _, r := range calls {
		if !r.Private || slices.Contains(r.Options(), permissions.AnswerPermanent) {
			t.Errorf("a private chat's request %s %s: private %v, options %v", r.Kind, r.Object, r.Private, r.Options())
		}
	}
	gs := rig.Op.PrivateGrants([]string{priv.ID})
	if len(gs) == 0 {
		t.Fatal("the private chat's session grant is not listed")
	}
	for _, g := range rig.Broker.Grants() {
		if g.ID == gs[0].ID {
			t.Fatal("a private chat's grant is in the main broker")
		}
	}
	if found, _, err := rig.Op.RevokePrivate([]string{priv.ID}, gs[0].ID); !found || err != nil {
		t.Fatalf("revoke: %v %v", found, err)
	}
	if n := len(rig.Op.PrivateGrants([]string{priv.ID})); n != len(gs)-1 {
		t.Fatalf("%d private grants after revoking one of %d", n, len(gs))
	}

	// A chat that is not private: its requests are not.
	pub, _ := rig.Op.NewChat(false)
	before := len(p.Calls())
	if _, err := rig.Op.Ask(context.Background(), pub.ID, "check my emails again", nil); err != nil {
		t.Fatal(err)
	}
	for _, r := range p.Calls()[before:] {
		if r.Private {
			t.Errorf("a kept chat's request is marked private: %+v", r)
		}
	}
}
