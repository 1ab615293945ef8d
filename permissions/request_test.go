package permissions_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

func TestOptions(t *testing.T) {
	t.Parallel()
	all := []permissions.Answer{permissions.AnswerOnce, permissions.AnswerSession, permissions.AnswerPermanent, permissions.AnswerDeny}
	onceOrDeny := []permissions.Answer{permissions.AnswerOnce, permissions.AnswerDeny}
	tests := []struct {
		name string
		r    permissions.Request
		want []permissions.Answer
	}{
		{"exec", permissions.Request{Kind: permissions.KindExec}, all},
		{"data", permissions.Request{Kind: permissions.KindData}, all},
		{"collab", permissions.Request{Kind: permissions.KindCollab}, all},
		{"kind irreversible", permissions.Request{Kind: permissions.KindIrreversible}, onceOrDeny},
		{"exec flagged irreversible", permissions.Request{Kind: permissions.KindExec, Irreversible: true}, onceOrDeny},
		{"network flagged irreversible", permissions.Request{Kind: permissions.KindNetwork, Irreversible: true}, onceOrDeny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got := tt.r.Options()
			if !slices.Equal(got, tt.want) {
				t.Errorf("Options() = %v, want %v", got, tt.want)
			}
			if tt.r.IsIrreversible() && slices.Contains(got, permissions.AnswerPermanent) {
				t.Errorf("Options() offers permanent for an irreversible request: %v", got)
			}
		})
	}
}

func TestRequestValidation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		r    permissions.Request
		ok   bool
	}{
		{"exec needs no warning", permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "notes"}, true},
		{"select needs no warning", permissions.Request{Kind: permissions.KindSelect, Subject: "hub", Object: "notes"}, true},
		{"network without warning", permissions.Request{Kind: permissions.KindNetwork, Subject: "web", Object: "example.com:443"}, false},
		{"network with warning", permissions.Request{Kind: permissions.KindNetwork, Subject: "web", Object: "example.com:443", Warning: "could send what it read"}, true},
		{"collab without warning", permissions.Request{Kind: permissions.KindCollab, Subject: "travel", Object: "ride", Function: "ride.estimate_fare"}, false},
		{"data without warning", permissions.Request{Kind: permissions.KindData, Subject: "travel", Object: "trip.dates"}, false},
		{"irreversible without warning", permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Function: "send"}, false},
		{"collab with warning", permissions.Request{Kind: permissions.KindCollab, Subject: "travel", Object: "ride", Warning: "not in the plan"}, true},
		{"data with warning", permissions.Request{Kind: permissions.KindData, Subject: "travel", Object: "trip.dates", Warning: "expected"}, true},
		{"irreversible with warning", permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Warning: "expected"}, true},
		{"unknown kind", permissions.Request{Kind: "root", Subject: "hub"}, false},
		{"no subject", permissions.Request{Kind: permissions.KindExec, Object: "notes"}, false},
		{"args not JSON", permissions.Request{Kind: permissions.KindExec, Subject: "hub", Args: []byte("{nope")}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := permissionstest.NewPrompter(permissions.AnswerOnce)
			b, err := permissions.NewBroker(permissions.Options{Prompter: p})
			if err != nil {
				t.Fatal(err)
			}
			d, err := b.Request(context.Background(), tt.r)
			if tt.ok {
				if err != nil || !d.Allowed {
					t.Fatalf("Request = %+v, %v; want allowed by the prompter", d, err)
				}
				return
			}
			if !errors.Is(err, permissions.ErrInvalidRequest) {
				t.Fatalf("Request error = %v, want ErrInvalidRequest", err)
			}
			if d.Allowed {
				t.Errorf("rejected request came back allowed: %+v", d)
			}
			if n := len(p.Calls()); n != 0 {
				t.Errorf("prompter called %d times for a rejected request", n)
			}
		})
	}
}

func TestPolicy(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		policy permissions.Policy
		r      permissions.Request
		want   permissions.Answer
	}{
		{"once", permissions.Policy{Answer: permissions.AnswerOnce}, execNotes, permissions.AnswerOnce},
		{"session", permissions.Policy{Answer: permissions.AnswerSession}, execNotes, permissions.AnswerSession},
		{"permanent becomes session", permissions.Policy{Answer: permissions.AnswerPermanent}, execNotes, permissions.AnswerSession},
		{"deny", permissions.Policy{Answer: permissions.AnswerDeny}, execNotes, permissions.AnswerDeny},
		{"irreversible denied by default", permissions.Policy{Answer: permissions.AnswerOnce}, sendMail, permissions.AnswerDeny},
		{"irreversible allowed once when asked to", permissions.Policy{Answer: permissions.AnswerDeny, Irreversible: permissions.AnswerOnce}, sendMail, permissions.AnswerOnce},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b, err := permissions.NewBroker(permissions.Options{Prompter: tt.policy})
			if err != nil {
				t.Fatal(err)
			}
			d := mustRequest(t, b, tt.r)
			if d.Answer != tt.want || d.Source != permissions.SourcePolicy {
				t.Errorf("decision = %s from %s, want %s from policy", d.Answer, d.Source, tt.want)
			}
		})
	}
}

func TestNoPrompterDenies(t *testing.T) {
	t.Parallel()
	b, err := permissions.NewBroker(permissions.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := mustRequest(t, b, execNotes)
	if d.Allowed || d.Source != permissions.SourcePolicy {
		t.Errorf("with no prompter: %+v, want a policy deny", d)
	}
}
