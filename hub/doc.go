// Package hub is bulkhead's trusted core: the deterministic Operator and
// the Planner. No app-authored text reaches it as instructions; it reads
// only the user's words, its own memory of them and the vetted catalog.
//
// # Data flow of a turn
//
// Ask logs the request in the hub's namespace (status pending, synced, so a
// crash leaves a visible, retryable turn), asks the Planner for a typed
// Plan with the hub's own model and a `format` schema whose functionality
// enum holds only installed functionalities, validates it (an unusable plan
// is retried once with the reason, then replaced by the vanilla fallback
// and logged), runs it on spokes, and logs the outcome in place. The plan
// format is documented in docs/plan.md.
//
// # Concurrency contract
//
// An Operator is safe for concurrent use. Each call to Ask or Retry runs
// on its caller's goroutine, which owns the turn; the work of each app runs
// on that app's spoke goroutine (package spokes), which the Operator starts
// on first use in a chat and stops in DeleteChat and Close, waiting for it.
// One turn runs per chat at a time: a second Ask on a busy chat fails at
// once with ErrBusy rather than queueing.
//
// Events of a turn are delivered to the emit callback in order — plan,
// then spoke/thinking/token as work goes on, then exactly one answer or
// error — and never concurrently. emit runs on the turn's goroutine or the
// spoke's, so it must not block for long: a UI forwards the event to its
// own loop and returns. A slow emit slows the turn; it never loses events.
//
// Cancelling the context passed to Ask cancels the planner call and every
// spoke working on the turn; the turn is then logged as cancelled with any
// partial answer kept, and Ask returns the context's error.
package hub
