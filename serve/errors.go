package serve

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// WireError is an error as it crosses the socket: its message, and the
// kind and fields a client needs to act on it as on the error itself
// (errors.Is and errors.As hold on the client for the kinds below).
type WireError struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`

	Host         string   `json:"host,omitempty"`
	Model        string   `json:"model,omitempty"`
	Role         string   `json:"role,omitempty"`
	Capability   string   `json:"capability,omitempty"`
	Hint         string   `json:"hint,omitempty"`
	Cause        string   `json:"cause,omitempty"`
	Alternatives []string `json:"alternatives,omitempty"`
	Partial      string   `json:"partial,omitempty"`
}

// The kinds of WireError.
const (
	kindCanceled     = "canceled"
	kindBusy         = "busy"
	kindUnreachable  = "unreachable"
	kindModelMissing = "model_missing"
	kindIncapable    = "incapable"
	kindCut          = "cut"
	kindUnknownGrant = "unknown_grant"
	kindNotFound     = "not_found"
	kindNoChat       = "no_chat"
	kindConfig       = "config"
	kindDiskFull     = "disk_full"
	kindNotInstalled = "not_installed"
	kindOthers       = "others_connected"
	kindTooLarge     = "too_large"
	kindNoSession    = "no_session"
	kindMismatch     = "mismatch"
	kindUnanswerable = "unanswerable"
	kindOther        = "error"
)

// toWire describes err for the client; nil for nil.
func toWire(err error) *WireError {
	if err == nil {
		return nil
	}
	w := &WireError{Kind: kindOther, Message: err.Error()}
	var (
		down *llm.UnreachableError
		miss *llm.ModelMissingError
		inc  *llm.IncapableError
		cut  *llm.StreamCutError
	)
	switch {
	case errors.As(err, &cut):
		w.Kind, w.Partial = kindCut, cut.Partial.Message.Content
		if cut.Err != nil {
			w.Cause = cut.Err.Error()
		}
	case errors.As(err, &down):
		w.Kind, w.Host, w.Hint = kindUnreachable, down.Host, down.Hint
		if down.Err != nil {
			w.Cause = down.Err.Error()
		}
	case errors.As(err, &miss):
		w.Kind, w.Model, w.Host = kindModelMissing, miss.Model, miss.Host
	case errors.As(err, &inc):
		w.Kind, w.Model, w.Role, w.Capability, w.Alternatives = kindIncapable, inc.Model, inc.Role, inc.Capability, inc.Alternatives
	default:
		for _, k := range sentinels {
			if errors.Is(err, k.err) {
				w.Kind = k.kind
				break
			}
		}
	}
	return w
}

// sentinels are the kinds that are one error value, in the order they
// are tried (a cancelled turn first).
var sentinels = []struct {
	kind string
	err  error
}{
	{kindCanceled, context.Canceled},
	{kindUnanswerable, permissions.ErrUnanswerable},
	{kindBusy, hub.ErrBusy},
	{kindUnknownGrant, permissions.ErrUnknownGrant},
	{kindNoChat, hub.ErrNoChat},
	{kindNotFound, memory.ErrNotFound},
	{kindConfig, config.ErrInvalid},
	{kindDiskFull, engine.ErrDiskFull},
	{kindNotInstalled, engine.ErrNotInstalled},
	{kindOthers, errOthers},
	{kindTooLarge, ErrTooLarge},
	{kindNoSession, ErrNoSession},
	{kindMismatch, errMismatch},
}

// remoteError is an error of the serving process: its exact message, and
// beneath it (Unwrap) an error of its kind for errors.Is and errors.As.
type remoteError struct {
	msg   string
	cause error
}

func (e *remoteError) Error() string { return e.msg }
func (e *remoteError) Unwrap() error { return e.cause }

// err rebuilds the error w describes; nil for nil.
func (w *WireError) err() error {
	if w == nil {
		return nil
	}
	var cause error
	switch w.Kind {
	case kindUnreachable:
		u := &llm.UnreachableError{Host: w.Host, Hint: w.Hint}
		if w.Cause != "" {
			u.Err = errors.New(w.Cause)
		}
		cause = u
	case kindModelMissing:
		cause = &llm.ModelMissingError{Model: w.Model, Host: w.Host}
	case kindIncapable:
		cause = &llm.IncapableError{Model: w.Model, Role: w.Role, Capability: w.Capability, Alternatives: w.Alternatives}
	case kindCut:
		c := &llm.StreamCutError{}
		c.Partial.Message.Content = w.Partial
		if w.Cause != "" {
			c.Err = errors.New(w.Cause)
		}
		cause = c
	default:
		for _, k := range sentinels {
			if k.kind == w.Kind {
				cause = k.err
				break
			}
		}
	}
	return &remoteError{msg: w.Message, cause: cause}
}

// codeOf is the JSON-RPC error code of a kind: application errors sit in
// the range the specification leaves to servers.
func codeOf(kind string) int64 {
	switch kind {
	case kindCanceled:
		return -32001
	case kindBusy:
		return -32002
	default:
		return -32000
	}
}

// rpcError is err as a JSON-RPC error, its WireError in Data.
func rpcError(err error) *jsonrpc2.Error {
	w := toWire(err)
	e := &jsonrpc2.Error{Code: codeOf(w.Kind), Message: w.Message}
	e.SetError(w)
	return e
}

// fromRPC turns the error of a call back into the serving process's
// error; an error of the connection itself says the serving process went
// away.
func fromRPC(err error) error {
	if err == nil {
		return nil
	}
	var re *jsonrpc2.Error
	if errors.As(err, &re) {
		if re.Data != nil {
			var w WireError
			if json.Unmarshal(*re.Data, &w) == nil && w.Kind != "" {
				return w.err()
			}
		}
		return errors.New(re.Message)
	}
	if errors.Is(err, jsonrpc2.ErrClosed) {
		return ErrGone
	}
	return err
}

// ErrGone says that the serving process went away during a call.
var ErrGone = errors.New("the bulkhead serving this data directory went away (it may have crashed); the next request starts another — retry the turn")
