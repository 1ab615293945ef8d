package llm

import (
	"errors"
	"fmt"
	"time"
)

// UnreachableError says that nothing answers at the Ollama host.
type UnreachableError struct {
	Host string
	Err  error
	// Hint tells the user what to do about it.
	Hint string
}

func (e *UnreachableError) Error() string {
	msg := fmt.Sprintf("Ollama is not reachable at %s", e.Host)
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		msg += ". " + e.Hint
	}
	return msg
}

func (e *UnreachableError) Unwrap() error { return e.Err }

// installHint is shown when Ollama is neither running nor installed.
const installHint = "Install Ollama from https://ollama.com/download and start it with `ollama serve`, or point ollama.host (--ollama-host, OLLAMA_HOST) at a running server"

// ModelMissingError says that the host runs but does not have the model.
type ModelMissingError struct {
	Model string
	Host  string
}

func (e *ModelMissingError) Error() string {
	return fmt.Sprintf("model %q is not available on %s; fetch it with `ollama pull %s`", e.Model, e.Host, e.Model)
}

// StreamCutError says that an answer stream ended before Ollama marked it
// done: the server died, the connection broke, or a line was malformed.
// Partial holds everything that arrived.
type StreamCutError struct {
	Partial Response
	Err     error
}

func (e *StreamCutError) Error() string {
	cause := "the stream ended without a final message"
	if e.Err != nil {
		cause = e.Err.Error()
	}
	return fmt.Sprintf("the answer was cut off after %d characters (%s)", len(e.Partial.Message.Content), cause)
}

func (e *StreamCutError) Unwrap() error { return e.Err }

// IsModelMissing reports whether err says a model is missing, and which.
func IsModelMissing(err error) (string, bool) {
	var m *ModelMissingError
	if errors.As(err, &m) {
		return m.Model, true
	}
	return "", false
}

// StalledError says that the server sent nothing for After: a stream
// that stalled, or a server that answered with headers and then nothing.
type StalledError struct {
	After time.Duration
}

func (e *StalledError) Error() string {
	return fmt.Sprintf("the model server sent nothing for %s (limits.stall_timeout); it may be overloaded or stuck", e.After)
}

// LimitError says that a model call passed one of its bounds (Limits):
// what passed which limit, and the config key that sets it.
type LimitError struct {
	What, Got, Limit, Key string
}

func (e *LimitError) Error() string {
	msg := e.What + " passed its limit of " + e.Limit
	if e.Got != "" {
		msg = fmt.Sprintf("%s (%s) passed its limit of %s", e.What, e.Got, e.Limit)
	}
	return msg + "; raise " + e.Key + " in the config if this was expected"
}
