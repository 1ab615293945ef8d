// Package spokes runs the spokes of bulkhead's hub-and-spoke core. A Spoke
// serves one app (or none: the vanilla spoke) for one chat. It owns three
// things no other spoke can reach: its model client (built from the app's
// own model and host), its memory namespace (spoke/<app>), and the
// goroutine that does its work.
//
// Working memory: a task's context is the spoke's system prompt, its own
// summary of the chat (from its namespace's LongTerm), its last History
// completed interactions, and the query with any data the user shared. App
// spokes may also be offered the recall tool, which searches the spoke's own
// entities: the Namespace is the spoke's only handle on memory, so there is
// no way to name another owner's. A Fresh task (a private query, the
// synthesis) gets none of it; a NoLog task leaves nothing in the namespace.
// Before it stores its answer or error — both derived from app output — the
// spoke masks them with the hub's Mask (invariant 7).
//
// Concurrency: Start launches the spoke's goroutine; Stop ends it and waits.
// Do hands the goroutine one task and waits for its result or for the
// task's context to end; tasks run one at a time, in arrival order, so a
// spoke's view of its own conversation is never interleaved. Cancelling a
// task's context cancels its model call at once. Do, Start and Stop are
// safe to call from any goroutine.
package spokes
