package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// A confirmation always shows its buttons, however long its question, at
// the widths the panes give it.
func TestConfirmationKeepsItsButtons(t *testing.T) {
	th := style.New(true)
	for _, w := range []int{30, 50, 66, 78, 118} {
		yes := false
		m := Model{th: th, width: w + 4}
		m.openForm(formChats, w, func(*Model, bool) tea.Cmd { return nil },
			forms.Confirm("delete “"+strings.Repeat("a very long chat title ", 6)+"”?", "Delete", "Keep", w, &yes))
		v := ansi.Strip(m.formView(formChats))
		if !strings.Contains(v, "Delete") || !strings.Contains(v, "Keep") || ansi.StringWidth(strings.TrimRight(v, " ")) > w {
			t.Errorf("width %d: %q", w, v)
		}
	}
}

// A note being typed in a dialog is never pushed out by another pane's
// form (a /model list that arrives late): its keys would then answer the
// dialog.
func TestANoteIsNeverPushedOut(t *testing.T) {
	t.Parallel()
	d, p := caveatDriver(t, 100, 30)
	prompt(t, d, p, draftRequest)
	d.key(char('n'))
	m := d.model()
	if !m.perm.Noting() {
		t.Fatal("n must open the note")
	}
	yes := false
	if cmd := m.openForm(formModels, 40, func(*Model, bool) tea.Cmd { return nil }, forms.Confirm("q?", "Yes", "No", 40, &yes)); cmd != nil || m.form != nil || !m.perm.Noting() {
		t.Fatalf("another pane's form opened over the note: %v", m.form.owner)
	}
	m.models = &modelsDialog{can: []string{"a", "b"}}
	if cmd := m.modelsPicker(); cmd != nil || m.form != nil {
		t.Fatal("a late /model list opened its picker over the dialog")
	}
}
