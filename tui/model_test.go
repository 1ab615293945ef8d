package tui

import (
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/memory"
)

func TestEnterSendsAndTheAnswerAppears(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("Hello from the spoke.")))
	d := newDriver(t, r.options(), 80, 24)

	d.key(keyEnter) // empty input: nothing is sent
	d.typeText("   ")
	d.key(keyEnter)
	d.idle()
	if n := len(r.srv.Requests()); n != 0 {
		t.Fatalf("an empty input reached the model (%d requests)", n)
	}
	if chats, _ := r.op.Chats(); len(chats) != 0 {
		t.Fatalf("no chat may exist before the first send: %+v", chats)
	}

	d.send(ctrl('u')) // clear the blanks

	d.ask("hi bulkhead")
	v := d.view()
	for _, want := range []string{"┃ hi bulkhead", "Hello from the spoke.", "◆ the assistant · ", "ollama 0.0.0-scripted", "hub-model / spoke-model"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	chats, _ := r.op.Chats()
	if len(chats) != 1 || chats[0].Title != "hi bulkhead" {
		t.Fatalf("chats %+v", chats)
	}
	if !strings.Contains(v, " bulkhead  hi bulkhead") {
		t.Errorf("header lacks the chat title:\n%s", v)
	}
	turns, _ := r.op.Turns(chats[0].ID)
	if len(turns) != 1 || turns[0].Status != memory.StatusOK || turns[0].Answer != "Hello from the spoke." {
		t.Fatalf("turns %+v", turns)
	}
	if got := d.model().input.value(); got != "" {
		t.Fatalf("input not cleared after send: %q", got)
	}
}

func TestStreamingTokensAppearProgressively(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Reply{Chunks: []string{"alpha ", "bravo ", "charlie ", "delta."}, Delay: 40 * time.Millisecond}))
	d := newDriver(t, r.options(), 80, 24)
	d.ask("stream please")
	partial := false
	for _, v := range d.views {
		if strings.Contains(v, "alpha") && !strings.Contains(v, "delta.") {
			partial = true
			if !strings.Contains(v, "esc cancels") {
				t.Errorf("a streaming turn must say esc cancels it:\n%s", v)
			}
		}
	}
	if !partial {
		t.Fatalf("never saw a partial answer in %d views", len(d.views))
	}
	if v := d.view(); !strings.Contains(v, "alpha bravo charlie delta.") || strings.Contains(v, "esc cancels") {
		t.Fatalf("final view:\n%s", v)
	}
}

func TestEscCancelsARunningTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Reply{Chunks: []string{"partial answer"}, Hang: true}))
	d := newDriver(t, r.options(), 80, 24)
	d.typeText("long one")
	d.key(keyEnter)
	d.until("partial answer")
	// The plain answer's spoke is shown as the model's, not by its
	// internal name (which is also the unsafe mode's).
	if w := d.model().bar.workingApps(); len(w) != 1 || w[0] != "model" {
		t.Errorf("status bar must show the working spoke, has %v", w)
	}
	if v := d.view(); !strings.Contains(v, "⚙ model") || strings.Contains(v, "vanilla") {
		t.Errorf("status bar lacks the working spoke:\n%s", v)
	}

	// While it runs, typing works but enter does not send a second turn.
	d.typeText("next")
	d.key(keyEnter)
	if v := d.view(); !strings.Contains(v, "still answering") {
		t.Errorf("no notice that enter waits:\n%s", v)
	}
	if got := d.model().input.value(); got != "next" {
		t.Errorf("input %q", got)
	}

	d.key(keyEsc)
	d.idle()
	v := d.view()
	if !strings.Contains(v, "partial answer") || !strings.Contains(v, "■ cancelled") {
		t.Fatalf("the partial answer must stay, marked cancelled:\n%s", v)
	}
	chats, _ := r.op.Chats()
	turns, _ := r.op.Turns(chats[0].ID)
	if len(turns) != 1 || turns[0].Status != memory.StatusCancelled || turns[0].Answer != "partial answer" {
		t.Fatalf("hub logged %+v", turns)
	}
	if n := r.spokeRequests(); n != 1 {
		t.Fatalf("%d spoke requests, want 1", n)
	}
	if w := r.op.Working(); len(w) != 0 {
		t.Fatalf("spokes still working: %v", w)
	}
}

func TestCtrlRRetriesACutTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(
		ollamatest.Reply{Chunks: []string{"half ", "an ", "answer"}, CutAfter: 2},
		ollamatest.Text("the whole answer"),
	))
	d := newDriver(t, r.options(), 80, 24)
	d.ask("tell me")
	v := d.view()
	if !strings.Contains(v, "half an") || !strings.Contains(v, "✂ cut off") || !strings.Contains(v, "ctrl+r retries") {
		t.Fatalf("cut turn:\n%s", v)
	}
	d.key(ctrl('r'))
	d.idle()
	v = d.view()
	if !strings.Contains(v, "the whole answer") || strings.Contains(v, "cut off") {
		t.Fatalf("after retry:\n%s", v)
	}
	chats, _ := r.op.Chats()
	turns, _ := r.op.Turns(chats[0].ID)
	if len(turns) != 1 || turns[0].Status != memory.StatusOK || turns[0].Answer != "the whole answer" {
		t.Fatalf("retry must replace the turn in place: %+v", turns)
	}
	d.key(ctrl('r'))
	if v := d.view(); !strings.Contains(v, "nothing to retry") {
		t.Fatalf("ctrl+r with nothing to retry:\n%s", v)
	}
}

func TestNewChatListSwitchAndDelete(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(req *api.ChatRequest) ollamatest.Reply {
		return ollamatest.Text("answer to " + req.Messages[len(req.Messages)-1].Content)
	})
	d := newDriver(t, r.options(), 80, 24)
	d.ask("first question")
	d.key(ctrl('n'))
	if v := d.view(); strings.Contains(v, "first question") || !strings.Contains(v, "new chat") {
		t.Fatalf("ctrl+n must show an empty new chat:\n%s", v)
	}
	d.ask("second question")

	d.key(ctrl('o'))
	d.idle()
	v := d.view()
	first, second := strings.Index(v, "first question"), strings.Index(v, "second question")
	if first < 0 || second < 0 || second > first {
		t.Fatalf("the list must hold both chats, newest first:\n%s", v)
	}
	d.key(keyDown)
	d.key(keyEnter)
	d.idle()
	v = d.view()
	if !strings.Contains(v, "answer to first question") || strings.Contains(v, "second question") {
		t.Fatalf("enter must switch to the first chat:\n%s", v)
	}

	// Delete the chat on screen: confirm first, n keeps it.
	d.key(ctrl('o'))
	d.idle()
	d.key(char('d'))
	d.idle()
	if v := d.view(); !strings.Contains(v, "delete “first question”?") || !strings.Contains(v, "Delete") || !strings.Contains(v, "Keep") {
		t.Fatalf("no confirm:\n%s", v)
	}
	d.key(char('n'))
	d.idle()
	if chats, _ := r.op.Chats(); len(chats) != 2 {
		t.Fatalf("n must not delete: %d chats", len(chats))
	}
	d.key(char('d'))
	d.idle()
	d.key(char('y'))
	d.idle()
	chats, _ := r.op.Chats()
	if len(chats) != 1 || chats[0].Title != "second question" {
		t.Fatalf("chats after delete %+v", chats)
	}
	if v := d.view(); strings.Contains(v, "first question") || !strings.Contains(v, "second question") {
		t.Fatalf("the list must drop the deleted chat:\n%s", v)
	}
	d.key(keyEsc)
	if v := d.view(); !strings.Contains(v, "new chat") || strings.Contains(v, "answer to first") {
		t.Fatalf("deleting the chat on screen must leave a new one:\n%s", v)
	}
}

func TestCtrlPStartsAPrivateChat(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("kept in memory only")))
	d := newDriver(t, r.options(), 80, 24)
	if v := d.view(); strings.Contains(v, "PRIVATE") {
		t.Fatalf("a normal chat shows PRIVATE:\n%s", v)
	}
	d.key(ctrl('p'))
	v := d.view()
	lines := strings.Split(v, "\n")
	if !strings.Contains(lines[0], "PRIVATE") || !strings.Contains(lines[len(lines)-1], "PRIVATE") {
		t.Fatalf("header and status bar must show PRIVATE:\n%s", v)
	}
	d.ask("secret stuff")
	chats, _ := r.op.Chats()
	if len(chats) != 1 || !chats[0].Private {
		t.Fatalf("the chat must be private: %+v", chats)
	}
	d.key(ctrl('o'))
	d.idle()
	if v := d.view(); !strings.Contains(v, "[private]") {
		t.Fatalf("the list must mark private chats:\n%s", v)
	}

	// Options.Private starts there.
	opts := r.options()
	opts.Private = true
	d2 := newDriver(t, opts, 80, 24)
	if v := d2.view(); !strings.Contains(strings.Split(v, "\n")[0], "PRIVATE") {
		t.Fatalf("Options.Private must start a private chat:\n%s", v)
	}
}

