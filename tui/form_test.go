package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/tui/forms"
)

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
