package apps

import "context"

// Progress is what an out-of-process app tells while a call of it runs:
// that its server is starting for the call, and the tool's own progress
// (an MCP server's notifications/progress). Message is the app's words:
// shown, attributed to the app, never planned on or stored.
type Progress struct {
	App      string `json:"app"`
	Function string `json:"function,omitempty"`
	// Starting: the app's process is being started (and its tools
	// listed) before the call can run; false once it runs.
	Starting bool `json:"starting,omitempty"`
	// Done and Total are the tool's progress so far and the total, if it
	// knows one (0: unknown).
	Done    float64 `json:"done,omitempty"`
	Total   float64 `json:"total,omitempty"`
	Message string  `json:"message,omitempty"`
}

type progressKey struct{}

// WithProgress has the calls made with ctx tell fn how they go (the
// turn's hub shows it in the status line). fn must not block.
func WithProgress(ctx context.Context, fn func(Progress)) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// ProgressOf is the function WithProgress put on ctx, or one that does
// nothing.
func ProgressOf(ctx context.Context) func(Progress) {
	if fn, ok := ctx.Value(progressKey{}).(func(Progress)); ok && fn != nil {
		return fn
	}
	return func(Progress) {}
}