func TestModelMissingOffersAPullThenRetries(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("now it works")), hubModel) // the spoke's model is missing
	d := newDriver(t, r.options(), 80, 24)
	d.ask("hello?")
	v := d.view()
	if !strings.Contains(v, "model spoke-model is not installed.") {
		t.Fatalf("no pull dialog:\n%s", v)
	}
	d.arm()
	d.key(char('y'))
	d.idle()
	v = d.view()
	if !strings.Contains(v, "now it works") || strings.Contains(v, "pull it now") {
		t.Fatalf("after the pull the turn must be retried:\n%s", v)
	}
	if !strings.Contains(v, "pulled spoke-model") {
		t.Errorf("no notice of the pull:\n%s", v)
	}
	chats, _ := r.op.Chats()
	turns, _ := r.op.Turns(chats[0].ID)
	if len(turns) != 1 || turns[0].Status != memory.StatusOK {
		t.Fatalf("turns %+v", turns)
	}
}

func TestModelMissingDialogNClosesIt(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")), hubModel)
	d := newDriver(t, r.options(), 80, 24)
	d.ask("hello?")
	d.arm()
	d.key(char('n'))
	d.idle()
	v := d.view()
	if strings.Contains(v, "pull it now") || !strings.Contains(v, "✗ failed") || !strings.Contains(v, "ctrl+r retries") {
		t.Fatalf("n must close the dialog and leave a retryable failed turn:\n%s", v)
	}
}

func TestOllamaUnreachableIsShownInTheChat(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t))
	dead := httptest.NewServer(nil)
	host := dead.URL
	dead.Close()
	r := newRigAt(t, srv, host)
	d := newDriver(t, r.options(), 100, 30)
	d.ask("anyone there?")
	v := d.view()
	if !strings.Contains(v, "Ollama is not reachable") || !strings.Contains(v, "✗ failed") {
		t.Fatalf("the unreachable error must be an error turn:\n%s", v)
	}
	if !strings.Contains(v, "ollama down") {
		t.Fatalf("status bar must say ollama is down:\n%s", v)
	}
}

func TestCtrlCQuitsAndCancelsTheTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Reply{Chunks: []string{"working on it"}, Hang: true}))
	d := newDriver(t, r.options(), 80, 24)
	d.typeText("slow")
	d.key(keyEnter)
	d.until("working on it")

	_, cmd := d.m.Update(ctrl('c'))
	if cmd == nil {
		t.Fatal("ctrl+c returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c must return tea.Quit")
	}
	d.quit = true
	if !d.model().w.shutdown(10 * time.Second) {
		t.Fatal("the running turn did not end after ctrl+c")
	}
	chats, _ := r.op.Chats()
	turns, _ := r.op.Turns(chats[0].ID)
	if len(turns) != 1 || turns[0].Status != memory.StatusCancelled {
		t.Fatalf("ctrl+c must cancel the turn: %+v", turns)
	}
}

func TestNewlineKeysAndHelp(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	d := newDriver(t, r.options(), 80, 24)
	d.key(char('?'))
	if v := d.view(); !strings.Contains(v, "Keys") || !strings.Contains(v, "new private chat") {
		t.Fatalf("? on an empty input opens help:\n%s", v)
	}
	d.key(keyEsc)
	d.typeText("a")
	d.key(keyAltEnter)
	d.typeText("b")
	d.key(keyShiftEnt)
	d.typeText("c")
	d.key(ctrl('j'))
	d.typeText("d?")
	if got := d.model().input.value(); got != "a\nb\nc\nd?" {
		t.Fatalf("input %q", got)
	}
	if v := d.view(); strings.Contains(v, "Keys") {
		t.Fatalf("? while typing must insert, not open help:\n%s", v)
	}
	if n := len(r.srv.Requests()); n != 0 {
		t.Fatalf("newline keys sent something (%d requests)", n)
	}
}

