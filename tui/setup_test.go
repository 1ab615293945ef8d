package tui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/setup"
)

const fakeHost = "http://127.0.0.1:11434"

// fakeOllama is a fake Ollama server as the setup panel sees it: down
// until up is set, with the installed models and their capabilities in
// models; a pull reports half its progress, waits for gate (when set),
// then fails with pullErr or installs the model (and tells onPull).
type fakeOllama struct {
	mu      sync.Mutex
	up      bool
	models  map[string][]string
	pullErr error
	gate    chan struct{}
	onPull  func(model string)
}

func (f *fakeOllama) setUp(up bool) {
	f.mu.Lock()
	f.up = up
	f.mu.Unlock()
}

func (f *fakeOllama) down() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.up {
		return nil
	}
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
	return &llm.UnreachableError{Host: fakeHost, Err: refused}
}

func (f *fakeOllama) Version(context.Context) (string, error) {
	if err := f.down(); err != nil {
		return "", err
	}
	return "0.9.9-fake", nil
}

func (f *fakeOllama) HasModel(_ context.Context, model string) (bool, error) {
	if err := f.down(); err != nil {
		return false, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	_, ok := f.models[model]
	return ok, nil
}

func (f *fakeOllama) Capabilities(_ context.Context, model string) ([]string, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	caps, ok := f.models[model]
	if !ok {
		return nil, &llm.ModelMissingError{Model: model, Host: fakeHost}
	}
	return caps, nil
}

func (f *fakeOllama) ModelsThatCan(_ context.Context, cp string) ([]string, error) {
	if err := f.down(); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for m, caps := range f.models {
		if len(caps) == 0 || slices.Contains(caps, cp) {
			out = append(out, m)
		}
	}
	slices.Sort(out)
	return out, nil
}

func (f *fakeOllama) Pull(ctx context.Context, model string, fn func(llm.Progress)) error {
	if err := f.down(); err != nil {
		return err
	}
	fn(llm.Progress{Status: "pulling manifest"})
	fn(llm.Progress{Status: "pulling 8eeb52dfb3bb", Completed: 50 << 20, Total: 100 << 20})
	if f.gate != nil {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if f.pullErr != nil {
		return f.pullErr
	}
	f.mu.Lock()
	f.models[model] = []string{llm.CapCompletion, llm.CapTools}
	f.mu.Unlock()
	if f.onPull != nil {
		f.onPull(model)
	}
	return nil
}

// offlinePull is what a pull answers with no network.
var offlinePull = errors.New(`pull "spoke-model" from ` + fakeHost + `: pull model manifest: Get "https://registry.ollama.ai/v2/library/spoke-model/manifests/latest": dial tcp: lookup registry.ollama.ai: no such host`)

// setupOptions are the rig's options with the setup panel on, checking
// through f; ollama is "installed" at bin ("" not installed).
func setupOptions(r *rig, f *fakeOllama, bin string) Options {
	opts := r.options()
	opts.Ollama = f
	opts.Setup = &Setup{
		Host: fakeHost, HostFrom: "default", ConfigFile: "/home/user/.config/bulkhead/config.yaml",
		FindOllama: func() string { return bin },
	}
	return opts
}

// tickSetup runs the countdown to the next check and waits for it.
func (d *driver) tickSetup() {
	d.t.Helper()
	for s := d.model().setup; !s.checking && s.wait > 0; s = d.model().setup {
		d.send(setupTickMsg{gen: s.gen})
	}
	d.idle()
}

// mustShow checks that the view shows each of want, wherever the panel
// wrapped it.
func mustShow(t *testing.T, v string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(flat(v), flat(w)) {
			t.Fatalf("the view lacks %q:\n%s", w, v)
		}
	}
}

func mustNotShow(t *testing.T, v string, unwanted ...string) {
	t.Helper()
	for _, w := range unwanted {
		if strings.Contains(flat(v), flat(w)) {
			t.Fatalf("the view shows %q:\n%s", w, v)
		}
	}
}

// flat is s with every run of white space one blank.
func flat(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestSetupWaitsForOllama: with nothing at the host the panel says which
// host, where it came from and how to fix it; a query typed meanwhile is
// not sent and stays in the input; the countdown checks again, and once
// Ollama answers the chat works, with no restart. When Ollama goes down
// later the panel comes back.
func TestSetupWaitsForOllama(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("here I am")))
	f := &fakeOllama{models: map[string][]string{hubModel: nil, spokeModel: nil}}
	d := newDriver(t, setupOptions(r, f, ""), 100, 30)

	v := d.view()
	mustShow(t, v, "✗ Ollama is not answering at "+fakeHost, "the default host · connection refused",
		"curl -fsSL https://ollama.com/install.sh | sh", "brew install ollama", "Start it: ollama serve",
		"bulkhead --ollama-host", "OLLAMA_HOST", "ollama.host in /home/user/.config/bulkhead/config.yaml",
		"checking again in 2s · ctrl+r checks now", "● ollama down")
	mustNotShow(t, v, "the answer streams here")

	d.typeText("are you there?")
	d.key(keyEnter)
	d.idle()
	if got := d.model().input.value(); got != "are you there?" {
		t.Fatalf("the query left the input: %q", got)
	}
	mustShow(t, d.view(), "not sent: Ollama is not answering")
	if len(r.srv.Requests()) != 0 {
		t.Fatal("a query reached the model while Ollama was down")
	}

	// One second of the countdown, then a check that finds it still down.
	d.send(setupTickMsg{gen: d.model().setup.gen})
	mustShow(t, d.view(), "checking again in 1s")
	d.tickSetup()
	if s := d.model().setup; s.phase != setup.Down || s.tries != 2 {
		t.Fatalf("after a second failed check: phase %v, tries %d", s.phase, s.tries)
	}

	// Installed meanwhile: the panel says to start it.
	d.model().setup.opts.FindOllama = func() string { return "/usr/local/bin/ollama" }
	d.tickSetup()
	v = d.view()
	mustShow(t, v, "Start it: ollama serve", "(installed: /usr/local/bin/ollama)")
	mustNotShow(t, v, "install.sh")

	f.setUp(true)
	d.tickSetup()
	v = d.view()
	mustNotShow(t, v, "not answering", "To fix it")
	mustShow(t, v, "the answer streams here", "the chat is ready; enter sends what you typed", "● ollama 0.9.9-fake")
	d.key(keyEnter)
	d.idle()
	mustShow(t, d.view(), "are you there?", "here I am")

	// Down again: the status bar's check brings the panel back.
	f.setUp(false)
	d.send(pollMsg{})
	d.idle()
	mustShow(t, d.view(), "✗ Ollama is not answering", "checking again in 2s")
	f.setUp(true)
	d.key(ctrl('r')) // checks now
	d.idle()
	mustShow(t, d.view(), "here I am", "the chat is ready")
}

