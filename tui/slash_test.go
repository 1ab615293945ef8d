package tui

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// A mistyped command never reaches the model or the hub's log: the
// notice names the closest command and the words stay to be fixed. A
// first word with a second slash is a path, and is asked.
func TestUnknownSlashCommandIsNeverSent(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	d := newDriver(t, r.options(), 100, 30)

	for _, c := range []struct{ in, notice string }{
		{"/privte my pin is 4321", "unknown command /privte — did you mean /private?"},
		{"/PRIVATE my pin is 4321", "did you mean /private?"},
		{"/perm", "did you mean /permissions?"},
		{"/etc what is this?", "unknown command /etc"},
		{"/apps and my pin is 4321", "/apps takes nothing after it — nothing was sent"},
		{"  /privte indented", "did you mean /private?"},
	} {
		d.typeText(c.in)
		d.key(keyEsc) // the menu, where it shows, is closed
		d.key(keyEnter)
		d.idle()
		if n := len(r.srv.Requests()); n != 0 {
			t.Fatalf("%q reached the model (%d requests)", c.in, n)
		}
		if chats, _ := r.op.Chats(); len(chats) != 0 {
			t.Fatalf("%q made a chat: %+v", c.in, chats)
		}
		if !strings.Contains(d.model().notice, c.notice) || !strings.Contains(d.view(), c.notice[:20]) {
			t.Errorf("%q: notice %q, want %q:\n%s", c.in, d.model().notice, c.notice, d.view())
		}
		if got := d.model().input.value(); got != c.in {
			t.Errorf("%q: the input must be kept to be fixed, has %q", c.in, got)
		}
		d.send(ctrl('u'))
		for d.model().input.value() != "" {
			d.send(ctrl('u')) // one line at a time
		}
	}

	// In a chat with a turn, nothing more is logged either.
	d.ask("hello")
	chats, _ := r.op.Chats()
	before := len(r.srv.Requests())
	d.ask("/privte my pin is 4321")
	turns, _ := r.op.Turns(chats[0].ID)
	if len(turns) != 1 || len(r.srv.Requests()) != before {
		t.Fatalf("a mistyped command became a turn: %+v", turns)
	}
	d.send(ctrl('u'))

	// A path is a query.
	d.ask("/etc/hosts what is this?")
	turns, _ = r.op.Turns(chats[0].ID)
	if len(turns) != 2 || turns[1].Query != "/etc/hosts what is this?" {
		t.Fatalf("a path must be asked: %+v", turns)
	}
}

func TestClosestCommands(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		word string
		want []string
	}{
		{"/privte", []string{"/private"}},
		{"/perm", []string{"/permissions"}},
		{"/m", []string{"/model", "/memory"}},
		{"/Help", []string{"/help"}},
		{"/modle", []string{"/model"}},
		{"/xyzzy", nil},
		{"/", nil},
	} {
		if got := closestCommands(c.word); !slices.Equal(got, c.want) {
			t.Errorf("closestCommands(%q) = %v, want %v", c.word, got, c.want)
		}
	}
	for _, c := range []struct {
		q, word, rest string
		ok            bool
	}{
		{"/model qwen3:1.7b", "/model", "qwen3:1.7b", true},
		{" /help", "/help", "", true},
		{"/etc/hosts what", "", "", false},
		{"//", "", "", false},
		{"what /is this", "", "", false},
		{"/", "/", "", true},
	} {
		w, rest, ok := slashWord(c.q)
		if w != c.word || rest != c.rest || ok != c.ok {
			t.Errorf("slashWord(%q) = %q %q %v", c.q, w, rest, ok)
		}
	}
}

