package tui

import (
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"

	"github.com/bulkhead-dev/bulkhead/tui/forms"
)

// Forms and pickers are huh forms (charm.land/huh/v2) hosted inside the
// TUI's own panes: the chats list's delete confirmation, the permission
// manager's and the memory screen's confirmations, the permission
// dialog's deny-with-note field and its choice among apps. One is open
// at a time (they are all modal); while it is, keys go to it (ctrl+c
// still quits) and so does every message the TUI does not know (huh's
// own, for moving between fields), and the pane that opened it draws
// its View where it asks. The permission dialog's own discipline — the
// grace period before any key answers it, choose-then-enter for a
// request that is not routine — stays in permit.go, around the form.

// formOwner names the pane a form belongs to.
type formOwner string

const (
	formChats  formOwner = "chats"  // delete a chat?
	formNote   formOwner = "note"   // deny with a note
	formChoice formOwner = "choice" // which app answers
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
	var prev tea.Cmd
	if old := m.form; old != nil && old.owner == formNote && owner != formNote && owner != formChoice {
		// A note being typed is never pushed out by a form of another
		// pane: its keys would then answer the dialog.
		return nil
	}
	prev = m.leaveScreens() // one form at a time, a screen's included
	if old := m.form; old != nil {
		// One form at a time: a newer one (a permission dialog's, over a
		// screen's confirmation) leaves the older as esc would.
		m.form = nil
		prev = tea.Batch(prev, old.done(m, false))
	}
	m.form = &hostedForm{owner: owner, f: f, done: done}
	return tea.Batch(prev, f.Init())
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
var overlayForms = map[overlay]formOwner{overlayChats: formChats, overlayModels: formModels}

// leaveForms ends, as esc would, the open form of overlay o, which is
// going (replaced or closed without a key of its own).
func (m *Model) leaveForms(o overlay) tea.Cmd {
	owner, ok := overlayForms[o]
	if !ok || m.form == nil || m.form.owner != owner {
		return nil
	}
	hf := m.form
	m.form = nil
	return hf.done(m, false)
}
