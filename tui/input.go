package tui

import (
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textarea"
	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// input is the multi-line prompt. enter is the root model's (send); the
// textarea inserts a newline on shift+enter, alt+enter and ctrl+j. It uses
// the terminal's real cursor, so it starts no blink timers.
type input struct {
	ta textarea.Model
	// Recall of earlier prompts: ↑ on the first line shows the one
	// before, ↓ on the last line the one after, and past the newest the
	// draft typed before recall began. recall is -1 while not recalling.
	recall int
	draft  string
}

func newInput(th style.Theme, keys keyMap) input {
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
	ta.SetStyles(th.TextareaStyles())
	ta.Focus()
	return input{ta: ta, recall: -1}
}

// recallKey handles ↑ and ↓ over prompts, the chat's earlier prompts
// oldest first; handled is false when the key moves the cursor instead
// (↑ below the first line, ↓ above the last).
func (in *input) recallKey(k string, prompts []string) (handled bool) {
	if len(prompts) == 0 {
		return false
	}
	switch k {
	case "up":
		if in.ta.Line() > 0 {
			return false
		}
		if in.recall < 0 {
			in.draft, in.recall = in.ta.Value(), len(prompts)
		}
		if in.recall == 0 {
			return true // the oldest: stay
		}
		in.recall--
		in.ta.SetValue(prompts[in.recall])
		in.ta.MoveToEnd()
		return true
	case "down":
		if in.recall < 0 || in.ta.Line() < in.ta.LineCount()-1 {
			return false
		}
		in.recall++
		if in.recall >= len(prompts) {
			in.ta.SetValue(in.draft)
			in.recall, in.draft = -1, ""
			return true
		}
		in.ta.SetValue(prompts[in.recall])
		return true
	}
	return false
}

func (in *input) setTheme(th style.Theme) { in.ta.SetStyles(th.TextareaStyles()) }

func (in *input) setSize(w, h int) {
	in.ta.SetWidth(max(w, 4))
	in.ta.SetHeight(max(h, 1))
}

func (in *input) update(msg tea.Msg) tea.Cmd {
	if k, ok := msg.(tea.KeyPressMsg); ok {
		switch k.String() {
		case "tab":
			// The textarea ignores tab; in a message it indents (the
			// textarea turns a tab into spaces, as it does in a paste).
			in.ta.InsertString("\t")
			return nil
		case "ctrl+u":
			// The whole draft, every line of it — not the line alone.
			in.reset()
			return nil
		case "up", "down":
		default:
			in.recall = -1 // typing over a recalled prompt makes it a draft
		}
	}
	var cmd tea.Cmd
	in.ta, cmd = in.ta.Update(msg)
	return cmd
}

func (in input) value() string { return in.ta.Value() }

func (in *input) set(s string) { in.ta.SetValue(s) }

func (in *input) reset() {
	in.ta.Reset()
	in.recall, in.draft = -1, ""
}

func (in input) view() string { return in.ta.View() }

// cursor is where the terminal cursor goes, relative to the input's top
// left corner; nil when it should be hidden.
func (in input) cursor() *tea.Cursor { return in.ta.Cursor() }
