// Package tui is bulkhead's terminal interface: a chat with streaming
// Markdown answers, the permission dialog, each turn's app activity and
// results card, a chats list, private chats and private queries, a pull
// dialog for missing models, full screens for permissions, apps and
// memory, and a status bar. It and its sub-packages are the only ones
// that draw on the terminal with the charm libraries (package accessible
// uses huh's accessible mode for its line-mode dialogs).
//
// # Structure
//
// A newcomer finds a part of the UI by its folder:
//
//	tui/                    the root model (model.go): it owns the parts, routes
//	                        every message to the one it is for, and acts on what
//	                        they ask; the input (input.go), the status bar
//	                        (statusbar.go), the slash menu (slash.go), the
//	                        workers and their queues (stream.go, turn.go,
//	                        pulling.go), the keys (keys.go)
//	tui/chat                the conversation pane: the turns read, the frame and
//	                        its render cache, each turn's drawing, a running
//	                        turn's Live state, its activity and results card
//	tui/dialogs/permission  the permission dialog, its caveat step and the
//	                        Prompter (the root's side: permit.go)
//	tui/dialogs/chats       the chats list (ctrl+o)
//	tui/dialogs/models      /model's list and picker (the switch: switchmodel.go)
//	tui/dialogs/pull        the model-missing dialog (the pull: pulling.go)
//	tui/dialogs/help        the keys (?), scrolled where taller than the screen
//	tui/screens/permissions the permission manager: grants, rules, the action log
//	tui/screens/apps        the apps screen
//	tui/screens/memory      the memory screen
//	tui/setup               the setup panel's checks and drawing (when: setup.go)
//	tui/forms               every huh form's theme, keys and confirmation
//	tui/widget              building blocks: a screen's layout and table, a
//	                        dialog's box, the filter box, width fitting (a
//	                        path by whole folders, its first and its last
//	                        kept: path.go), Markdown by glamour, safe text
//	                        (Clean)
//	tui/style               the theme
//	tui/request             how a permission request is named and coloured
//
// A part is a component: New opens it (and returns the Cmd that reads
// its data), Update(msg) takes the messages the root routes to it and
// returns what it asks of the root (an Outcome: close, open a chat,
// switch a model, an answer, a key meant for the input…), View draws it
// in the room it is given; none does IO outside a Cmd. A part imports
// only the kit (style, widget, forms, request, screens), never another
// part or the root (arch_test.go). One dialog at a time is drawn over the
// chat and takes the keys; a permission dialog covers any other until it
// is answered. Each form is hosted by the part that opened it, one open
// at a time (form.go). A turn's app calls and permission decisions and
// its results card are drawn inside the turn; the hub logs the results,
// so a turn reloaded from its log (another session's) keeps its card,
// while the activity is shown only for turns run here.
//
// A frame costs the same however long the chat is (tui/chat): the
// conversation draws only the turns on screen, each finished turn is
// rendered and measured once per width and theme into a bounded cache,
// and only the running turn is drawn anew. A chat's log is read a page
// at a time, newest first (Backend.TurnsBefore, in a Cmd); the page
// before is asked for as the view nears the first turn read, and the
// view stays on what it showed when it lands.
//
// # Screens
//
// Three full screens replace the chat above the status bar (widget's
// screen.go lays them out: a title, a filter or description line, a
// table with a cursor, a detail pane, a footer of keys); a permission
// dialog still opens over them. The permission manager
// (screens/permissions; ctrl+g or /permissions, /log for its second tab)
// lists the broker's grants and the config rules and its action log: /
// filters as you type, r, R and X revoke after a confirmation, e exports
// the log as JSON Lines to the data dir. The apps screen (screens/apps;
// ctrl+a or /apps) lists the installed apps and enables or disables them
// through Options.Apps. ctrl+y (or /trusted) toggles the broker's
// trusted-session mode; the status bar shows TRUSTED while it is on. The
// memory screen (screens/memory; ctrl+e or /memory) lists whose long-term memory there
// is — the hub, then each app with memory — and shows the selected
// owner's summaries (by chat title) and entities, with the hub's record
// of an app; text the hub masked shows as masked, in amber. / filters, f
// forgets the owner after a y/n that names what goes (an app at work
// answers hub.ErrBusy, shown as a message), r reads it again. Their data
// comes through Cmds (each screen's Loaded), never from View.
//
// # Setup
//
// With Options.Setup the first screen is the setup panel (tui/setup, and
// setup.go for when it checks): it checks what `bulkhead doctor` checks of Ollama and
// the configured models — the server answers, the hub's, the spokes'
// and each app's own model are installed and can serve their role
// (completion for the hub, tools for a spoke) — and shows what fails,
// with the fix, in place of the conversation. While Ollama is down it
// says which host was tried and where that value came from, how to
// install, start or point elsewhere, and checks again every 2 s
// (backing off to 10 s; ctrl+r checks at once); a query typed meanwhile
// is not sent and stays in the input. A missing model is offered for
// pull at once (the pull dialog); a pull that fails or is declined, or a
// model that lacks its role's capability, leaves a list of the installed
// models that can and how to choose one. The panel goes as soon as
// everything passes, and comes back when the status bar's check or a
// turn finds Ollama down. A spoke model without tools blocks nothing
// (plain chat works): esc or a query puts that panel away.
//
// # Private queries
//
// "/private <query>" (private.go) asks one query with
// hub.AskOptions{Private: true}: no memory goes in and the hub keeps
// nothing of it. Its turn carries a PRIVATE · nothing kept badge. As the
// hub's log does not hold it, the UI keeps it in the view where it was
// asked (Model.kept) until it exits, across reloads of the chat; a new
// session does not have it. ctrl+p starts a private chat instead, marked
// PRIVATE in the header and the status bar.
//
// # Permissions
//
// Prompter (dialogs/permission) is the broker's permissions.Prompter. Prompt
// queues the request and blocks until the dialog answers it or its ctx
// ends; a Cmd the root model keeps armed hands Update a snapshot of the
// queue whenever it changes. The first request shows as a dialog (with
// a bell, and unarmed while the person types — overlay.go's gate, which
// every dialog the person did not open passes — so typing in the chat
// cannot answer it); the others wait in arrival order and the status bar counts
// them. A request whose ctx ends leaves the queue and its dialog closes.
// s and p do not answer at once: the caveat step first lets
// the user limit the grant — an expiry, a number of uses, one argument
// held to its value or folder — shows the exact scope being saved, and
// returns the limits in Decision.Caveats. Irreversible requests offer
// neither s nor p.
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
