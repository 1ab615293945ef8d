package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The gate (overlay.go): a dialog that opens without the person's own key
// takes no answer while they type. The model's timers run on a virtual
// clock here, so the test says when the arming delay has passed.

const unarmedNote = "typing goes to your message"

// gateDriver is a driver whose timers run on a virtual clock, with the
// model's clock frozen.
func gateDriver(t *testing.T, opts Options) (*driver, *virtualClock) {
	t.Helper()
	clock := &virtualClock{}
	d := newDriver(t, opts, 100, 30, atSeen, func(m *Model) { m.after = clock.after })
	return d, clock
}

// typeSlowly types s a key every gap on the clock.
func typeSlowly(d *driver, clock *virtualClock, s string, gap time.Duration) {
	for _, r := range s {
		clock.advance(d, gap)
		d.key(char(r))
	}
}

// The pull dialog a turn opens (the model is missing) appears while the
// person types: enter does not take the preselected Pull, the letters —
// y among them — land in the input, and keys in a burst keep it unarmed
// past the delay; its buttons say they are not active yet. Once the keys
// stop for the delay, y pulls.
func TestAPullDialogTakesNoKeyTypedBeforeItIsArmed(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel) // the spoke's model is missing
	opts := r.options()
	sp := slowPull{started: make(chan struct{})}
	opts.Ollama = sp
	d, clock := gateDriver(t, opts)
	d.ask("why is")
	d.untilView("the pull dialog", func(string) bool { return d.model().pull != nil })
	if m := d.model(); m.gate.armed || m.pull.Armed() || !strings.Contains(d.view(), unarmedNote) {
		t.Fatalf("a dialog the person did not open must start unarmed, and say so:\n%s", d.view())
	}

	d.key(keyEnter) // the empty input sends nothing; Pull is not taken
	typeSlowly(d, clock, " the sky blue? yes", widget.ArmDelay/3)
	d.idle()
	m := d.model()
	if m.pulling != nil || m.pull == nil || m.pull.Armed() {
		t.Fatalf("keys typed in a burst answered the dialog:\n%s", d.view())
	}
	if got := m.input.value(); got != " the sky blue? yes" {
		t.Fatalf("typed text was lost: the input holds %q", got)
	}
	if !strings.Contains(d.view(), unarmedNote) {
		t.Fatalf("unarmed, the dialog must say where the keys go:\n%s", d.view())
	}

	// The keys stop: once the delay has passed, y answers.
	clock.advance(d, widget.ArmDelay)
	if m := d.model(); !m.gate.armed || !m.pull.Armed() || strings.Contains(d.view(), unarmedNote) {
		t.Fatalf("after the delay the dialog must be armed:\n%s", d.view())
	}
	d.key(char('y'))
	d.until("512.0 MiB / 1.0 GiB")
	if got := d.model().input.value(); got != " the sky blue? yes" {
		t.Fatalf("the answering key reached the input: %q", got)
	}
	d.key(keyEsc)
	d.idle()
}

// A permission request that opens while the person types takes none of
// the keys (o, enter and space among them: a routine request answers o
// at once); once the keys stop for the delay, o answers. The pull dialog
// it covered comes back unarmed: the y typed right after the answer is
// text, not a pull.
func TestAPermissionDialogTakesNoKeyTypedBeforeItIsArmed(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel)
	opts := r.options()
	sp := slowPull{started: make(chan struct{})}
	opts.Ollama = sp
	p := NewPrompter()
	opts.Prompter = p
	d, clock := gateDriver(t, opts)
	d.ask("hello?") // the spoke's model is missing: the pull dialog
	d.untilView("the pull dialog", func(string) bool { return d.model().pull != nil })
	clock.advance(d, widget.ArmDelay)
	if !d.model().pull.Armed() {
		t.Fatal("the pull dialog must be armed after the delay")
	}

	req := dialogKinds[0].req // routine: o answers at once once armed
	if !req.Routine() {
		t.Fatal("the first dialog kind must be routine")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan permissions.Decision, 1)
	go func() {
		dec, _ := p.Prompt(ctx, req)
		got <- dec
	}()
	d.untilView("the permission dialog", func(string) bool { return d.model().perm != nil })
	d.key(keyEnter) // the empty input sends nothing; no answer
	typeSlowly(d, clock, "so", widget.ArmDelay/4)
	d.key(keySpace)
	typeSlowly(d, clock, "ok", widget.ArmDelay/4)
	d.idle()
	m := d.model()
	if m.perm == nil || p.Pending() != 1 || m.perm.Armed() {
		t.Fatalf("typing answered the permission dialog:\n%s", d.view())
	}
	if got := m.input.value(); got != "so ok" {
		t.Fatalf("typed text was lost: the input holds %q", got)
	}
	if v := d.view(); !strings.Contains(v, unarmedNote) {
		t.Fatalf("unarmed, the dialog must say where the keys go:\n%s", v)
	}

	clock.advance(d, widget.ArmDelay)
	if !d.model().perm.Armed() || !strings.Contains(d.view(), "answering now") {
		t.Fatalf("after the delay the dialog must be armed:\n%s", d.view())
	}
	d.key(char('o'))
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce {
		t.Fatalf("o after the delay must allow once: %+v", dec)
	}

	// The pull dialog is back on top, and waits again.
	d.key(char('y'))
	d.idle()
	m = d.model()
	if m.overlay != overlayPull || m.pulling != nil || m.pull.Armed() || m.input.value() != "so oky" {
		t.Fatalf("a y right after the answer pulled (input %q):\n%s", m.input.value(), d.view())
	}
	clock.advance(d, widget.ArmDelay)
	d.key(char('n'))
	d.idle()
	if d.model().pull != nil {
		t.Fatalf("n after the delay must decline the pull:\n%s", d.view())
	}
}

// A dialog the person opened is armed at once: /model NAME of a model
// that is not installed offers the pull, and n answers it with no wait;
// so does the keys dialog (?), which esc closes at once.
func TestADialogThePersonOpenedIsArmedAtOnce(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := r.options()
	fm := newFakeModels()
	opts.Models = fm
	opts.Ollama = &fakeOllama{up: true, models: map[string][]string{hubModel: {llm.CapCompletion, llm.CapTools}, spokeModel: {llm.CapCompletion, llm.CapTools}}}
	d, _ := gateDriver(t, opts)
	d.typeText("/model nope")
	d.key(keyEnter)
	d.idle()
	m := d.model()
	if m.pull == nil || !m.gate.armed || !m.pull.Armed() || strings.Contains(d.view(), unarmedNote) {
		t.Fatalf("the pull /model offered must be armed at once:\n%s", d.view())
	}
	d.key(char('n'))
	d.idle()
	if d.model().pull != nil {
		t.Fatalf("n must decline at once:\n%s", d.view())
	}
	if got := fm.switched(); len(got) != 0 {
		t.Fatalf("switched %v", got)
	}

	d.send(ctrl('u'))
	d.key(char('?'))
	if d.model().overlay != overlayHelp || !d.model().gate.armed {
		t.Fatalf("? must open the keys dialog, armed:\n%s", d.view())
	}
	d.key(keyEsc)
	if d.model().overlay != overlayNone {
		t.Fatalf("esc must close the keys dialog at once:\n%s", d.view())
	}
}