// Typing "/" opens the menu of commands above the input; it narrows as
// you type, ↑/↓ choose, tab completes, esc closes it, enter runs.
func TestSlashMenu(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	opts := r.options()
	opts.Models = newFakeModels()
	d := newDriver(t, opts, 100, 30)
	menu := "tab complete"

	d.typeText("/")
	v := d.view()
	for _, want := range []string{"/help", "keys and commands", "/new", "/chats", "/private QUERY", "/model [NAME]", menu} {
		if !strings.Contains(v, want) {
			t.Errorf("the menu lacks %q:\n%s", want, v)
		}
	}
	lines := strings.Split(v, "\n")
	rule := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "───") })
	if rule < 1 || !strings.Contains(lines[rule-1], "╰") {
		t.Errorf("the menu must sit just above the input's rule:\n%s", v)
	}

	d.typeText("m")
	v = d.view()
	if !strings.Contains(v, "/memory") || !strings.Contains(v, "/model") || strings.Contains(v, "/help") {
		t.Fatalf("/m lists /memory and /model only:\n%s", v)
	}
	d.key(keyDown)
	d.key(keyTab)
	if got := d.model().input.value(); got != "/memory" {
		t.Fatalf("tab after ↓ completes the second: %q", got)
	}
	d.key(keyUp) // /memory is chosen alone; up keeps it
	d.key(keyEsc)
	if v := d.view(); strings.Contains(v, menu) || d.model().input.value() != "/memory" {
		t.Fatalf("esc closes the menu and keeps the words:\n%s", v)
	}
	d.send(ctrl('u'))

	// A command that takes an argument is completed with a space; the
	// menu is gone while the argument is typed.
	d.typeText("/pri")
	d.key(keyTab)
	if got := d.model().input.value(); got != "/private " || strings.Contains(d.view(), menu) {
		t.Fatalf("tab on /private: %q\n%s", got, d.view())
	}
	d.send(ctrl('u'))
	d.typeText("/pri")
	d.key(keyEnter)
	if got := d.model().input.value(); got != "/private " || len(r.srv.Requests()) != 0 {
		t.Fatalf("enter on a command that needs an argument completes it: %q", got)
	}
	d.send(ctrl('u'))

	// Enter runs the chosen command: /help.
	d.typeText("/he")
	d.key(keyEnter)
	if d.model().overlay != overlayHelp || d.model().input.value() != "" {
		t.Fatalf("/he, enter: the help must open:\n%s", d.view())
	}
	if v := d.view(); !strings.Contains(v, "commands, with a menu") {
		t.Errorf("the help must list the commands:\n%s", v)
	}
	d.key(keyEsc)

	// Typing /help whole and enter runs it too.
	d.typeText("/help")
	d.key(keyEnter)
	if d.model().overlay != overlayHelp {
		t.Fatalf("/help:\n%s", d.view())
	}
	d.key(keyEsc)

	// /new and /perm through the menu: the prefix of one command runs it.
	d.ask("first question")
	d.typeText("/new")
	d.key(keyEnter)
	if d.model().chat.Chat.ID != "" || strings.Contains(d.view(), "first question") {
		t.Fatalf("/new must show a new chat:\n%s", d.view())
	}
	d.typeText("/perm")
	d.key(keyEnter)
	if !strings.Contains(d.model().notice, "permission manager is not available") {
		t.Fatalf("/perm, enter: runs /permissions: notice %q", d.model().notice)
	}
	if n := r.spokeRequests(); n != 1 {
		t.Fatalf("%d spoke requests: a command reached the model", n)
	}
}

// The menu never covers a permission dialog: "/" typed while one waits
// goes to the input, and no menu is drawn.
func TestSlashMenuStaysUnderAPermissionDialog(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible(), allowExec, denyCollab)
	d := newDriver(t, r.options(), 100, 30)
	d.typeText(mailQuery)
	d.key(keyEnter)
	d.until("cannot be undone")
	d.typeText("/")
	v := d.view()
	if strings.Contains(v, "tab complete") || !strings.Contains(v, "cannot be undone") || d.model().input.value() != "/" {
		t.Fatalf("the menu must not show over a permission dialog:\n%s", v)
	}
}

// fakeModels is an Ollama with some models, one switch at a time.
type fakeModels struct {
	mu         sync.Mutex
	list       []llm.ModelInfo
	hub, spoke string
	sets       []string
	busy       bool
}

func (f *fakeModels) Installed(context.Context) ([]llm.ModelInfo, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.list), nil
}