func TestThinkingIsCollapsedAndToggles(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Reply{Thinking: []string{"pondering ", "deeply"}, Chunks: []string{"42"}}))
	d := newDriver(t, r.options(), 80, 24)
	d.ask("meaning of life")
	v := d.view()
	if !strings.Contains(v, "▸ thinking… 16 chars") || strings.Contains(v, "pondering deeply") {
		t.Fatalf("thinking must be one collapsed line:\n%s", v)
	}
	d.key(ctrl('t'))
	if v := d.view(); !strings.Contains(v, "pondering deeply") {
		t.Fatalf("ctrl+t must expand the thinking:\n%s", v)
	}
}

func TestResumeChatOpensIt(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("an earlier answer")))
	c, _ := r.op.NewChat(false)
	if _, err := r.op.Ask(quietCtx(t), c.ID, "an earlier question", nil); err != nil {
		t.Fatal(err)
	}
	opts := r.options()
	opts.ResumeChat = c.ID
	d := newDriver(t, opts, 80, 24)
	v := d.view()
	if !strings.Contains(v, "an earlier question") || !strings.Contains(v, "an earlier answer") {
		t.Fatalf("resume must show the chat:\n%s", v)
	}
}

func TestScrollLeavesAndReturnsToTheBottom(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("line of text\n\n", 40) + "THE END"
	r := newRig(t, replies(ollamatest.Text(long)))
	d := newDriver(t, r.options(), 80, 24)
	d.ask("long please")
	if v := d.view(); !strings.Contains(v, "THE END") {
		t.Fatalf("the view must stick to the bottom:\n%s", v)
	}
	d.key(keyPgUp)
	d.key(keyPgUp)
	if v := d.view(); strings.Contains(v, "THE END") {
		t.Fatalf("pgup must scroll up:\n%s", v)
	}
	d.send(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	for range 10 {
		d.key(keyPgDown)
	}
	if v := d.view(); !strings.Contains(v, "THE END") {
		t.Fatalf("pgdown must scroll back:\n%s", v)
	}
}

func TestResumingAnUnknownChatLeavesANewOne(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("fresh answer")))
	opts := r.options()
	opts.ResumeChat = "no-such-chat"
	d := newDriver(t, opts, 80, 24)
	if v := d.view(); !strings.Contains(v, "could not open chat no-such-chat") {
		t.Fatalf("no error shown:\n%s", v)
	}
	d.ask("hello")
	if v := d.view(); !strings.Contains(v, "fresh answer") {
		t.Fatalf("a new chat must work after a failed resume:\n%s", v)
	}
}

// TestStillAnsweringNoticeEndsWithTheTurn: the notice that refused a
// second send while a turn ran goes when the turn ends; while it runs,
// the live line says how long it has run and what the model wrote.
func TestStillAnsweringNoticeEndsWithTheTurn(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Reply{Chunks: []string{"first ", "part ", "done"}, Delay: 400 * time.Millisecond}))
	d := newDriver(t, r.options(), 100, 24)
	d.typeText("slow one")
	d.key(keyEnter)
	d.until("first")
	if v := d.view(); !regexp.MustCompile(`answering… \d+\.\ds · \d+ tokens? · esc cancels`).MatchString(v) {
		t.Errorf("the live line lacks the elapsed time and tokens:\n%s", v)
	}
	d.typeText("next")
	d.key(keyEnter)
	if v := d.view(); !strings.Contains(v, "still answering") {
		t.Fatalf("no notice that enter waits:\n%s", v)
	}
	d.until("first part done")
	d.idle()
	v := d.view()
	if strings.Contains(v, "still answering") {
		t.Errorf("the notice outlived the turn:\n%s", v)
	}
	if !regexp.MustCompile(`◆ the assistant · \d\d:\d\d · \d+\.\ds · \d+ tokens`).MatchString(v) {
		t.Errorf("the finished turn lacks its time, duration and tokens:\n%s", v)
	}
	if got := d.model().input.value(); got != "next" {
		t.Errorf("input %q, want the words kept", got)
	}
}

