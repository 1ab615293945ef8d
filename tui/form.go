package tui

import (
	tea "charm.land/bubbletea/v2"
)

// Forms and pickers are huh forms (charm.land/huh/v2, built by
// tui/forms), each hosted by the part that opened it: the chats dialog's
// delete confirmation, /model's picker, the pull dialog's "pull it
// now?", a screen's confirmation, the
// permission dialog's deny-with-note field and its choice among apps.
// One is open at a time, wherever it lives (they are all modal): a form
// opening leaves every other as esc would, a permission dialog opening
// leaves the form under it, and no other form opens while a dialog shows
// — its keys, and huh's own messages for moving between fields, must
// reach the dialog alone. While a form is open, keys go to it (ctrl+c
// still quits) and so does every message the TUI does not know.

// leaveAllForms ends, as esc would, every open form but the permission
// dialog's.
func (m *Model) leaveAllForms() tea.Cmd {
	cmds := []tea.Cmd{m.leaveScreens()}
	if m.list != nil {
		cmds = append(cmds, m.list.Leave())
	}
	if m.models != nil {
		cmds = append(cmds, m.models.Leave())
	}
	if m.pull != nil {
		cmds = append(cmds, m.pull.Leave())
	}
	return tea.Batch(cmds...)
}

// leaveForms ends, as esc would, the open form of overlay o, which is
// going (replaced, or closed without a key of its own).
func (m *Model) leaveForms(o overlay) tea.Cmd {
	switch {
	case o == overlayChats && m.list != nil:
		return m.list.Leave()
	case o == overlayModels && m.models != nil:
		return m.models.Leave()
	case o == overlayPull && m.pull != nil:
		return m.pull.Leave()
	}
	return nil
}