func (f *fakeModels) SetModel(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.busy {
		return hub.ErrBusy
	}
	f.sets = append(f.sets, name)
	f.hub, f.spoke = name, name
	return nil
}

func (f *fakeModels) Current() (string, string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.hub, f.spoke
}

func (f *fakeModels) switched() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sets)
}

// evilModel is a model name that would set the terminal's title.
const evilModel = "evil\x1b]0;pwned\x07:latest"

func newFakeModels() *fakeModels {
	return &fakeModels{hub: hubModel, spoke: spokeModel, list: []llm.ModelInfo{
		{Name: "embed", Capabilities: []string{"embedding"}},
		{Name: evilModel, Capabilities: []string{"completion", "tools"}},
		{Name: hubModel, Capabilities: []string{"completion", "tools"}},
		{Name: "qwen3:1.7b", Capabilities: []string{"completion", "tools", "thinking"}},
		{Name: spokeModel, Capabilities: []string{"completion", "tools"}},
	}}
}

// /model lists the installed models that can call tools, the current
// ones marked; enter switches, the status bar follows. /model NAME
// refuses a model that is missing or cannot call tools, naming those
// that can; a running turn refuses any switch.
func TestModelCommand(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	fm := newFakeModels()
	opts := r.options()
	opts.Models = fm
	d := newDriver(t, opts, 100, 30)

	d.typeText("/model")
	d.key(keyEnter)
	d.idle()
	v := d.view()
	mustShow(t, unboxed(v), "the config file is not changed")
	for _, want := range []string{"Models", "hub-model", "● hub", "spoke-model", "● spokes", "▸ spoke-model", "qwen3:1.7b", "cannot call tools: embed", `evil\x1b]0;pwned\a:latest`} {
		if !strings.Contains(v, want) {
			t.Errorf("/model lacks %q:\n%s", want, v)
		}
	}
	if raw := d.m.View().Content; strings.Contains(raw, "\x1b]0;pwned") {
		t.Fatalf("a model name reached the terminal raw")
	}
	// The cursor starts on the spokes' model; ↑ is qwen3:1.7b.
	d.key(keyUp)
	d.key(keyEnter)
	d.idle()
	if got := fm.switched(); !slices.Equal(got, []string{"qwen3:1.7b"}) {
		t.Fatalf("switched %v", got)
	}
	v = d.view()
	status := strings.Split(v, "\n")[29]
	if !strings.Contains(status, "qwen3:1.7b") || strings.Contains(status, "hub-model") {
		t.Errorf("the status bar must show the new model:\n%s", status)
	}
	if !strings.Contains(d.model().notice, "now use qwen3:1.7b, here and in the bulkheads started later") {
		t.Errorf("notice %q", d.model().notice)
	}

	for _, c := range []struct{ in, notice string }{
		{"/model embed", "cannot switch: embed cannot call tools, which every app's spoke needs — installed models that can: "},
	} {
		d.typeText(c.in)
		d.key(keyEnter)
		d.idle()
		if n := d.model().notice; !strings.HasPrefix(n, c.notice) || !strings.Contains(n, "qwen3:1.7b") || strings.Contains(n, "embed,") {
			t.Errorf("%s: notice %q", c.in, n)
		}
		d.send(ctrl('u'))
	}
	// A model that is not installed: offered for a pull (declined here).
	d.typeText("/model nope")
	d.key(keyEnter)
	d.idle()
	if v := d.view(); !strings.Contains(v, "nope is not installed.") || !strings.Contains(flat(unboxed(v)), "then the hub and the spokes switch to it") {
		t.Errorf("/model nope: no pull offered:\n%s", v)
	}
	d.typeText("n")
	d.idle()
	if d.model().pull != nil {
		t.Error("n left the pull dialog open")
	}
	if got := fm.switched(); len(got) != 1 {
		t.Fatalf("a refused model was switched to: %v", got)
	}

	// "spoke-model:latest" is spoke-model, as Ollama reads it.
	d.typeText("/model " + spokeModel + ":latest")
	d.key(keyEnter)
	d.idle()
	if got := fm.switched(); len(got) != 2 || got[1] != spokeModel {
		t.Fatalf("switched %v", got)
	}

	// The engine refuses while a turn runs elsewhere.
	fm.mu.Lock()
	fm.busy = true
	fm.mu.Unlock()
	d.typeText("/model " + hubModel)
	d.key(keyEnter)
	d.idle()
	if n := d.model().notice; !strings.Contains(n, "a turn is running") {
		t.Errorf("busy: notice %q", n)
	}
	if n := len(r.srv.Requests()); n != 0 {
		t.Fatalf("/model reached the model: %d requests", n)
	}
}

