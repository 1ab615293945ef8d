package tui

import (
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// overlay names the dialog on top of the chat; only one is open at a time
// and it takes every key but ctrl+c.
type overlay int

const (
	overlayNone overlay = iota
	overlayHelp
	overlayChats
	overlayPull
	overlayPermission // a permission request (dialog.go); covers any other
	overlayManager    // the permission manager, a full screen (manager.go)
	overlayApps       // the apps screen, a full screen (appsview.go)
	overlayMemory     // the memory screen, a full screen (memoryview.go)
	overlayModels     // /model's list of installed models (modelsview.go)
)

// full reports whether o is a full screen rather than a dialog.
func (o overlay) full() bool {
	return o == overlayManager || o == overlayApps || o == overlayMemory
}

// helpView lists the key bindings. At 24 rows it fits whole.
func helpView(th style.Theme, keys keyMap, width, height int, models bool) string {
	lines := []string{th.BoxTitle.Render("Keys") + th.Dim.Render(" · esc closes")}
	kw := 0
	for _, b := range keys.help() {
		kw = max(kw, ansi.StringWidth(b.Help().Key))
	}
	for _, b := range keys.help() {
		h := b.Help()
		lines = append(lines, th.Key.Render(h.Key+strings.Repeat(" ", kw-ansi.StringWidth(h.Key)))+"  "+h.Desc)
	}
	// A private query is not logged: it is gone when the UI exits.
	lines = append(lines, th.Key.Render("/private <query>")+"  no memory in, nothing saved; shown until you quit",
		th.Key.Render("/")+"  commands, with a menu: "+slashNames(models),
		th.Dim.Render("chats: ↑/↓ · enter open · n new · p private · d delete"))
	for _, l := range permHelp {
		lines = append(lines, th.Dim.Render(l))
	}
	return widget.Box(th, lines, widget.DialogWidth(width), height)
}
