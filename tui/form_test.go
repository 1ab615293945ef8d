package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// gatedModels is /model's list held back until gate closes: it arrives
// after a permission dialog has opened.
type gatedModels struct {
	*fakeModels
	gate chan struct{}
}

func (g gatedModels) Installed(ctx context.Context) ([]llm.ModelInfo, error) {
	<-g.gate
	return g.fakeModels.Installed(ctx)
}

// A /model list that arrives while a permission dialog's note is being
// typed opens no picker: the note keeps every key (its enter, its
// letters) and denies with what was typed; the list is back after it,
// answering ↑/↓ and enter itself.
func TestALateModelListNeverTakesADialogsKeys(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := r.options()
	p := NewPrompter()
	opts.Prompter = p
	gate := make(chan struct{})
	opts.Models = gatedModels{newFakeModels(), gate}
	d := newDriver(t, opts, 100, 30, atSeen)

	d.typeText("/model")
	d.key(keyEnter)
	got := prompt(t, d, p, draftRequest)
	d.key(char('n'))
	if !d.model().perm.Noting() {
		t.Fatal("n must open the note")
	}
	d.typeText("no ")
	close(gate)
	d.untilView("the late list", func(string) bool { m := d.model(); return m.models != nil && !m.models.Loading() })
	if m := d.model(); m.models == nil || m.models.Picking() || !m.perm.Noting() {
		t.Fatalf("the late list must open no picker over the note:\n%s", d.view())
	}
	d.typeText("thanks")
	d.key(keyEnter)
	d.idle()
	if dec := recvDecision(t, got); dec.Allowed || dec.Note != "no thanks" {
		t.Fatalf("the note must deny with what was typed: %+v", dec)
	}
	if v := d.view(); d.model().overlay != overlayModels || !strings.Contains(v, "● spoke-model") || strings.Contains(v, "▸") {
		t.Fatalf("the models list must be back, answering ↑/↓ itself:\n%s", v)
	}
	d.key(keyDown)
	d.key(keyEnter)
	d.idle()
	if fm := opts.Models.(gatedModels); len(fm.sets) != 1 {
		t.Fatalf("enter in the list must switch once: %v", fm.sets)
	}
}

// The same for a pull offered late: /model NAME of a model not installed
// answers while a note is typed; the pull dialog waits under the
// permission dialog with no form of its own open, the note keeps every
// key, and after it y or n still answer the pull.
func TestALatePullOfferNeverTakesADialogsKeys(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := r.options()
	p := NewPrompter()
	opts.Prompter = p
	gate := make(chan struct{})
	opts.Models = gatedModels{newFakeModels(), gate}
	d := newDriver(t, opts, 100, 30, atSeen)

	d.typeText("/model nope")
	d.key(keyEnter)
	got := prompt(t, d, p, draftRequest)
	d.key(char('n'))
	d.typeText("not ")
	close(gate)
	d.untilView("the late pull offer", func(string) bool { return d.model().pull != nil })
	if m := d.model(); m.under != overlayPull || !m.perm.Noting() {
		t.Fatalf("the pull offer must wait under the dialog, the note open:\n%s", d.view())
	}
	d.typeText("yet")
	d.key(keyEnter)
	d.idle()
	if dec := recvDecision(t, got); dec.Allowed || dec.Note != "not yet" {
		t.Fatalf("the note must deny with what was typed: %+v", dec)
	}
	if v := d.view(); d.model().overlay != overlayPull || !strings.Contains(v, "pull it now? (y/n)") {
		t.Fatalf("the pull offer must be back, answering y/n itself:\n%s", v)
	}
	d.key(char('n'))
	d.idle()
	if d.model().pull != nil {
		t.Fatalf("n must decline the pull:\n%s", d.view())
	}
}
