// Package help is the keys dialog (? or /help): every key binding with
// what it does, then notes in plain words — the commands, the chats
// dialog's and the permission dialog's keys. Esc, ? or enter closes it
// (the root's keys).
package help

import (
	"strings"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Line is one key and what it does.
type Line struct{ Key, Does string }

// View draws the dialog no wider than widget.DialogWidth(width) and no
// taller than height: the bindings, the lines (a key of their own), and
// the notes, dimmed. At 24 rows it fits whole.
func View(th style.Theme, bindings []key.Binding, lines []Line, notes []string, width, height int) string {
	out := []string{th.BoxTitle.Render("Keys") + th.Dim.Render(" · esc closes")}
	kw := 0
	for _, b := range bindings {
		kw = max(kw, ansi.StringWidth(b.Help().Key))
	}
	for _, b := range bindings {
		h := b.Help()
		out = append(out, th.Key.Render(h.Key+strings.Repeat(" ", kw-ansi.StringWidth(h.Key)))+"  "+h.Desc)
	}
	for _, l := range lines {
		out = append(out, th.Key.Render(l.Key)+"  "+l.Does)
	}
	for _, n := range notes {
		out = append(out, th.Dim.Render(n))
	}
	return widget.Box(th, out, widget.DialogWidth(width), height)
}
