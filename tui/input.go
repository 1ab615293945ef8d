package tui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"
)

// input is the multi-line prompt. enter is the root model's (send); the
// textarea inserts a newline on shift+enter, alt+enter and ctrl+j. It uses
// the terminal's real cursor, so it starts no blink timers.
type input struct {
	ta textarea.Model
}

func newInput(th theme, keys keyMap) input {
	ta := textarea.New()
	ta.ShowLineNumbers = false
	ta.Placeholder = "Ask anything…"
	ta.CharLimit = 0
	ta.MaxHeight = 0
	ta.SetPromptFunc(2, func(p textarea.PromptInfo) string {
		if p.LineNumber == 0 {
			return "› "
		}
		return "  "
	})
	ta.KeyMap.InsertNewline = keys.Newline
	// ctrl+n, ctrl+p and ctrl+t belong to the root model.
	ta.KeyMap.LineNext = key.NewBinding(key.WithKeys("down"))
	ta.KeyMap.LinePrevious = key.NewBinding(key.WithKeys("up"))
	ta.KeyMap.TransposeCharacterBackward = key.NewBinding(key.WithDisabled())
	// ctrl+a and ctrl+g belong to the root model too.
	ta.KeyMap.LineStart = key.NewBinding(key.WithKeys("home"))
	ta.KeyMap.SelectAll = key.NewBinding(key.WithDisabled())
	ta.SetVirtualCursor(false)
	ta.SetStyles(th.textareaStyles())
	ta.Focus()
	return input{ta: ta}
}

func (in *input) setTheme(th theme) { in.ta.SetStyles(th.textareaStyles()) }

func (in *input) setSize(w, h int) {
	in.ta.SetWidth(max(w, 4))
	in.ta.SetHeight(max(h, 1))
}

func (in *input) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok && k.String() == "tab" {
		// The textarea ignores tab; in a message it indents (the
		// textarea turns a tab into spaces, as it does in a paste).
		in.ta.InsertString("\t")
		return nil
	}
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	return cmd
}

func (in input) value() string { return in.ta.Value() }

func (in *input) set(s string) { in.ta.SetValue(s) }

func (in *input) reset() { in.ta.Reset() }

func (in input) view() string { return in.ta.View() }

// cursor is where the terminal cursor goes, relative to the input's top
// left corner; nil when it should be hidden.
func (in input) cursor() *tea.Cursor { return in.ta.Cursor() }