// TestSetupPullsMissingModelAtStart: a configured model that is missing
// is offered for pull before anything is asked, with a progress bar;
// once pulled the chat opens.
func TestSetupPullsMissingModelAtStart(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("pulled and ready")), hubModel)
	f := &fakeOllama{up: true, models: map[string][]string{hubModel: {llm.CapCompletion}}, gate: make(chan struct{})}
	f.onPull = r.srv.AddModel
	d := newDriver(t, setupOptions(r, f, ""), 100, 30)

	v := d.view()
	mustShow(t, v, "Model missing", "spoke-model is not installed.", "pull it now?  Pull     Not now", "it is the model of the spokes")
	// The dialog opened by itself: what is typed before it is armed stays
	// in the input and answers nothing (overlay.go).
	d.typeText("why")
	if d.model().input.value() != "why" || d.model().pulling != nil {
		t.Fatalf("typing must go to the input, not the dialog (input %q)", d.model().input.value())
	}
	d.send(ctrl('u'))
	d.arm()
	d.key(char('y'))
	d.until("50.0 MiB / 100.0 MiB")
	v = d.view()
	mustShow(t, v, "pulling spoke-model: pulling 8eeb52dfb3bb", "█", "░", "the chat opens when it is done")
	close(f.gate)
	d.idle()
	v = d.view()
	mustNotShow(t, v, "Model missing", "is not installed")
	mustShow(t, v, "the answer streams here", "pulled spoke-model — the chat is ready")
	d.ask("hello")
	mustShow(t, d.view(), "pulled and ready")
}

