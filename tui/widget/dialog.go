package widget

import (
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// A dialog is a framed box drawn over what is on screen.

// ArmDelay is how long a dialog that opened without the person's own key
// (a permission request, a model to pull) stays unarmed: its answers take
// no key until this long has passed since it opened and since the last key
// typed at it, and what is typed meanwhile goes to the input box behind it
// (the root model's gate, tui/overlay.go; Firefox's
// security.dialog_enable_delay).
const ArmDelay = 800 * time.Millisecond

// DialogWidth is how wide a dialog is on a screen width wide.
func DialogWidth(width int) int { return min(width, 72) }

// Box frames lines as a dialog no wider than width and no taller than
// height; lines too wide are wrapped, lines too many are cut.
func Box(th style.Theme, lines []string, width, height int) string {
	return BoxWith(th.Box, lines, width, height)
}

// BoxWith is Box in a frame style of its own (a warning's colour).
func BoxWith(frame lipgloss.Style, lines []string, width, height int) string {
	inner := max(width-4, 1)
	body := strings.Split(FitWidth(strings.Join(lines, "\n"), inner), "\n")
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

// OverlayOn draws dialog centred on top of base, an area width by height.
func OverlayOn(base, dialog string, width, height int) string {
	if width < 1 || height < 1 {
		return ""
	}
	base = strings.Join(FitLines(strings.Split(base, "\n"), width, height), "\n")
	x := max((width-lipgloss.Width(dialog))/2, 0)
	y := max((height-lipgloss.Height(dialog))/2, 0)
	layers := lipgloss.NewCompositor(lipgloss.NewLayer(base), lipgloss.NewLayer(dialog).X(x).Y(y).Z(1))
	return lipgloss.NewCanvas(width, height).Compose(layers).Render()
}
