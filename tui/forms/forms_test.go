package forms

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// A confirmation always shows its buttons, however long its question, at
// the widths the panes give it.
func TestConfirmationKeepsItsButtons(t *testing.T) {
	th := style.New(true)
	for _, w := range []int{30, 50, 66, 78, 118} {
		yes := false
		f := New(th, w, Confirm("delete “"+strings.Repeat("a very long chat title ", 6)+"”?", "Delete", "Keep", w, &yes))
		f.Init()
		v := ansi.Strip(f.View())
		if !strings.Contains(v, "Delete") || !strings.Contains(v, "Keep") || ansi.StringWidth(strings.TrimRight(v, " ")) > w {
			t.Errorf("width %d: %q", w, v)
		}
	}
}