// TestTabIndentsInTheInput: tab is not dropped — it indents the message
// (four spaces, as a pasted tab becomes), and the text sent carries it.
func TestTabIndentsInTheInput(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("ok")))
	d := newDriver(t, r.options(), 80, 24)
	d.typeText("def f():")
	d.key(keyAltEnter)
	d.key(keyTab)
	d.typeText("return 1")
	if got := d.model().input.value(); got != "def f():\n    return 1" {
		t.Fatalf("input %q", got)
	}
	d.key(keyEnter)
	d.until("◆ the assistant ·")
	d.idle()
	chats, _ := r.op.Chats()
	turns, _ := r.op.Turns(chats[0].ID)
	if len(turns) != 1 || turns[0].Query != "def f():\n    return 1" {
		t.Fatalf("hub logged %+v", turns)
	}
}

// TestMouseCaptureIsAChoice: the mouse is not captured unless asked
// (ui.mouse), so the terminal selects text as anywhere else; f2 switches
// it and says what each way means.
func TestMouseCaptureIsAChoice(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("ok")))
	d := newDriver(t, r.options(), 80, 24)
	if mm := d.m.View().MouseMode; mm != tea.MouseModeNone {
		t.Fatalf("mouse mode %v at start, want none", mm)
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyF2})
	if mm := d.m.View().MouseMode; mm != tea.MouseModeCellMotion || !strings.Contains(d.view(), "mouse on: the wheel scrolls") {
		t.Fatalf("after f2: mouse mode %v\n%s", mm, d.view())
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyF2})
	if mm := d.m.View().MouseMode; mm != tea.MouseModeNone || !strings.Contains(d.view(), "mouse off: select text as usual") {
		t.Fatalf("after f2 twice: mouse mode %v\n%s", mm, d.view())
	}
	opts := r.options()
	opts.Mouse = true
	if mm := newDriver(t, opts, 80, 24).m.View().MouseMode; mm != tea.MouseModeCellMotion {
		t.Fatalf("ui.mouse on: mouse mode %v", mm)
	}
}

// TestVanillaSaysWhatItIs: under --vanilla the first screen explains the
// mode, and the permission manager and the memory screen say what it
// means for what they show.
func TestVanillaSaysWhatItIs(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("ok")))
	opts := r.options()
	opts.Vanilla = true
	opts.Broker, opts.DataDir = seededBroker(t), t.TempDir()
	d := newDriver(t, opts, 100, 30)
	v := strings.Join(strings.Fields(d.view()), " ")
	for _, want := range []string{"UNSAFE: vanilla", "--vanilla is the baseline for comparison", "nothing is isolated and nothing is asked"} {
		if !strings.Contains(v, want) {
			t.Errorf("first screen lacks %q:\n%s", want, d.view())
		}
	}
	d.key(ctrl('g'))
	d.idle()
	if v := strings.Join(strings.Fields(d.view()), " "); !strings.Contains(v, "UNSAFE: vanilla nothing is asked in this mode") {
		t.Errorf("the manager does not say it:\n%s", d.view())
	}
	d.key(keyEsc)
	d.key(ctrl('e'))
	d.idle()
	if v := strings.Join(strings.Fields(d.view()), " "); !strings.Contains(v, "UNSAFE: vanilla one model with every app writes here") {
		t.Errorf("the memory screen does not say it:\n%s", d.view())
	}

	// Without --vanilla none of it shows.
	plain := newDriver(t, r.options(), 100, 30)
	if strings.Contains(plain.view(), "vanilla") {
		t.Errorf("vanilla named without --vanilla:\n%s", plain.view())
	}
}

// countingBackend is a test Backend that reports background model calls.
type countingBackend struct {
	Backend
	n int64
}

func (c countingBackend) BackgroundCalls() int64 { return c.n }

// TestStatusBarSaysWhenMemoryWasUpdated: the status bar says the memory
// upkeep made model calls only when its count grew since the check
// before — not a running total, not at the first check, and never in a
// private chat, which leaves nothing there.
func TestStatusBarSaysWhenMemoryWasUpdated(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("ok")))
	opts := r.options()
	opts.Backend = countingBackend{Backend: opts.Backend, n: 3}
	d := newDriver(t, opts, 120, 24)
	d.idle()
	if strings.Contains(d.view(), "memory") {
		t.Fatalf("the first check is a baseline, yet:\n%s", d.view())
	}
	d.send(healthMsg{background: 5})
	if !strings.Contains(d.view(), "↻ memory updated") {
		t.Fatalf("the count grew: the bar must say so:\n%s", d.view())
	}
	d.send(healthMsg{background: 5})
	if strings.Contains(d.view(), "memory updated") {
		t.Fatalf("no call since the last check, yet:\n%s", d.view())
	}
	d.key(ctrl('p'))
	d.idle()
	d.send(healthMsg{background: 9})
	if v := d.view(); !strings.Contains(v, "PRIVATE") || strings.Contains(v, "memory updated") {
		t.Fatalf("a private chat says nothing of the memory upkeep:\n%s", v)
	}
}

