package tui

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// After /model switches the spokes' model, the apps screen's MODEL
// column names the new one for the apps that follow the spokes' model,
// not the model the session started with.
func TestAppsScreenShowsTheModelSwitchedTo(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	reg, err := apps.NewRegistry(apps.Default(), calc.New())
	if err != nil {
		t.Fatal(err)
	}
	opts := r.options()
	opts.Registry, opts.Models = reg, newFakeModels()
	d := newDriver(t, opts, 120, 30)
	d.typeText("/model qwen3:1.7b")
	d.key(keyEnter)
	d.idle()
	d.key(ctrl('a'))
	d.idle()
	l := lineWith(d.view(), " calc ")
	if !strings.Contains(l, "qwen3:1.7b") || strings.Contains(l, spokeModel) {
		t.Fatalf("after /model qwen3:1.7b, calc's row: %q\n%s", l, d.view())
	}
}
