package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// At 80×24 the keys dialog is taller than the screen: it says there is
// more, and pgdn and ↓ scroll it until every line of it has been on
// screen; ↑ and pgup scroll back; esc closes it, and opened again it
// starts at its top.
func TestHelpScrollsAt80x24(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	d := newDriver(t, r.options(), 80, 24)
	d.key(char('?'))
	v := d.view()
	if !strings.Contains(v, "Keys · esc closes") || !strings.Contains(v, "more · ↑/↓ pgup/pgdn scroll") {
		t.Fatalf("the keys dialog must say there is more below:\n%s", v)
	}
	seen := strings.Builder{}
	seen.WriteString(v)
	for range 3 {
		d.key(keyPgDown)
		seen.WriteString(d.view())
	}
	for range 2 {
		d.key(keyDown)
		seen.WriteString(d.view())
	}
	end := d.view()
	if strings.Contains(end, "more ·") || !strings.Contains(end, "above") {
		t.Fatalf("pgdn must reach the end:\n%s", end)
	}
	// Every line of the dialog, as it is drawn whole where there is room.
	m := d.model()
	whole := ansi.Strip(m.keysAt.View(m.th, helpContent(m.keys, false), 80, 200))
	for _, l := range strings.Split(whole, "\n")[2:] {
		l = strings.TrimSpace(strings.Trim(l, "│╰─╯"))
		if l != "" && !strings.Contains(seen.String(), l) {
			t.Errorf("never shown at 80×24: %q", l)
		}
	}
	d.key(keyUp)
	if v := d.view(); !strings.Contains(v, "above") || !strings.Contains(v, "↓ 1 more") {
		t.Errorf("↑ scrolls back a line:\n%s", v)
	}
	d.key(keyPgUp) // the dialog is less than two pages long: its top
	if v := d.view(); strings.Contains(v, "above") || !strings.Contains(v, "enter      send") {
		t.Errorf("pgup scrolls back a page:\n%s", v)
	}
	d.key(keyEsc)
	if strings.Contains(d.view(), "Keys · esc closes") {
		t.Fatal("esc must close the keys dialog")
	}
	d.key(char('?'))
	if v := d.view(); strings.Contains(v, "above") {
		t.Errorf("opened again, it starts at its top:\n%s", v)
	}
	d.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if v := d.view(); !strings.Contains(v, "↑ 1 above") {
		t.Errorf("the wheel scrolls it a line:\n%s", v)
	}
}