// The chats list is a bubbles list: / filters it by title (enter keeps
// the filter, and enter then opens the one chat that matches), esc drops
// the filter before it closes the list.
func TestChatListFilters(t *testing.T) {
	t.Parallel()
	r := newRig(t, func(req *api.ChatRequest) ollamatest.Reply {
		return ollamatest.Text("answer to " + req.Messages[len(req.Messages)-1].Content)
	})
	d := newDriver(t, r.options(), 80, 24)
	d.ask("lisbon trip ideas")
	d.key(ctrl('n'))
	d.ask("groceries for the week")
	d.key(ctrl('o'))
	d.idle()
	d.key(char('/'))
	d.typeText("lisb")
	d.key(keyEnter) // keep the filter
	d.idle()
	v := d.view()
	if shown := d.model().list.Visible(); len(shown) != 1 || shown[0].Title != "lisbon trip ideas" ||
		!strings.Contains(v, "filter: lisb · esc clears it") || d.model().overlay != overlayChats {
		t.Fatalf("/lisb must keep only the Lisbon chat, and say so:\n%s", v)
	}
	// A reload (a chat added or deleted elsewhere) keeps the filter's match.
	d.exec(d.model().list.Reload())
	d.idle()
	if shown := d.model().list.Visible(); len(shown) != 1 {
		t.Fatalf("a reload with a kept filter must show its match, not %d chats:\n%s", len(shown), d.view())
	}
	d.key(keyEsc) // drops the filter, the list stays
	if n := len(d.model().list.Visible()); n != 2 || d.model().overlay != overlayChats {
		t.Fatalf("esc must drop the filter first:\n%s", v)
	}
	d.key(char('/'))
	d.typeText("groc")
	d.key(keyEnter)
	d.key(keyEnter) // opens the one match
	d.idle()
	if v := d.view(); d.model().overlay != overlayNone || !strings.Contains(v, "answer to groceries for the week") {
		t.Fatalf("enter must open the chat the filter kept:\n%s", v)
	}
}

// warmingBackend is a test Backend that records the chats it is asked to
// read ahead (serve.Client.Warm).
type warmingBackend struct {
	Backend
	mu     *sync.Mutex
	warmed *[]string
}

func (w warmingBackend) Warm(chat string) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	*w.warmed = append(*w.warmed, chat)
	return nil
}

// As the chat view opens — on a new chat, and on a chat opened from the
// list — the planner's prompt of its next request is read ahead, while
// the person reads and types.
func TestAnOpenedChatIsReadAhead(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("ok")))
	opts := r.options()
	var mu sync.Mutex
	var warmed []string
	opts.Backend = warmingBackend{Backend: opts.Backend, mu: &mu, warmed: &warmed}
	d := newDriver(t, opts, 120, 24)
	d.idle()
	mu.Lock()
	got := slices.Clone(warmed)
	mu.Unlock()
	if !slices.Equal(got, []string{""}) {
		t.Fatalf("a new chat's view opened: read ahead %q, want the new chat's prompt once", got)
	}
	d.ask("lisbon trip ideas")
	id := d.model().chat.Chat.ID
	d.key(ctrl('n'))
	d.idle()
	mu.Lock()
	got = slices.Clone(warmed)
	mu.Unlock()
	if len(got) < 2 || got[len(got)-1] != "" {
		t.Fatalf("ctrl+n: read ahead %q, want the new chat's prompt last", got)
	}
	d.exec(loadChat(d.model().b, id))
	d.idle()
	mu.Lock()
	got = slices.Clone(warmed)
	mu.Unlock()
	if !slices.Contains(got, id) {
		t.Fatalf("a chat opened: read ahead %q, want %q among them", got, id)
	}
}
