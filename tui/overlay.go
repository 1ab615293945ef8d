package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/tui/dialogs/help"
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
