// Package screens holds the full screens that replace the chat above
// the status bar — the permission manager (permissions), the apps screen
// (apps) and the memory screen (memory) — one sub-package each. A screen
// is a component: New opens it and returns the Cmd that reads its data,
// Update(msg) takes every message the root model routes to it (keys,
// the wheel, a paste, a resize, its own Cmds' answers, its confirmation
// form's messages) and says what it asks of the root (an Outcome), View
// draws it. None of them does IO outside a Cmd. A permission dialog
// still opens over a screen; the root then keeps the screen's keys from
// it, and Leave ends its open confirmation as esc would when a dialog's
// form takes the keys.
package screens

// Outcome is what a screen's Update asks of the root model.
type Outcome int

const (
	Stay          Outcome = iota // nothing: the screen stays open
	Close                        // the user left the screen
	ToggleTrusted                // ctrl+y: switch trusted-session mode (the permission manager)
)
