package tui

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/tui/chat"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Layout: a header line, the conversation, a rule (which carries notices),
// the input, and the status bar.
func (m Model) inputHeight() int {
	switch {
	case m.height >= 20:
		return 3
	case m.height >= 12:
		return 2
	default:
		return 1
	}
}

func (m Model) convHeight() int { return max(m.height-2-m.ruleRows()-m.inputHeight(), 1) }

func (m *Model) layout() {
	m.chat.SetSize(m.width, m.convHeight())
	m.input.setSize(m.width, m.inputHeight())
	if m.perm != nil {
		m.perm.Resize(m.width, m.dialogHeight())
	}
}

// refresh re-draws the conversation on screen (finished turns come from
// a cache).
func (m *Model) refresh() {
	m.chat.Refresh(m.drawCtx())
}

func (m *Model) drawCtx() chat.Draw {
	return chat.Draw{
		Theme: m.th, MD: m.md, Width: m.width, Live: m.liveHere(),
		Spinner: spinnerFrames[m.frame%len(spinnerFrames)], Version: m.opts.Version,
		Now: m.now(), Throttle: m.throttle, Extras: m.extras[m.chat.Chat.ID], Kept: m.kept[m.chat.Chat.ID],
		Vanilla: m.opts.Vanilla,
	}
}

// liveHere is the running turn when it belongs to the chat on screen.
func (m *Model) liveHere() *chat.Live {
	if m.run == nil {
		return nil
	}
	if m.run.vid == m.chat.VID || (m.run.chat != "" && m.run.chat == m.chat.Chat.ID) {
		return m.run.Live
	}
	return nil
}

// View draws the screen: exactly height lines, none wider than width.
func (m Model) View() tea.View {
	top, status := m.parts()
	lines := m.fitTop(top)
	lines = append(lines, status)
	v := tea.NewView(strings.Join(lines, "\n"))
	v.AltScreen = true
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.WindowTitle = "bulkhead"
	if m.overlay == overlayNone || m.overlay == overlayPermission && m.perm != nil && !m.perm.Noting() && !m.screenFull() {
		if c := m.input.cursor(); c != nil {
			c.Position.Y += 1 + m.convHeight() + m.ruleRows()
			v.Cursor = c
		}
	}
	return v
}

// fitTop clips the lines above the status bar to the screen. The
// conversation pane's lines, when they show as drawn, are padded to the
// width already: they are not measured again.
func (m Model) fitTop(top []string) []string {
	pane := m.chat.PaneLines()
	n := len(pane)
	if m.overlay != overlayNone || m.screenFull() || n == 0 || len(top) != m.height-1 || len(top) < 1+n || !slices.Equal(top[1:1+n], pane) {
		return widget.FitLines(top, m.width, m.height-1)
	}
	out := make([]string, 0, len(top))
	out = append(out, widget.FitLines(top[:1], m.width, 1)...)
	out = append(out, pane...)
	return append(out, widget.FitLines(top[1+n:], m.width, len(top)-1-n)...)
}

// parts is the screen before View's last clip: everything above the
// status bar, and the status bar. Each part sizes itself to the width;
// the resize test holds them to that.
func (m Model) parts() ([]string, string) {
	top, full := m.screenView()
	if !full {
		top = strings.Join([]string{m.header(), m.convView(), m.rule(), m.input.view()}, "\n")
	}
	switch {
	case m.overlay == overlayPermission && !full:
		// The dialog covers the chat, never the input box: typing while it
		// waits shows where it goes.
		h := m.dialogHeight()
		lines := strings.Split(top, "\n")
		if len(lines) > h {
			top = widget.OverlayOn(strings.Join(lines[:h], "\n"), m.dialog(), m.width, h) + "\n" + strings.Join(lines[h:], "\n")
		} else {
			top = widget.OverlayOn(top, m.dialog(), m.width, m.height-1)
		}
	case m.overlay != overlayNone && !m.overlay.full():
		top = widget.OverlayOn(top, m.dialog(), m.width, m.height-1)
	case !full:
		top = m.withMenu(top) // the slash command menu, when it shows
	}
	bar := m.bar
	bar.waiting = m.waiting()
	bar.trusted = m.trusted
	bar.now = m.now()
	return strings.Split(top, "\n"), bar.view(m.th, m.width, m.title(), m.chat.Chat.Private, m.run != nil)
}

func (m Model) dialog() string {
	h := m.height - 1
	switch m.overlay {
	case overlayHelp:
		return m.keysAt.View(m.th, helpContent(m.keys, m.opts.Models != nil), m.width, h)
	case overlayChats:
		if m.list != nil {
			return m.list.View(m.th, widget.DialogWidth(m.width), h, m.now())
		}
	case overlayModels:
		if m.models != nil {
			return m.models.View(m.th, m.width, h)
		}
	case overlayPull:
		if m.pull != nil {
			return m.pull.View(m.th, m.width, h, m.opts.Ollama != nil)
		}
	case overlayPermission:
		if m.perm != nil {
			if !m.screenFull() {
				h = m.dialogHeight()
			}
			return m.perm.View(m.th, m.width, h)
		}
	}
	return ""
}
