package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
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

// dialogWidth is how wide a dialog is on a screen width wide.
func dialogWidth(width int) int { return min(width, 72) }

// box frames lines as a dialog no wider than width and no taller than
// height; lines too wide are wrapped, lines too many are cut.
func box(th style.Theme, lines []string, width, height int) string {
	return boxWith(th.Box, lines, width, height)
}

// boxWith is box in a frame style of its own (a warning's colour).
func boxWith(frame lipgloss.Style, lines []string, width, height int) string {
	inner := max(width-4, 1)
	body := strings.Split(widget.FitWidth(strings.Join(lines, "\n"), inner), "\n")
	if limit := max(height-2, 1); len(body) > limit {
		body = body[:limit]
	}
	for i, l := range body {
		if pad := inner - ansi.StringWidth(l); pad > 0 {
			body[i] = l + strings.Repeat(" ", pad)
		}
	}
	return frame.Render(strings.Join(body, "\n"))
}

// overlayOn draws dialog centred on top of base, an area width by height.
func overlayOn(base, dialog string, width, height int) string {
	if width < 1 || height < 1 {
		return ""
	}
	base = strings.Join(widget.FitLines(strings.Split(base, "\n"), width, height), "\n")
	x := max((width-lipgloss.Width(dialog))/2, 0)
	y := max((height-lipgloss.Height(dialog))/2, 0)
	layers := lipgloss.NewCompositor(lipgloss.NewLayer(base), lipgloss.NewLayer(dialog).X(x).Y(y).Z(1))
	return lipgloss.NewCanvas(width, height).Compose(layers).Render()
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
	return box(th, lines, dialogWidth(width), height)
}
