package tui

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/ollama/ollama/api"
	"go.uber.org/goleak"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// chroma's regexp engine keeps a package clock goroutine for about a
// second after its last match; it is not ours.
func TestMain(m *testing.M) {
	testenv.Main(m, true, goleak.IgnoreAnyFunction("github.com/dlclark/regexp2.runClock"))
}

const (
	hubModel   = "hub-model"
	spokeModel = "spoke-model"
)

var chatPlan = ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "q", "depends_on": []string{}}}})

// rig is a real hub.Operator over a scripted Ollama, as in hub's tests.
type rig struct {
	srv    *ollamatest.Scripted
	store  *memory.Store
	op     *hub.Operator
	ollama *llm.Client
}

// newRig starts a scripted server that knows models (both by default) and
// an operator over it; answer scripts the spoke's replies.
func newRig(t *testing.T, answer func(*api.ChatRequest) ollamatest.Reply, models ...string) *rig {
	t.Helper()
	if len(models) == 0 {
		models = []string{hubModel, spokeModel}
	}
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, answer), models...)
	return newRigAt(t, srv, srv.Host())
}

func newRigAt(t *testing.T, srv *ollamatest.Scripted, host string) *rig {
	t.Helper()
	store, err := memory.Open(t.TempDir(), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	hubClient, err := llm.New(llm.Config{Host: host, Model: hubModel}, nil)
	if err != nil {
		t.Fatal(err)
	}
	op, err := hub.New(hub.Options{
		Store:    store,
		HubModel: hubClient,
		SpokeModel: func(string) (spokes.Model, error) {
			return llm.New(llm.Config{Host: host, Model: spokeModel}, nil)
		},
		History: 4, SpokeHistory: 4,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		op.Close()
		store.Close()
	})
	oc, _ := llm.New(llm.Config{Host: host, Model: spokeModel}, nil)
	return &rig{srv: srv, store: store, op: op, ollama: oc}
}

// replies answers the spoke's requests in order; the last one repeats.
func replies(rs ...ollamatest.Reply) func(*api.ChatRequest) ollamatest.Reply {
	i := 0
	return func(*api.ChatRequest) ollamatest.Reply {
		r := rs[min(i, len(rs)-1)]
		i++
		return r
	}
}

func (r *rig) options() Options {
	return Options{Backend: r.op, Ollama: r.ollama, SpokeModel: spokeModel, Theme: "dark", Version: "v0.0.0-test"}
}

// spokeRequests counts the chat requests that reached the spoke's model.
func (r *rig) spokeRequests() int {
	n := 0
	for _, q := range r.srv.Requests() {
		if q.Model == spokeModel {
			n++
		}
	}
	return n
}

// driver runs the real root model the way Bubble Tea does, minus the
// terminal: Update on the test goroutine, each Cmd on its own goroutine,
// their messages fed back one at a time (batches and sequences expanded).
// Timers are off, so every Cmd the model returns ends on its own.
type driver struct {
	t       *testing.T
	m       tea.Model
	msgs    chan tea.Msg
	pending int // messages still to come from Cmds
	quit    bool
	views   []string // the conversation after each turn message
	raw     []any    // what tea.Raw wrote to the terminal (the bell)
}

func newDriver(t *testing.T, opts Options, w, h int, prep ...func(*Model)) *driver {
	t.Helper()
	m := New(opts)
	m.after, m.throttle = nil, 0
	for _, p := range prep {
		p(&m)
	}
	d := &driver{t: t, m: m, msgs: make(chan tea.Msg, 64)}
	t.Cleanup(d.close)
	d.exec(m.Init())
	d.send(tea.WindowSizeMsg{Width: w, Height: h})
	d.idle()
	return d
}

func (d *driver) model() Model { return d.m.(Model) }

// close cancels any worker and waits for every outstanding Cmd.
func (d *driver) close() {
	d.model().w.shutdown(10 * time.Second)
	deadline := time.After(10 * time.Second)
	for d.pending > 0 {
		select {
		case <-d.msgs:
			d.pending--
		case <-deadline:
			d.t.Errorf("%d commands never returned", d.pending)
			return
		}
	}
}

func (d *driver) exec(cmd tea.Cmd) {
	if cmd == nil {
		return
	}
	d.pending++
	go func() { d.msgs <- cmd() }()
}

// send delivers msg to Update (or expands it, as the program would).
func (d *driver) send(msg tea.Msg) {
	switch msg := msg.(type) {
	case nil:
		return
	case tea.BatchMsg:
		for _, c := range msg {
			d.exec(c)
		}
		return
	case tea.QuitMsg:
		d.quit = true
		return
	case tea.RawMsg:
		// The program writes it to the terminal; Update never sees it.
		d.raw = append(d.raw, msg.Msg)
		return
	}
	if v := reflect.ValueOf(msg); v.Kind() == reflect.Slice && v.Type().Elem() == reflect.TypeFor[tea.Cmd]() {
		// tea.Sequence: run in order, each message handled before the next.
		cmds := make([]tea.Cmd, v.Len())
		for i := range cmds {
			cmds[i] = v.Index(i).Interface().(tea.Cmd)
		}
		for _, c := range cmds {
			if c != nil {
				d.send(c())
			}
		}
		return
	}
	var cmd tea.Cmd
	d.m, cmd = d.m.Update(msg)
	if _, ok := msg.(turnMsg); ok {
		d.views = append(d.views, d.view())
	}
	d.exec(cmd)
}

// step handles the next message from a Cmd.
func (d *driver) step(deadline <-chan time.Time, what string) {
	d.t.Helper()
	select {
	case msg := <-d.msgs:
		d.pending--
		d.send(msg)
	case <-deadline:
		d.t.Fatalf("timed out waiting for %s; view:\n%s", what, d.view())
	}
}

// idle runs until no Cmd is outstanding but the Prompter's wait, parked
// with nothing to hand over.
func (d *driver) idle() {
	d.t.Helper()
	deadline := time.After(15 * time.Second)
	for !d.quit && !d.isIdle() {
		select {
		case msg := <-d.msgs:
			d.pending--
			d.send(msg)
		case <-time.After(5 * time.Millisecond): // the wait may park meanwhile
		case <-deadline:
			d.t.Fatalf("timed out waiting for idle; view:\n%s", d.view())
		}
	}
}

func (d *driver) isIdle() bool {
	if d.pending == 0 {
		return true
	}
	m := d.model()
	return m.prompter != nil && d.pending == 1 && m.prompter.IdleAt(m.pseen)
}

// until runs until the view contains want.
func (d *driver) until(want string) {
	d.t.Helper()
	d.untilView(want, func(v string) bool { return strings.Contains(v, want) })
}

// untilGone runs until the view no longer contains s.
func (d *driver) untilGone(s string) {
	d.t.Helper()
	d.untilView("no "+s, func(v string) bool { return !strings.Contains(v, s) })
}

func (d *driver) untilView(what string, ok func(string) bool) {
	d.t.Helper()
	deadline := time.After(15 * time.Second)
	for !ok(d.view()) {
		if d.pending == 0 {
			d.t.Fatalf("idle, and the view never showed %s:\n%s", what, d.view())
		}
		d.step(deadline, what)
	}
}

// untilModel runs until ok holds of the model.
func (d *driver) untilModel(what string, ok func(Model) bool) {
	d.t.Helper()
	deadline := time.After(15 * time.Second)
	for !ok(d.model()) {
		if d.pending == 0 {
			d.t.Fatalf("idle, and never %s:\n%s", what, d.view())
		}
		d.step(deadline, what)
	}
}

// untilRaw runs until n things were written raw to the terminal.
func (d *driver) untilRaw(n int) {
	d.t.Helper()
	deadline := time.After(15 * time.Second)
	for len(d.raw) < n {
		d.step(deadline, fmt.Sprintf("%d raw writes", n))
	}
}

// graceOver ends the open permission dialog's wait to be armed, as its
// timer would.
func (d *driver) graceOver() {
	d.t.Helper()
	if d.model().perm == nil {
		d.t.Fatalf("no dialog is open:\n%s", d.view())
	}
	d.arm()
}

// arm ends the wait of the dialog on top (overlay.go's gate), as its
// timer would.
func (d *driver) arm() {
	d.t.Helper()
	d.send(armMsg{gen: d.model().gate.gen})
}

func (d *driver) view() string { return ansi.Strip(d.m.View().Content) }

func (d *driver) key(k tea.KeyPressMsg) { d.send(k) }

func (d *driver) typeText(s string) {
	for _, r := range s {
		d.send(tea.KeyPressMsg{Code: r, Text: string(r)})
	}
}

// Keys as a terminal reports them.
var (
	keyEnter    = tea.KeyPressMsg{Code: tea.KeyEnter}
	keyAltEnter = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModAlt}
	keyShiftEnt = tea.KeyPressMsg{Code: tea.KeyEnter, Mod: tea.ModShift}
	keyEsc      = tea.KeyPressMsg{Code: tea.KeyEscape}
	keyDown     = tea.KeyPressMsg{Code: tea.KeyDown}
	keyPgUp     = tea.KeyPressMsg{Code: tea.KeyPgUp}
	keyPgDown   = tea.KeyPressMsg{Code: tea.KeyPgDown}
	keyTab      = tea.KeyPressMsg{Code: tea.KeyTab}
	keyEnd      = tea.KeyPressMsg{Code: tea.KeyEnd}
	keyUp       = tea.KeyPressMsg{Code: tea.KeyUp}
	keyLeft     = tea.KeyPressMsg{Code: tea.KeyLeft}
	keyRight    = tea.KeyPressMsg{Code: tea.KeyRight}
	keySpace    = tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
)

func ctrl(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Mod: tea.ModCtrl} }

func char(r rune) tea.KeyPressMsg { return tea.KeyPressMsg{Code: r, Text: string(r)} }

// ask types q, sends it and waits until the UI is idle.
func (d *driver) ask(q string) {
	d.t.Helper()
	d.typeText(q)
	d.key(keyEnter)
	d.idle()
}

// quietCtx is a context for direct hub calls in tests.
func quietCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	t.Cleanup(cancel)
	return ctx
}
