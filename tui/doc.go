// Package tui is bulkhead's terminal interface: a chat with streaming
// Markdown answers, a chats list, private chats, a pull dialog for missing
// models and a status bar. It is the only package that imports the charm
// libraries.
//
// # Structure
//
// One root Model (model.go) owns plain child structs with methods: the
// conversation (chat.go, with Markdown by glamour in markdown.go), the
// input (input.go), the status bar (statusbar.go), the chats list
// (chatlist.go), the pull dialog (pull.go) and the help overlay
// (overlay.go); one dialog at a time is drawn over the chat and takes the
// keys. Key handling and the reactions to backend answers live in
// actions.go, bindings in keys.go, colours in styles.go.
//
// # Concurrency
//
// Update and View run on Bubble Tea's loop and do no IO. Every backend
// call is a tea.Cmd (commands.go). A turn (hub Ask or Retry) or a model
// pull runs on a worker goroutine started by a Cmd; the hub's emit
// callback, or the pull's progress callback, only appends to a queue and
// returns (stream.go, turn.go), so it never blocks however slow the
// screen is. A Cmd blocked on that queue hands everything queued to
// Update as one message and is re-armed until the worker ends. The
// workers registry owns those goroutines: esc cancels a turn's context
// (the hub then stops its spokes and logs the turn as cancelled), and
// quitting cancels every worker and Run waits for them (up to five
// seconds) before it returns, so no turn outlives the UI.
package tui
