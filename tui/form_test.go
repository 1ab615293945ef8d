package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
)

// A confirmation always shows its buttons, however long its question, at
// the widths the panes give it.
func TestConfirmationKeepsItsButtons(t *testing.T) {
	th := newTheme(true)
	for _, w := range []int{30, 50, 66, 78, 118} {
		yes := false
		m := Model{th: th, width: w + 4}
		m.openForm(formChats, w, func(*Model, bool) tea.Cmd { return nil },
			confirmField("delete “"+strings.Repeat("a very long chat title ", 6)+"”?", "Delete", "Keep", w, &yes))
		v := ansi.Strip(m.formView(formChats))
		if !strings.Contains(v, "Delete") || !strings.Contains(v, "Keep") || ansi.StringWidth(strings.TrimRight(v, " ")) > w {
			t.Errorf("width %d: %q", w, v)
		}
	}
}
