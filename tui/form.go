package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
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
	formGrants formOwner = "grants" // revoke?
	formMemory formOwner = "memory" // forget an owner?
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
	f := huh.NewForm(huh.NewGroup(fields...)).
		WithTheme(huhTheme(m.th)).
		WithKeyMap(formKeys()).
		WithShowHelp(false).
		WithWidth(max(width, 10))
	var prev tea.Cmd
	if old := m.form; old != nil && old.owner == formNote && owner != formNote && owner != formChoice {
		// A note being typed is never pushed out by a form of another
		// pane: its keys would then answer the dialog.
		return nil
	}
	if old := m.form; old != nil {
		// One form at a time: a newer one (a permission dialog's, over a
		// screen's confirmation) leaves the older as esc would.
		m.form = nil
		prev = old.done(m, false)
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
	fm, cmd := hf.f.Update(msg)
	if f, ok := fm.(*huh.Form); ok {
		hf.f = f
	}
	switch hf.f.State {
	case huh.StateCompleted, huh.StateAborted:
		if m.form == hf {
			m.form = nil
		}
		return tea.Batch(cmd, hf.done(m, hf.f.State == huh.StateCompleted))
	}
	return cmd
}

// formKeys is huh's keymap with esc leaving the form (ctrl+c is the
// TUI's own: it quits), enter submitting, and a choice among apps moved
// with ←/→ and tab as well as ↑/↓.
func formKeys() *huh.KeyMap {
	k := huh.NewDefaultKeyMap()
	k.Quit = key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "back"))
	k.Select.Up = key.NewBinding(key.WithKeys("up", "left", "shift+tab", "k"), key.WithHelp("↑/←", "previous"))
	k.Select.Down = key.NewBinding(key.WithKeys("down", "right", "tab", "j"), key.WithHelp("↓/→", "next"))
	k.Select.Left = key.NewBinding(key.WithDisabled())
	k.Select.Right = key.NewBinding(key.WithDisabled())
	k.Select.Next = key.NewBinding(key.WithDisabled())
	k.Select.Prev = key.NewBinding(key.WithDisabled())
	k.Select.Filter = key.NewBinding(key.WithDisabled())
	k.Confirm.Next = key.NewBinding(key.WithDisabled())
	k.Confirm.Prev = key.NewBinding(key.WithDisabled())
	k.Input.Prev = key.NewBinding(key.WithDisabled())
	k.Input.Next = key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "done"))
	return k
}

// huhTheme draws huh's fields in the TUI's own colours.
func huhTheme(th style.Theme) huh.Theme {
	return huh.ThemeFunc(func(bool) *huh.Styles {
		s := huh.ThemeBase(th.Dark)
		accent := th.BoxTitle.GetForeground()
		s.Focused.Base = lipgloss.NewStyle()
		s.Focused.Card = s.Focused.Base
		s.Focused.Title = th.BoxTitle
		s.Focused.Description = th.Dim
		s.Focused.ErrorMessage = th.Err
		s.Focused.ErrorIndicator = th.Err.SetString(" *")
		s.Focused.SelectSelector = lipgloss.NewStyle().Foreground(accent).SetString("▸ ")
		s.Focused.Option = lipgloss.NewStyle()
		s.Focused.SelectedOption = th.Selected
		s.Focused.FocusedButton = th.Selected.Padding(0, 2).MarginRight(1)
		s.Focused.BlurredButton = th.Dim.Padding(0, 2).MarginRight(1)
		s.Focused.TextInput.Prompt = lipgloss.NewStyle().Foreground(accent)
		s.Focused.TextInput.Placeholder = th.Dim
		s.Blurred = s.Focused
		s.Blurred.SelectSelector = lipgloss.NewStyle().SetString("  ")
		s.Blurred.NextIndicator = lipgloss.NewStyle()
		s.Blurred.PrevIndicator = lipgloss.NewStyle()
		s.Blurred.SelectedOption = lipgloss.NewStyle()
		return s
	})
}

// confirmField is a one-line huh confirmation of q in about width cells:
// the question is cut so that the buttons always show.
func confirmField(q, yes, no string, width int, value *bool) *huh.Confirm {
	room := max(width-ansi.StringWidth(yes)-ansi.StringWidth(no)-14, 10)
	q = ansi.Truncate(q, room, "…")
	// Left-aligned: huh centres the buttons in the title's width, which
	// pushes them off the line.
	return huh.NewConfirm().Inline(true).Title(q).
		Affirmative(yes).Negative(no).Value(value).WithButtonAlignment(lipgloss.Left)
}

// overlayForms are the forms each overlay owns.
var overlayForms = map[overlay]formOwner{overlayChats: formChats, overlayManager: formGrants, overlayMemory: formMemory, overlayModels: formModels}

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
