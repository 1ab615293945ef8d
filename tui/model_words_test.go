package tui

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// /model's words say how long a switch holds, as bulkhead's Models does
// it (main's remembering client): here at once, and in the bulkheads
// started later on the data directory, until the config's models change
// or --model names another — never "for this session", which a switch
// outlives. The dialog's footer and the notice of a switch both say so.
func TestAModelSwitchSaysHowLongItHolds(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	opts := r.options()
	opts.Models = newFakeModels()
	d := newDriver(t, opts, 120, 40)

	d.typeText("/model")
	d.key(keyEnter)
	d.idle()
	holds := "here and in the bulkheads started later on this data directory, until the config's hub.model or spokes.model changes or --model names another"
	mustShow(t, unboxed(d.view()), holds, "apps with a model of their own keep it")
	mustNotShow(t, unboxed(d.view()), "for this session")
	d.key(keyEsc)
	d.idle()

	d.typeText("/model qwen3:1.7b")
	d.key(keyEnter)
	d.idle()
	n := d.model().notice
	if !strings.Contains(n, "now use qwen3:1.7b, here and in the bulkheads started later on this data directory (ask and doctor too)") ||
		!strings.Contains(n, "until the config's hub.model or spokes.model changes or --model names another") || strings.Contains(n, "this session") {
		t.Fatalf("the notice of a switch: %q", n)
	}
}

// unboxed is a view with a dialog's side borders blanked, so that text
// the box wrapped reads as one (flat, in mustShow).
func unboxed(v string) string { return strings.ReplaceAll(v, "│", " ") }
