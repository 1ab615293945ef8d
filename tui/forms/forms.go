// Package forms is how the TUI builds its huh forms (charm.land/huh/v2):
// in its own colours, with its own keys (esc leaves a form, ctrl+c stays
// the TUI's), and the one-line confirmation every screen asks before it
// removes something. A form is hosted by the part that opened it — the
// root model for the dialogs' forms, a screen for its confirmation — and
// driven by Update, which says when the form has ended and how.
package forms

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// New is a one-group form of fields in the TUI's theme and keys, width
// cells wide (at least 10), without huh's help line.
func New(th style.Theme, width int, fields ...huh.Field) *huh.Form {
	return huh.NewForm(huh.NewGroup(fields...)).
		WithTheme(Theme(th)).
		WithKeyMap(Keys()).
		WithShowHelp(false).
		WithWidth(max(width, 10))
}

// Ended is how a form ended, when Update ends it.
type Ended int

const (
	Open      Ended = iota // still open
	Submitted              // the user submitted it
	Left                   // esc left it
)

// Update gives msg to f and says whether that ended it; the form to keep
// is the one returned (huh hands back a new value).
func Update(f *huh.Form, msg tea.Msg) (*huh.Form, tea.Cmd, Ended) {
	fm, cmd := f.Update(msg)
	if nf, ok := fm.(*huh.Form); ok {
		f = nf
	}
	switch f.State {
	case huh.StateCompleted:
		return f, cmd, Submitted
	case huh.StateAborted:
		return f, cmd, Left
	}
	return f, cmd, Open
}

// Keys is huh's keymap with esc leaving the form (ctrl+c is the TUI's
// own: it quits), enter submitting, and a choice among options moved
// with ←/→ and tab as well as ↑/↓.
func Keys() *huh.KeyMap {
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

// Theme draws huh's fields in the TUI's own colours.
func Theme(th style.Theme) huh.Theme {
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

// Confirm is a one-line huh confirmation of q in about width cells: the
// question is cut so that the buttons always show.
func Confirm(q, yes, no string, width int, value *bool) *huh.Confirm {
	room := max(width-ansi.StringWidth(yes)-ansi.StringWidth(no)-14, 10)
	q = ansi.Truncate(q, room, "…")
	// Left-aligned: huh centres the buttons in the title's width, which
	// pushes them off the line.
	return huh.NewConfirm().Inline(true).Title(q).
		Affirmative(yes).Negative(no).Value(value).WithButtonAlignment(lipgloss.Left)
}

// Confirmation is a yes/no question a part asks in a form of its own
// (Confirm's one line): the part draws View where it asks, gives it the
// keys and huh's messages while Open, and acts when Update says it has
// ended. The zero value asks nothing.
type Confirmation struct {
	f   *huh.Form
	yes *bool
}

// Ask opens the question q, answered by the yes or the no word, width
// cells wide, with the no word preselected (what removes something is
// never what enter does at once); the Cmd starts it.
func (c *Confirmation) Ask(th style.Theme, q, yes, no string, width int) tea.Cmd {
	return c.ask(th, q, yes, no, width, false)
}

// Offer is Ask with the yes word preselected: for an offer whose yes is
// what the user came for (pull the missing model), never for one that
// removes something.
func (c *Confirmation) Offer(th style.Theme, q, yes, no string, width int) tea.Cmd {
	return c.ask(th, q, yes, no, width, true)
}

func (c *Confirmation) ask(th style.Theme, q, yes, no string, width int, preselect bool) tea.Cmd {
	v := preselect
	c.yes = &v
	c.f = New(th, width, Confirm(q, yes, no, width, &v))
	return c.f.Init()
}

// Open reports whether the question waits for its answer.
func (c *Confirmation) Open() bool { return c.f != nil }

// View is the question and its buttons ("" when none is open).
func (c *Confirmation) View() string {
	if c.f == nil {
		return ""
	}
	return c.f.View()
}

// Update gives msg to the question. When that ends it, done is true and
// yes says whether the answer was the yes word (esc is a no).
func (c *Confirmation) Update(msg tea.Msg) (cmd tea.Cmd, done, yes bool) {
	if c.f == nil {
		return nil, false, false
	}
	f, cmd, ended := Update(c.f, msg)
	c.f = f
	if ended == Open {
		return cmd, false, false
	}
	c.f = nil
	return cmd, true, ended == Submitted && *c.yes
}

// Close drops the question without an answer.
func (c *Confirmation) Close() { c.f = nil }
