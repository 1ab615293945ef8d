package hub

import (
	"encoding/json"

	"github.com/bulkhead-dev/bulkhead/hub/judge"
)

// The judgement — what "expected" means, where a value came from, what a
// dialog says of it — is package judge's (hub/judge): the gate, the
// operator and the synthesis ask it and act on its verdict.

// Step is one unit of work of a plan, served by one app's spoke.
type Step = judge.Step

// Binding is what a plan's step declares it expects for one argument.
type Binding = judge.Binding

// ChatFunctionality is the catalog entry the vanilla spoke provides.
const ChatFunctionality = judge.ChatFunctionality

// A turn's values are what its steps' references bind to.
var _ judge.Values = (*turnRun)(nil)

// StepValue is the typed value a step of the turn returned.
func (t *turnRun) StepValue(id string) json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.values[id]
}

// Entity is the value of a hub entity the turn shared.
func (t *turnRun) Entity(name string) (string, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.entities[name]
	return e, ok
}
