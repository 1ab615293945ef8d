package help

import (
	"fmt"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// No test reads the user's config, data or Ollama (testenv).
func TestMain(m *testing.M) { testenv.Main(m, false) }

// content is 50 bindings and a note too long for one line.
func content() Content {
	var c Content
	for i := range 50 {
		c.Bindings = append(c.Bindings, key.NewBinding(key.WithKeys(fmt.Sprint(i)), key.WithHelp(fmt.Sprintf("k%02d", i), fmt.Sprintf("does thing %02d", i))))
	}
	c.Lines = []Line{{Key: "/x", Does: "a command"}}
	c.Notes = []string{"a note long enough to wrap: " + strings.Repeat("word ", 20) + "END"}
	return c
}

// Taller than the screen, the dialog keeps its title, says what is
// above and below, and scrolls a line (↑/↓, k/j), a page (pgup/pgdn) or
// to either end (home/end), so that every line can be read; it is
// never taller than its room.
func TestTheDialogScrolls(t *testing.T) {
	t.Parallel()
	th := style.New(true)
	c := content()
	const w, h = 80, 23
	var d Dialog
	view := func() string {
		v := ansi.Strip(d.View(th, c, w, h))
		if n := strings.Count(v, "\n") + 1; n > h {
			t.Fatalf("%d lines in a room of %d:\n%s", n, h, v)
		}
		if !strings.Contains(v, "Keys · esc closes") {
			t.Fatalf("the title scrolled away:\n%s", v)
		}
		return v
	}
	v := view()
	if !strings.Contains(v, "k00") || !strings.Contains(v, "↓ ") || !strings.Contains(v, "more · ↑/↓ pgup/pgdn scroll") || strings.Contains(v, "above") {
		t.Fatalf("the top must say what is below and how to scroll:\n%s", v)
	}
	seen := map[string]bool{}
	for range 60 {
		for _, l := range strings.Split(v, "\n") {
			seen[strings.TrimSpace(strings.Trim(l, "│ "))] = true
		}
		if !d.Scroll("down", c, w, h) {
			t.Fatal("↓ is a scroll key")
		}
		v = view()
	}
	for i := range 50 {
		if !seen[fmt.Sprintf("k%02d  does thing %02d", i, i)] {
			t.Errorf("binding %d never showed", i)
		}
	}
	if !seen["/x  a command"] || !seen["END"] && !strings.Contains(v, "END") {
		t.Errorf("the lines and the note's end must show:\n%s", v)
	}
	if !strings.Contains(v, "↑ ") || !strings.Contains(v, "above") || strings.Contains(v, "more ·") || !strings.Contains(v, "END") {
		t.Errorf("at the end it says what is above, nothing below:\n%s", v)
	}
	// Wrapped, a note's later lines are indented under it.
	if !strings.Contains(v, "│   word") && !strings.Contains(v, "│   END") {
		t.Errorf("a wrapped note's lines are not indented:\n%s", v)
	}
	d.Scroll("pgup", c, w, h)
	if v := view(); !strings.Contains(v, "above") || !strings.Contains(v, "more") {
		t.Errorf("pgup goes back a page, not to the top:\n%s", v)
	}
	d.Scroll("home", c, w, h)
	if v := view(); !strings.Contains(v, "k00") || strings.Contains(v, "above") {
		t.Errorf("home shows the top:\n%s", v)
	}
	d.Scroll("end", c, w, h)
	if v := view(); !strings.Contains(v, "END") || strings.Contains(v, "more ·") {
		t.Errorf("end shows the end:\n%s", v)
	}
	d.Scroll("pgdown", c, w, h) // past the end: stays
	d.Scroll("up", c, w, h)     // one back: the last line goes
	if v := view(); !strings.Contains(v, "↓ 1 more") {
		t.Errorf("scrolling past the end must not be counted:\n%s", v)
	}
	if d.Scroll("x", c, w, h) {
		t.Error("x is no scroll key")
	}
}

// Where it fits, it is drawn whole, with no scroll line, and keys do not
// move it.
func TestTheDialogFitsWhole(t *testing.T) {
	t.Parallel()
	th := style.New(true)
	c := content()
	var d Dialog
	d.Scroll("down", c, 120, 70)
	v := ansi.Strip(d.View(th, c, 120, 70))
	if !strings.Contains(v, "k00") || !strings.Contains(v, "END") || strings.Contains(v, "scroll") {
		t.Errorf("the whole dialog, without a scroll line:\n%s", v)
	}
}
