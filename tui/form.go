package tui

import (
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	"github.com/bulkhead-dev/bulkhead/tui/forms"
)

// Forms and pickers are huh forms (charm.land/huh/v2, built by
// tui/forms). The root hosts those of its own panes — the chats list's
// delete confirmation and /model's picker; a screen hosts its
// confirmation, the permission dialog its deny-with-note field and its
// choice among apps. One is open at a time, wherever it lives (they are
// all modal): a form opening leaves every other as esc would, a
// permission dialog opening leaves the form under it, and no form of the
// root opens while a dialog shows — its keys, and huh's own messages for
// moving between fields, must reach the dialog alone. While a form is
// open, keys go to it (ctrl+c still quits) and so does every message the
// TUI does not know, and the pane that opened it draws its View where it
// asks.

// formOwner names the pane a form belongs to.
type formOwner string

const (
	formModels formOwner = "models" // /model's picker
)

// hostedForm is an open form and what its owner does when it ends:
// done gets completed true when the user submitted it, false when esc
// left it.
type hostedForm struct {
	owner formOwner
	f     *huh.Form
	done  func(m *Model, completed bool) tea.Cmd
}

// openForm opens a form of fields for owner, width cells wide.
func (m *Model) openForm(owner formOwner, width int, done func(m *Model, completed bool) tea.Cmd, fields ...huh.Field) tea.Cmd {
	f := forms.New(m.th, width, fields...)
	if m.perm != nil {
		// A dialog shows: a form of another pane (a /model list that
		// arrives late) would take its keys, or a note's, and answer it.
		return nil
	}
	prev := m.leaveAllForms() // one form at a time
	m.form = &hostedForm{owner: owner, f: f, done: done}
	return tea.Batch(prev, f.Init())
}

// leaveAllForms ends, as esc would, the open form of the root and every
// screen's confirmation.
func (m *Model) leaveAllForms() tea.Cmd {
	prev := m.leaveScreens()
	if m.list != nil {
		prev = tea.Batch(prev, m.list.Leave())
	}
	if old := m.form; old != nil {
		m.form = nil
		prev = tea.Batch(prev, old.done(m, false))
	}
	return prev
}

// formOf is the open form when owner opened it.
func (m *Model) formOf(owner formOwner) *huh.Form {
	if m.form == nil || m.form.owner != owner {
		return nil
	}
	return m.form.f
}

// formView draws owner's open form ("" when it has none).
func (m Model) formView(owner formOwner) string {
	if m.form == nil || m.form.owner != owner {
		return ""
	}
	return m.form.f.View()
}

// closeForm drops the open form without an answer (its pane closed).
func (m *Model) closeForm() { m.form = nil }

// formUpdate gives msg to the open form and, when that ends it, calls
// its owner back.
func (m *Model) formUpdate(msg tea.Msg) tea.Cmd {
	hf := m.form
	if hf == nil {
		return nil
	}
	var cmd tea.Cmd
	var ended forms.Ended
	hf.f, cmd, ended = forms.Update(hf.f, msg)
	if ended != forms.Open {
		if m.form == hf {
			m.form = nil
		}
		return tea.Batch(cmd, hf.done(m, ended == forms.Submitted))
	}
	return cmd
}

// overlayForms are the forms each overlay owns.
var overlayForms = map[overlay]formOwner{overlayModels: formModels}

// leaveForms ends, as esc would, the open form of overlay o, which is
// going (replaced or closed without a key of its own).
func (m *Model) leaveForms(o overlay) tea.Cmd {
	if o == overlayChats && m.list != nil {
		return m.list.Leave()
	}
	owner, ok := overlayForms[o]
	if !ok || m.form == nil || m.form.owner != owner {
		return nil
	}
	hf := m.form
	m.form = nil
	return hf.done(m, false)
}