// TestSetupOfflineListsModelsThatCan: a pull that fails for want of a
// network closes into the list of installed models that can call tools
// and how to choose one; declining does the same. Nothing is sent
// meanwhile, and every name from Ollama is shown safely.
func TestSetupOfflineListsModelsThatCan(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel)
	f := &fakeOllama{up: true, pullErr: offlinePull, models: map[string][]string{
		hubModel:               {llm.CapCompletion},
		"qwen2.5:0.5b":         {llm.CapCompletion, llm.CapTools},
		"llama3.2":             {llm.CapCompletion, llm.CapTools},
		"evil\x1b]0;pwned\x07": {llm.CapCompletion, llm.CapTools},
		"nomic-embed-text":     {"embedding"},
		"tiny":                 {llm.CapCompletion},
	}}
	d := newDriver(t, setupOptions(r, f, ""), 120, 40)
	d.arm()
	d.key(char('y'))
	d.idle()
	v := d.view()
	mustNotShow(t, v, "Model missing", "tiny,", "nomic")
	mustShow(t, v, "✗ spoke-model is not installed — the model of the spokes",
		"pull failed — no network? dial tcp: lookup registry.ollama.ai: no such host",
		`Installed models that can call tools: evil\x1b]0;pwned\a, llama3.2, qwen2.5:0.5b`,
		"bulkhead --model NAME", "spokes.model in /home/user/.config/bulkhead/config.yaml",
		"ollama pull spoke-model", "checking again in 5s")
	if raw := d.m.View().Content; strings.Contains(raw, "\x1b]0;") || strings.Contains(raw, "\x07") {
		t.Fatal("a model name reached the terminal raw")
	}

	d.typeText("hi")
	d.key(keyEnter)
	d.idle()
	mustShow(t, d.view(), "not sent: spoke-model (the spokes) is not installed")
	if d.model().input.value() != "hi" || len(r.srv.Requests()) != 0 {
		t.Fatal("the query must stay in the input, unsent")
	}

	// The countdown checks again without offering the pull again ...
	d.tickSetup()
	mustNotShow(t, d.view(), "Model missing")
	// ... ctrl+r does; declined, the list stays.
	d.key(ctrl('r'))
	d.idle()
	mustShow(t, d.view(), "Model missing")
	d.arm()
	d.key(char('n'))
	d.idle()
	v = d.view()
	mustShow(t, v, "not pulled", "Installed models that can call tools:")
	mustNotShow(t, v, "Model missing", "pull failed")

	// Pulled elsewhere (`ollama pull`): the next check opens the chat.
	f.mu.Lock()
	f.models[spokeModel] = []string{llm.CapCompletion, llm.CapTools}
	f.mu.Unlock()
	r.srv.AddModel(spokeModel)
	d.tickSetup()
	mustShow(t, d.view(), "the answer streams here", "the chat is ready; enter sends what you typed")
	d.key(keyEnter)
	d.idle()
	if len(r.srv.Requests()) == 0 {
		t.Fatal("the kept query was not sent once the model was there")
	}
}

// TestSetupRefusesModelWithoutTools: a spokes' model that cannot call
// tools is named with its role and the models that can; plain chat still
// works (esc or a query goes on). A hub model that cannot write text
// blocks the chat.
func TestSetupRefusesModelWithoutTools(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("plain chat works")))
	f := &fakeOllama{up: true, models: map[string][]string{
		hubModel:       {llm.CapCompletion, llm.CapTools},
		spokeModel:     {llm.CapCompletion},
		"qwen2.5:0.5b": {llm.CapCompletion, llm.CapTools},
	}}
	d := newDriver(t, setupOptions(r, f, ""), 100, 30)
	v := d.view()
	mustShow(t, v, "✓ hub-model — the hub",
		"⚠ spoke-model cannot call tools, which the spokes need: apps will not run with it (plain chat works)",
		"Installed models that can call tools: hub-model, qwen2.5:0.5b", "bulkhead --model NAME", "esc or a query goes to the chat")
	mustNotShow(t, v, "Model missing")
	d.key(keyEsc)
	mustShow(t, d.view(), "the answer streams here")
	d.ask("hello")
	mustShow(t, d.view(), "plain chat works")

	// One model for the hub and the spokes (--model tiny) that cannot call
	// tools: only spokes.model needs changing.
	same := &fakeOllama{up: true, models: map[string][]string{hubModel: {llm.CapCompletion}}}
	opts := setupOptions(r, same, "")
	opts.SpokeModel = hubModel
	d = newDriver(t, opts, 100, 30)
	v = d.view()
	mustShow(t, v, "⚠ hub-model cannot call tools, which the spokes need", "No installed model can call tools", "or set spokes.model in")
	mustNotShow(t, v, "hub.model /", "For the hub alone")

	// The hub's model cannot write text: nothing is sent.
	f2 := &fakeOllama{up: true, models: map[string][]string{
		hubModel:   {"embedding"},
		spokeModel: {llm.CapCompletion, llm.CapTools},
	}}
	d = newDriver(t, setupOptions(r, f2, ""), 100, 30)
	v = d.view()
	mustShow(t, v, "✗ hub-model cannot write text (completion), which the hub needs",
		"Installed models that can write text (completion): spoke-model", "hub.model in")
	d.key(keyEsc)
	d.typeText("hi")
	d.key(keyEnter)
	mustShow(t, d.view(), "cannot write text (completion)", "not sent: hub-model (the hub)")
}

