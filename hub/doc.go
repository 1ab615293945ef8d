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
// # Judgement (DESIGN.md §2, docs/plan.md)
//
// Each turn keeps a ledger (provenance.go) of where values came from: the
// user's words (this request and the chat's earlier ones), the planner's
// step queries, whole fields of data the user let flow (data and collab
// answers), and everything apps authored — call outputs and errors,
// descriptions, a spoke's memory of the chat. Every consequential request
// (irreversible, a write, collab, data) is traced against it value by
// value, matching whole values (addresses, URLs, paths, numbers, phrases)
// so a substring or a look-alike of what the user typed is not "typed".
// Expected is a property of (requesting app, plan step, call): the gate
// knows the step from the task's context (withStep), never from the
// spoke; a step expects its app's mapped function once with decisive
// values from the user, the plan or allowed data, and an ISC request only
// where the plan routes that functionality to the requesting step. A
// flow carrying labels its receiver is not cleared for, or
// instruction-like text, is not what the plan expected either. The
// judgement (assess.go) becomes the request's Warning, Expected,
// Concerns, Provenance and Labels; a request with no concern is routine,
// the only kind trusted-session mode and --on-prompt=expected pass.
//
// The synthesis of a plan with several steps (synth.go) reads the typed
// results with every free-text value replaced by a reference the hub
// fills in afterwards, verbatim and attributed, so no app text can steer
// what the answer says about another app's value. A chat step of such a
// plan runs in a fresh spoke that logs nothing.
//
// # Memory (DESIGN.md §6)
//
// What the planner sees of memory: the user's earlier requests in the chat
// and the apps that served them, the hub's summary of the chat — built by
// the hub's model from the user's messages only — and the names of the
// entities the hub holds (never their values). Hub entities come from the
// user's messages (extracted by the hub's model) and from typed results:
// each top-level property the catalog's response schema declares becomes
// "<domain>.<property>" (a booking's dates: trip.dates), so their names are
// the catalog's, never an app's. A step may list entity names in needs
// (an enum of exactly those names); before the step runs, the operator
// fetches the values and asks a data permission that shows which values go
// to which app, with the hub's warning (labels the app is not cleared for,
// instruction-like content); only if allowed are they passed as the task's
// data.
//
// Each spoke keeps its own summary per chat and its own entities, made by
// its own model from its own log; the hub keeps a masked copy as its record
// of the spoke, for the user to see (Memory, ExportMemory) and forget
// (Forget). Records never reach the planner. Every text derived from app
// output is masked (package guard) before it is stored anywhere — a spoke's
// answer and error, its summary and entity values, the hub's stored answer
// of a turn an app worked on, typed-result entity values — and each masking
// is a "masked" note in the action log of the turn's broker.
//
// Private mode: a private chat keeps everything in an ephemeral store; a
// private query (AskOptions.Private) runs in any chat with no memory in
// (no history, summary or entity names for the planner; fresh spokes with
// no context and no recall) and none out (its log is ephemeral and dropped,
// its spokes log nothing, no long-term memory is made of it). Both decide
// permissions through Options.PrivateBroker, which reads the stored grants
// but writes nothing. What the user asked an app to do is still done to the
// app's own data (a sent mail stays sent).
//
// # Concurrency contract
//
// An Operator is safe for concurrent use. Each call to Ask or Retry runs
// on its caller's goroutine, which owns the turn; the work of each app runs
// on that app's spoke goroutine (package spokes), which the Operator starts
// on first use in a chat and stops in DeleteChat, Forget and Close, waiting
// for it (a private query's own spokes are stopped when it ends). One turn
// runs per chat at a time: a second Ask on a busy chat fails at once with
// ErrBusy rather than queueing.
//
// Events of a turn are delivered to the emit callback in order — plan,
// then spoke/thinking/token as work goes on, then exactly one answer or
// error — and never concurrently. emit runs on the turn's goroutine or the
// spoke's, so it must not block for long: a UI forwards the event to its
// own loop and returns. A slow emit slows the turn; it never loses events.
//
// An ISC request runs the target app's function on the requesting
// spoke's goroutine (spokes.Spoke.Invoke), taking its turn at the app but
// never waiting for the target spoke's own task, so apps asking each
// other in one level cannot deadlock; an app never gets its own
// functionality through the hub.
//
// Cancelling the context passed to Ask cancels the planner call and every
// spoke working on the turn; the turn is then logged as cancelled with any
// partial answer kept, and Ask returns the context's error.
//
// Long-term memory is kept up to date by one background worker per
// Operator (with MemoryOptions.Enabled), which New starts and Close stops.
// A finished turn that is not private enqueues a job for the hub and one
// for each spoke that logged an interaction in it; enqueueing never blocks
// (a full queue drops the job and logs it; nothing is lost for good, since
// the next job for that owner and chat covers every interaction since its
// summary). Jobs run one at a time, only while no turn runs and after
// MemoryOptions.Quiet without one, so that they do not compete with the
// user's next request for a local model; a job already running when a turn
// starts goes on beside it — it never blocks the turn. Each job has its own
// context (bounded to two minutes); failures are logged, never shown.
// FlushMemory runs the queue now and waits; Forget drops the owner's queued
// jobs, cancels its running one and waits for it before deleting, so
// nothing of the owner is written after Forget returns; Close lets the
// queue run for up to MemoryOptions.Drain, then cancels the job in flight
// and waits for the worker. Masking runs on whichever goroutine stores the
// text (a spoke's, the worker's, the turn's).
package hub
