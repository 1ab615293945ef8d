package tui

import (
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/help"
	"github.com/bulkhead-dev/bulkhead/tui/style"
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

// helpView is the keys dialog (tui/dialogs/help) with this UI's keys.
func helpView(th style.Theme, keys keyMap, width, height int, models bool) string {
	// A private query is not logged: it is gone when the UI exits.
	lines := []help.Line{
		{Key: "/private <query>", Does: "no memory in, nothing saved; shown until you quit"},
		{Key: "/", Does: "commands, with a menu: " + slashNames(models)},
	}
	notes := append([]string{"chats: ↑/↓ · enter open · n new · p private · d delete"}, permHelp...)
	return help.View(th, keys.help(), lines, notes, width, height)
}
