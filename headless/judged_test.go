package headless_test

import (
	"context"
	"testing"

	"github.com/bulkhead-dev/bulkhead/headless"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// --on-prompt=judged allows what the plan declared, irreversible
// included, and denies what it did not, and anything the hub warned of.
func TestOnPromptJudged(t *testing.T) {
	t.Parallel()
	p, err := headless.OnPrompt("judged")
	if err != nil {
		t.Fatal(err)
	}
	send := permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send", Expected: true,
		Concerns: []permissions.Concern{permissions.ConcernIrreversible}}
	for _, c := range []struct {
		name  string
		r     permissions.Request
		allow bool
	}{
		{"declared, irreversible", send, true},
		{"declared, carrying labels", permissions.Request{Kind: permissions.KindData, Concerns: []permissions.Concern{permissions.ConcernLabels}}, true},
		{"not expected", func() permissions.Request {
			r := send
			r.Expected = false
			r.Concerns = append(r.Concerns, permissions.ConcernUnexpected)
			return r
		}(), false},
		{"a value you did not type", func() permissions.Request {
			r := send
			r.Concerns = append(r.Concerns, permissions.ConcernForeign)
			return r
		}(), false},
		{"instruction-like", func() permissions.Request {
			r := send
			r.Concerns = append(r.Concerns, permissions.ConcernInstructions)
			return r
		}(), false},
		{"a file that runs later", func() permissions.Request {
			r := send
			r.Concerns = append(r.Concerns, permissions.ConcernRunsLater)
			return r
		}(), false},
		{"the network", permissions.Request{Kind: permissions.KindNetwork, Concerns: []permissions.Concern{permissions.ConcernNetwork}}, false},
		{"a choice", func() permissions.Request { r := send; r.Choices = []string{"a", "b"}; return r }(), false},
	} {
		d, err := p.Prompt(context.Background(), c.r)
		if err != nil {
			t.Fatal(err)
		}
		if allowed := d.Answer == permissions.AnswerOnce; allowed != c.allow {
			t.Errorf("%s: %+v, want allowed %v", c.name, d, c.allow)
		}
	}
}