// While a turn runs here, /model NAME is refused before anything is
// asked; the turn goes on.
func TestModelCommandWaitsForTheTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Reply{Chunks: []string{"partial"}, Hang: true}))
	fm := newFakeModels()
	opts := r.options()
	opts.Models = fm
	d := newDriver(t, opts, 100, 30)
	d.typeText("long one")
	d.key(keyEnter)
	d.until("partial")
	d.typeText("/model qwen3:1.7b")
	d.key(keyEnter)
	if n := d.model().notice; !strings.Contains(n, "a turn is running") || len(fm.switched()) != 0 || d.model().run == nil {
		t.Fatalf("notice %q, switched %v", n, fm.switched())
	}
	d.key(keyEsc)
	d.idle()
}

// Without Options.Models, /model is still a command: never sent; it
// says how to choose a model instead, and neither the menu nor the help
// offers it.
func TestModelCommandWithoutModels(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("x") })
	d := newDriver(t, r.options(), 80, 24)
	d.ask("/model qwen3:1.7b")
	if n := len(r.srv.Requests()); n != 0 || !strings.Contains(d.model().notice, "not available here — quit and run bulkhead --model NAME") {
		t.Fatalf("%d requests, notice %q", n, d.model().notice)
	}
	// Nor does the menu or the help offer it.
	d.send(ctrl('u'))
	d.typeText("/")
	if v := d.view(); !strings.Contains(v, "/permissions") || strings.Contains(v, "/model") {
		t.Fatalf("the menu must not offer /model here:\n%s", v)
	}
	d.typeText("mo")
	if v := d.view(); strings.Contains(v, "/model") {
		t.Fatalf("the menu must not offer /model here:\n%s", v)
	}
	d.send(ctrl('u'))
	d.typeText("/help")
	d.key(keyEnter)
	d.idle()
	if v := d.view(); !strings.Contains(v, "commands, with a menu: /help") || strings.Contains(v, "/model") {
		t.Fatalf("the help must not name /model here:\n%s", v)
	}
}

// /model NAME for a model Ollama does not have pulls it (with progress),
// then switches this session to it.
func TestModelCommandPullsThenSwitches(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an answer")))
	fm := newFakeModels()
	gate := make(chan struct{})
	fo := &fakeOllama{up: true, models: map[string][]string{hubModel: {llm.CapCompletion, llm.CapTools}, spokeModel: {llm.CapCompletion, llm.CapTools}}, gate: gate}
	fo.onPull = func(model string) {
		fm.mu.Lock()
		fm.list = append(fm.list, llm.ModelInfo{Name: model, Capabilities: []string{"completion", "tools"}})
		fm.mu.Unlock()
	}
	opts := r.options()
	opts.Models, opts.Ollama = fm, fo
	d := newDriver(t, opts, 100, 30)
	d.typeText("/model gemma3:4b")
	d.key(keyEnter)
	d.idle()
	d.key(char('y'))
	d.until("50.0 MiB / 100.0 MiB")
	if v := d.view(); !strings.Contains(v, "pulling gemma3:4b") || !strings.Contains(flat(unboxed(v)), "the hub and the spokes switch to it when it is done") {
		t.Errorf("no progress while pulling:\n%s", v)
	}
	close(gate)
	d.idle()
	if got := fm.switched(); !slices.Equal(got, []string{"gemma3:4b"}) {
		t.Fatalf("switched %v after the pull", got)
	}
	if n := d.model().notice; !strings.Contains(n, "now use gemma3:4b, here and in the bulkheads started later") {
		t.Errorf("notice %q", n)
	}
}
