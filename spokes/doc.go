// Package spokes runs the spokes of bulkhead's hub-and-spoke core. A Spoke
// serves one app (or none: the vanilla spoke) for one chat. It owns three
// things no other spoke can reach: its model client (built from the app's
// own model and host), its memory namespace (spoke/<app>), and the
// goroutine that does its work.
//
// Concurrency: Start launches the spoke's goroutine; Stop ends it and waits.
// Do hands the goroutine one task and waits for its result or for the
// task's context to end; tasks run one at a time, in arrival order, so a
// spoke's view of its own conversation is never interleaved. Cancelling a
// task's context cancels its model call at once. Do, Start and Stop are
// safe to call from any goroutine.
package spokes
