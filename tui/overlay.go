package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/tui/dialogs/help"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// overlay names the dialog on top of the chat; only one is open at a time
// and it takes every key but ctrl+c.
type overlay int

const (
	overlayNone       overlay = iota
	overlayHelp               // the keys (dialogs/help)
	overlayChats              // the chats list (dialogs/chats)
	overlayPull               // a model to pull (dialogs/pull)
	overlayPermission         // a permission request (dialogs/permission); covers any other
	overlayManager            // the permission manager, a full screen (screens/permissions)
	overlayApps               // the apps screen, a full screen (screens/apps)
	overlayMemory             // the memory screen, a full screen (screens/memory)
	overlayModels             // /model's list of installed models (dialogs/models)
)

// full reports whether o is a full screen rather than a dialog.
func (o overlay) full() bool {
	return o == overlayManager || o == overlayApps || o == overlayMemory
}

// helpContent is what the keys dialog (tui/dialogs/help) lists: this
// UI's keys, its commands and the dialogs' keys.
func helpContent(keys keyMap, models bool) help.Content {
	// A private query is not logged: it is gone when the UI exits.
	lines := []help.Line{
		{Key: "/private <query>", Does: "no memory in, nothing saved; shown until you quit"},
		{Key: "/", Does: "commands, with a menu: " + slashNames(models)},
	}
	notes := append([]string{"chats: ↑/↓ · enter open · n new · p private · d delete"}, permHelp...)
	return help.Content{Bindings: keys.help(), Lines: lines, Notes: notes}
}

// openHelp opens the keys dialog at its top.
func (m *Model) openHelp() {
	m.overlay, m.keysAt = overlayHelp, help.Dialog{}
}

// helpKey is a key for the open keys dialog: esc, ?, q or enter closes
// it; ↑/↓, pgup/pgdn, home/end scroll it where it is taller than the
// screen.
func (m *Model) helpKey(msg tea.KeyPressMsg) {
	if key.Matches(msg, m.keys.Cancel, m.keys.Help) || msg.String() == "q" || msg.String() == "enter" {
		m.overlay = overlayNone
		return
	}
	m.keysAt.Scroll(msg.String(), helpContent(m.keys, m.opts.Models != nil), m.width, m.height-1)
}

// helpWheel scrolls the keys dialog by the mouse wheel, a line a notch.
func (m *Model) helpWheel(msg tea.MouseWheelMsg) {
	switch msg.Button {
	case tea.MouseWheelUp:
		m.keysAt.Scroll("up", helpContent(m.keys, m.opts.Models != nil), m.width, m.height-1)
	case tea.MouseWheelDown:
		m.keysAt.Scroll("down", helpContent(m.keys, m.opts.Models != nil), m.width, m.height-1)
	}
}

// The gate: a dialog that opens without the person's own key — a
// permission request (the changes and the network dialogs among them), a
// model to pull that a turn or the setup checks found missing — must not
// take keys typed before it was seen. Such a dialog is unarmed when it
// comes on top, and stays so until widget.ArmDelay has passed with no key
// typed at it: meanwhile every key but a scroll goes to the input box
// behind it (enter sends the message), restarting the wait, and its
// answers are drawn dimmed. Dialogs the person opened (a slash command, a
// key) are armed at once. Update decides it for whatever dialog is on
// top, after every message (regate), so no dialog decides for itself.

// gate follows the dialog on top.
type gate struct {
	top   any  // the dialog on top (a pointer, or its overlay); nil: none
	armed bool // it takes answers
	gen   int  // the wait in force: a key typed at it starts a new one
}

// armMsg ends wait gen, as its timer delivers it (a later key started a
// newer wait, and this one is void).
type armMsg struct{ gen int }

// onTop is the dialog on top and whether the person opened it: a
// permission request never is; a pull is where /model NAME offered it.
func (m *Model) onTop() (top any, byPerson bool) {
	switch m.overlay {
	case overlayNone:
		return nil, true
	case overlayPermission:
		if m.perm != nil {
			return m.perm, false
		}
	case overlayPull:
		if m.pull != nil {
			return m.pull, m.pull.Switch
		}
	}
	return m.overlay, true
}

// regate follows a change of the dialog on top: one the person did not
// open starts unarmed, with the wait; any other is armed.
func (m *Model) regate() tea.Cmd {
	top, byPerson := m.onTop()
	if top == m.gate.top {
		return nil
	}
	m.gate.top = top
	if byPerson {
		m.gate.gen++
		m.setArmed(true)
		return nil
	}
	return m.disarm()
}

// disarm starts the wait afresh: the dialog on top takes answers once
// widget.ArmDelay has passed without another key.
func (m *Model) disarm() tea.Cmd {
	m.gate.gen++
	m.setArmed(false)
	if m.after == nil {
		return nil // tests end the wait with armMsg
	}
	return m.after(widget.ArmDelay, armMsg{gen: m.gate.gen})
}

// onArm ends the wait, unless a key started a newer one.
func (m *Model) onArm(msg armMsg) {
	if msg.gen == m.gate.gen && m.gate.top != nil {
		m.setArmed(true)
	}
}

// setArmed records whether the dialog on top takes answers, and tells it
// (it draws its answers dimmed until then).
func (m *Model) setArmed(armed bool) {
	m.gate.armed = armed
	if d, ok := m.gate.top.(interface{ SetArmed(bool) }); ok {
		d.SetArmed(armed)
	}
}

// unarmed reports whether the dialog on top waits to be armed.
func (m *Model) unarmed() bool { return m.gate.top != nil && !m.gate.armed }

// scrollKey reports whether k only scrolls what a dialog shows: it goes
// to the dialog armed or not.
func scrollKey(k tea.KeyPressMsg) bool {
	switch k.String() {
	case "up", "down", "pgup", "pgdown":
		return true
	}
	return false
}

// toInput hands a key or a paste typed while a dialog shows to the input
// box behind it (enter sends the message: a turn runs, or the text stays
// with a notice) and starts the dialog's wait again: the person is typing.
func (m *Model) toInput(msg tea.Msg) tea.Cmd {
	wait := m.disarm()
	if k, ok := msg.(tea.KeyPressMsg); ok && key.Matches(k, m.keys.Send) {
		return tea.Batch(wait, m.send())
	}
	return tea.Batch(wait, m.input.update(msg))
}
