package apps

import (
	"context"
	"encoding/json"
	"fmt"
)

// Handler runs one of an app's functions on its call.
type Handler func(ctx context.Context, c Call, f Function) (any, error)

// Typed makes a Handler of a function of decoded arguments: the call's
// arguments are checked against the function's params schema and decoded
// strictly into P (DecodeArgs) before fn runs.
func Typed[P any](fn func(ctx context.Context, c Call, p P) (any, error)) Handler {
	return func(ctx context.Context, c Call, f Function) (any, error) {
		var p P
		if err := DecodeArgs(f, c.Args, &p); err != nil {
			return nil, err
		}
		return fn(ctx, c, p)
	}
}

// Dispatch runs a call on the handler of its function, for an app's Call:
// a function the manifest does not declare (or that has no handler) and
// an ended context are errors; the result is returned as JSON.
func Dispatch(ctx context.Context, m Manifest, handlers map[string]Handler, c Call) (json.RawMessage, error) {
	f, ok := m.Function(c.Function)
	h := handlers[c.Function]
	if !ok || h == nil {
		return nil, fmt.Errorf("no function %q", c.Function)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out, err := h(ctx, c, f)
	if err != nil {
		return nil, err
	}
	return json.Marshal(out)
}