// TestSetupGolden pins the panel: Ollama down, and a pull that failed
// offline.
func TestSetupGolden(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{80, 24}, {120, 40}} {
		t.Run(fmt.Sprintf("down_%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, replies(ollamatest.Text("x")))
			d := newDriver(t, setupOptions(r, &fakeOllama{}, ""), size[0], size[1])
			golden.RequireEqual(t, d.view())
		})
		t.Run(fmt.Sprintf("offline_%dx%d", size[0], size[1]), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, replies(ollamatest.Text("x")), hubModel)
			f := &fakeOllama{up: true, pullErr: offlinePull, models: map[string][]string{
				hubModel: {llm.CapCompletion, llm.CapTools}, "qwen2.5:0.5b": {llm.CapCompletion, llm.CapTools}, "tiny": {llm.CapCompletion},
			}}
			d := newDriver(t, setupOptions(r, f, ""), size[0], size[1])
			d.arm()
			d.key(char('y'))
			d.idle()
			golden.RequireEqual(t, d.view())
		})
	}
}

// TestSetupRemoteHost: a host on another machine is not to be installed
// here: the fix says to start it there.
func TestSetupRemoteHost(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := setupOptions(r, &fakeOllama{}, "")
	opts.Setup.Host, opts.Setup.HostFrom = "http://gpu-box:11434", "$OLLAMA_HOST"
	d := newDriver(t, opts, 100, 30)
	v := d.view()
	mustShow(t, v, "not answering at http://gpu-box:11434", "set by $OLLAMA_HOST", "Start Ollama on that machine", "OLLAMA_HOST=0.0.0.0 ollama serve")
	mustNotShow(t, v, "install.sh")
}

// TestSetupNoModelCanServe: offline with no installed model that calls
// tools, the panel says so and names what could be the hub alone.
func TestSetupNoModelCanServe(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), "tiny")
	f := &fakeOllama{up: true, pullErr: offlinePull, models: map[string][]string{"tiny": {llm.CapCompletion}}}
	opts := setupOptions(r, f, "")
	opts.SpokeModel = hubModel // --model hub-model: one model, missing
	d := newDriver(t, opts, 100, 30)
	mustShow(t, d.view(), "it is the model of the hub and the spokes")
	d.arm()
	d.key(char('y'))
	d.idle()
	v := d.view()
	mustShow(t, v, "✗ hub-model is not installed — the model of the hub and the spokes",
		"No installed model can call tools — pull one", "For the hub alone (hub.model): tiny", "hub.model / spokes.model in")
}

// TestSetupModelCommandChoosesAnInstalledModel: with the spokes' model
// missing and offline, the panel offers /model NAME; choosing an
// installed model that can call tools there checks again and opens the
// chat, no restart.
func TestSetupModelCommandChoosesAnInstalledModel(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel)
	f := &fakeOllama{up: true, pullErr: offlinePull, models: map[string][]string{
		hubModel:       {llm.CapCompletion, llm.CapTools},
		"qwen2.5:0.5b": {llm.CapCompletion, llm.CapTools},
		"tiny":         {llm.CapCompletion},
	}}
	fm := &fakeModels{hub: hubModel, spoke: spokeModel, list: []llm.ModelInfo{
		{Name: hubModel, Capabilities: []string{"completion", "tools"}},
		{Name: "qwen2.5:0.5b", Capabilities: []string{"completion", "tools"}},
		{Name: "tiny", Capabilities: []string{"completion"}},
	}}
	opts := setupOptions(r, f, "")
	opts.Models = fm
	d := newDriver(t, opts, 120, 40)
	d.arm()
	d.key(char('y'))
	d.idle()
	mustShow(t, d.view(), "Installed models that can call tools: hub-model, qwen2.5:0.5b", "Choose one: /model NAME, or run bulkhead --model NAME")

	d.typeText("/model tiny")
	d.key(keyEnter)
	d.idle()
	if n := d.model().notice; !strings.Contains(n, "cannot switch: tiny cannot call tools") || !strings.Contains(d.view(), "spoke-model is not installed") {
		t.Fatalf("a model that cannot call tools must be refused, the panel kept: %q", n)
	}
	d.send(ctrl('u'))
	d.typeText("/model qwen2.5:0.5b")
	d.key(keyEnter)
	d.idle()
	if strings.Contains(d.view(), "is not installed") {
		t.Fatalf("the panel must close once an installed model serves:\n%s", d.view())
	}
	if n := d.model().notice; !strings.Contains(n, "now use qwen2.5:0.5b, here and in the bulkheads started later") || !strings.Contains(n, "the chat is ready") {
		t.Errorf("notice %q", n)
	}
}
