package serve

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bulkhead-dev/bulkhead/llm"
)

// Every kind of error crosses the socket with its words and its kind:
// errors.Is and errors.As hold on the far side.
func TestEveryKindRoundTrips(t *testing.T) {
	for _, k := range sentinels {
		err := fmt.Errorf("doing something: %w", k.err)
		back := toWire(err).err()
		if !errors.Is(back, k.err) || back.Error() != err.Error() {
			t.Errorf("%s: %v (is %v)", k.kind, back, errors.Is(back, k.err))
		}
	}
	typed := []error{
		&llm.UnreachableError{Host: "http://h", Err: errors.New("refused"), Hint: "start it"},
		&llm.ModelMissingError{Model: "m", Host: "http://h"},
		&llm.IncapableError{Model: "m", Role: "spoke", Capability: "tools", Alternatives: []string{"a"}},
	}
	for _, err := range typed {
		back := toWire(fmt.Errorf("x: %w", err)).err()
		var (
			u *llm.UnreachableError
			m *llm.ModelMissingError
			i *llm.IncapableError
		)
		ok := errors.As(back, &u) || errors.As(back, &m) || errors.As(back, &i)
		if !ok || back.Error() != "x: "+err.Error() {
			t.Errorf("%T: %v", err, back)
		}
		if u != nil && (u.Host != "http://h" || u.Hint != "start it") || i != nil && i.Alternatives[0] != "a" {
			t.Errorf("fields lost: %+v %+v", u, i)
		}
	}
	if toWire(nil) != nil || (*WireError)(nil).err() != nil {
		t.Error("nil must stay nil")
	}
}
