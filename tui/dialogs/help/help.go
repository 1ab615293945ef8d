// Package help is the keys dialog (? or /help): every key binding with
// what it does, then notes in plain words — the commands, the chats
// dialog's and the permission dialog's keys. Where it is taller than the
// screen (80×24 is), its title stays and the rest scrolls: ↑/↓ (k/j) a
// line, pgup/pgdn a page, home/end; a line under it counts what is above
// and below. Esc, ?, q or enter closes it (the root's keys).
package help

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Line is one key and what it does.
type Line struct{ Key, Does string }

// Content is what the dialog lists: the bindings, the lines (a key of
// their own), and the notes, dimmed.
type Content struct {
	Bindings []key.Binding
	Lines    []Line
	Notes    []string
}

// Dialog is where the dialog is scrolled to; the zero value shows its
// top. The root keeps one while the dialog is open.
type Dialog struct {
	scroll int // the first body line shown
}

// Scroll moves the body by key s (↑/↓, k/j, pgup/pgdn, home/end), for
// the dialog as View draws it in width by height; it reports whether
// the key was one of those.
func (d *Dialog) Scroll(s string, c Content, width, height int) bool {
	body, window := layout(style.Theme{}, c, width, height)
	last := max(len(body)-window, 0)
	switch s {
	case "up", "k":
		d.scroll--
	case "down", "j":
		d.scroll++
	case "pgup":
		d.scroll -= max(window-1, 1)
	case "pgdown", "space":
		d.scroll += max(window-1, 1)
	case "home":
		d.scroll = 0
	case "end":
		d.scroll = last
	default:
		return false
	}
	d.scroll = min(max(d.scroll, 0), last)
	return true
}

// View draws the dialog no wider than widget.DialogWidth(width) and no
// taller than height: the title, then as much of the body as fits from
// the line scrolled to, and, when it does not all fit, a line that says
// how much is above and below and how to scroll.
func (d Dialog) View(th style.Theme, c Content, width, height int) string {
	body, window := layout(th, c, width, height)
	title := th.BoxTitle.Render("Keys") + th.Dim.Render(" · esc closes")
	out := []string{title}
	if window >= len(body) {
		out = append(out, body...)
		return widget.Box(th, out, widget.DialogWidth(width), height)
	}
	start := min(max(d.scroll, 0), len(body)-window)
	out = append(out, body[start:start+window]...)
	var more []string
	if start > 0 {
		more = append(more, fmt.Sprintf("↑ %d above", start))
	}
	if below := len(body) - start - window; below > 0 {
		more = append(more, fmt.Sprintf("↓ %d more", below))
	}
	more = append(more, "↑/↓ pgup/pgdn scroll")
	inner := max(widget.DialogWidth(width)-4, 1)
	out = append(out, th.Dim.Render(ansi.Truncate(strings.Join(more, " · "), inner, "…")))
	return widget.Box(th, out, widget.DialogWidth(width), height)
}

// layout is the body's lines, each fitted to the dialog's inner width (a
// long one wrapped under its own indentation), and how many of them the
// window shows: all of them when they fit under the title, else the room
// left by the title and the scroll line.
func layout(th style.Theme, c Content, width, height int) (body []string, window int) {
	inner := max(widget.DialogWidth(width)-4, 1)
	kw := 0
	for _, b := range c.Bindings {
		kw = max(kw, ansi.StringWidth(b.Help().Key))
	}
	for _, b := range c.Bindings {
		h := b.Help()
		body = append(body, hanging(th.Key.Render(h.Key+strings.Repeat(" ", kw-ansi.StringWidth(h.Key)))+"  ", h.Desc, inner, lipgloss.NewStyle(), 0)...)
	}
	for _, l := range c.Lines {
		body = append(body, hanging(th.Key.Render(l.Key)+"  ", l.Does, inner, lipgloss.NewStyle(), 0)...)
	}
	for _, n := range c.Notes {
		trimmed := strings.TrimLeft(n, " ")
		body = append(body, hanging(strings.Repeat(" ", len(n)-len(trimmed)), trimmed, inner, th.Dim, 2)...)
	}
	room := max(height-2-1, 1) // the frame, the title
	if len(body) <= room {
		return body, len(body)
	}
	return body, max(room-1, 1) // the scroll line
}

// hanging is lead then text in st, wrapped to inner cells, its later
// lines indented under the text's start and by more.
func hanging(lead, text string, inner int, st lipgloss.Style, more int) []string {
	lw := ansi.StringWidth(lead)
	var out []string
	if lw > inner/2 {
		// A key too long to keep beside its words: a line of its own.
		out = append(out, ansi.Truncate(lead, inner, "…"))
		lead, lw = "  ", 2
	}
	for i, l := range strings.Split(widget.FitWidth(text, max(inner-lw-more, 1)), "\n") {
		if i == 0 {
			out = append(out, lead+st.Render(l))
		} else {
			out = append(out, strings.Repeat(" ", lw+more)+st.Render(l))
		}
	}
	return out
}
