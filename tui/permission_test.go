package tui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/permission"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// The mail case study with no rules: every dialog is put to the user, who
// allows mail to run and denies the injected drive request, send and
// delete, each a different way.
func TestPermissionDialogsOnTheMailInjection(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible())
	d := newDriver(t, r.options(), 100, 30)
	d.typeText(mailQuery)
	d.key(keyEnter)

	d.until("Run mail?")
	v := d.view()
	for _, want := range []string{"exec · hub → mail · mail.search", "query " + mailQuery, "← typed by you", "✓ expected by the plan", "o allow once",
		"s allow for this session", "p allow permanently", "n deny with a note", "typing goes to your message"} {
		if !strings.Contains(v, want) {
			t.Errorf("exec dialog lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "⚠") {
		t.Errorf("a routine exec dialog is calm, no ⚠:\n%s", v)
	}
	// Typing in the chat as the dialog opens goes to the input box, never
	// to the dialog, and is never lost.
	d.key(char('o'))
	d.key(keyEsc)
	if v := d.view(); !strings.Contains(v, "Run mail?") || r.prompter.Pending() != 1 {
		t.Fatalf("a key in the grace period answered the dialog:\n%s", v)
	}
	if got := d.model().input.value(); got != "o" {
		t.Fatalf("keys typed while the dialog waits must reach the input: %q", got)
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyBackspace})
	d.graceOver()
	if v := d.view(); strings.Contains(v, "typing goes to") || !strings.Contains(v, "answering now") {
		t.Fatalf("the dialog must say it takes answers now:\n%s", v)
	}
	d.key(char('o'))

	// The injected drive request: denied with d.
	d.until("mail asks drive for drive.search")
	if v := d.view(); !strings.Contains(v, "NOT expected by the plan") || !strings.Contains(v, "query Q3 financial report") {
		t.Errorf("collab dialog:\n%s", v)
	}
	d.graceOver()
	d.key(char('d'))

	// send: no permanent; p is typing, not an answer; n with a note denies.
	d.until("mail → send · to " + demo.AttackerAddress)
	v = d.view()
	for _, want := range []string{"▸ to", demo.AttackerAddress + "  ← from mail.read", "⚠ NOT expected by the plan", "cannot be undone", "o allow once", "d deny"} {
		if !strings.Contains(v, want) {
			t.Errorf("send dialog lacks %q:\n%s", want, v)
		}
	}
	for _, bad := range []string{"p allow permanently", "s allow for this session"} {
		if strings.Contains(v, bad) {
			t.Errorf("send dialog offers %q:\n%s", bad, v)
		}
	}
	d.graceOver()
	d.key(char('p'))
	if v := d.view(); !strings.Contains(v, "mail → send") || r.prompter.Pending() != 1 {
		t.Fatalf("p answered an irreversible request:\n%s", v)
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyBackspace}) // p went to the input
	d.graceOver()
	d.key(char('n'))
	d.typeText("not that addres")
	d.key(keyEsc) // back to the answers, the note kept for later
	if v := d.view(); !strings.Contains(v, "n deny with a note") {
		t.Fatalf("esc in the note must go back to the answers:\n%s", v)
	}
	d.key(char('n'))
	d.typeText("not that address")
	if v := d.view(); !strings.Contains(v, "not that address") || !strings.Contains(v, "enter denies with it") {
		t.Fatalf("note input:\n%s", v)
	}
	d.key(keyEnter)

	// delete: esc denies.
	d.until("mail → delete")
	d.graceOver()
	d.key(keyEsc)
	d.idle()

	var got []string
	for _, e := range r.decisions(t) {
		got = append(got, fmt.Sprintf("%s %s %s %s %s %q", e.Request.Kind, e.Request.Subject, e.Request.Function, e.Decision.Answer, e.Decision.Source, e.Decision.Note))
	}
	want := []string{
		`exec hub mail.search once user ""`,
		`collab mail drive.search deny user ""`,
		`irreversible mail send deny user "not that address"`,
		`irreversible mail delete deny user ""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the broker logged\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if len(d.raw) != 3 {
		t.Errorf("want one bell per risky dialog (collab, send, delete: 3), none for the routine exec; rang %d", len(d.raw))
	}

	// The turn keeps its activity once it has ended.
	v = d.view()
	for _, want := range []string{
		`▸ mail.read {"id":"e1"} ✓`,
		"⚑ irreversible mail.send → denied (user): “not that address”",
		`▸ mail.send {"body":`,
		"✗ the user did not allow send",
		"⚑ irreversible mail.delete → denied (user)",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("finished turn lacks %q:\n%s", want, v)
		}
	}
}

// A cancelled request closes its own dialog; Prompt returns ctx's error.
func TestPromptCancelledClosesTheDialog(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := r.options()
	p := NewPrompter()
	opts.Prompter = p
	d := newDriver(t, opts, 80, 24)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := p.Prompt(ctx, execRequest)
		errc <- err
	}()
	d.until("Run mail?")
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Prompt returned %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Prompt did not return when its ctx ended")
	}
	d.untilGone("Run mail?")
	if v := d.view(); !strings.Contains(v, "withdrawn") {
		t.Errorf("no notice that the request went away:\n%s", v)
	}
	if d.model().overlay != overlayNone || p.Pending() != 0 {
		t.Fatalf("overlay %v, %d pending", d.model().overlay, p.Pending())
	}
	// A key now goes to the chat, not to a dialog that is gone.
	d.key(char('o'))
	if got := d.model().input.value(); got != "o" {
		t.Fatalf("input %q", got)
	}
	d.idle()
}

// Requests queue in arrival order; the status bar counts those waiting.
func TestPromptsQueueAndTheStatusBarCountsThem(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := r.options()
	p := NewPrompter()
	opts.Prompter = p
	d := newDriver(t, opts, 100, 30)
	d.key(char('?')) // a dialog under the permission dialog comes back after it

	type answer struct {
		d   permissions.Decision
		err error
	}
	first, second := make(chan answer, 1), make(chan answer, 1)
	ask := func(req permissions.Request, out chan<- answer) {
		dec, err := p.Prompt(context.Background(), req)
		out <- answer{dec, err}
	}
	go ask(execRequest, first)
	d.until("Run mail?")
	if v := d.view(); strings.Contains(v, "waiting") {
		t.Fatalf("one request is not a queue:\n%s", v)
	}
	data := permissions.Request{Kind: permissions.KindData, Subject: "hub", Object: "travel_mate", Function: "travel.plan_trip",
		Args: json.RawMessage(`{"health.diagnose":{"assessment":"migraine"}}`), Detail: "Share the results of earlier steps with travel_mate",
		Warning: "expected by the plan; carries medical data, which travel_mate is not cleared for"}
	go ask(data, second)
	d.until("⚑ 1 waiting")
	if v := d.view(); !strings.Contains(v, "Run mail?") || strings.Contains(v, "Share data with") {
		t.Fatalf("the first request must stay on screen:\n%s", v)
	}
	d.graceOver()
	d.key(char('s'))
	d.key(keyEnter) // the caveat step: no limits
	a := <-first
	if a.err != nil || a.d.Answer != permissions.AnswerSession {
		t.Fatalf("first answer %+v", a)
	}
	d.until("Share data with travel_mate?")
	v := d.view()
	if strings.Contains(v, "waiting") || !strings.Contains(v, "typing goes to your message") || !strings.Contains(v, "health.diagnose.assessment") || !strings.Contains(v, "migraine") {
		t.Fatalf("the second dialog must open with its own grace period:\n%s", v)
	}
	if !strings.Contains(v, "⚠ expected by the plan; carries medical data") {
		t.Errorf("no warning:\n%s", v)
	}
	d.key(char('d')) // in its grace period: typing, it goes to the input
	if got := d.model().input.value(); got != "d" {
		t.Fatalf("a key in the grace period must reach the input: %q", got)
	}
	d.graceOver()
	d.key(char('d'))
	a = <-second
	if a.err != nil || a.d.Answer != permissions.AnswerDeny {
		t.Fatalf("second answer %+v", a)
	}
	d.idle()
	if m := d.model(); m.overlay != overlayHelp || m.perm != nil {
		t.Fatalf("after the dialogs the help overlay must be back, overlay %v:\n%s", m.overlay, d.view())
	}
}

// The first answer wins; a late one finds nothing to answer.
func TestPrompterFirstAnswerWins(t *testing.T) {
	t.Parallel()
	p := NewPrompter()
	got := make(chan permissions.Decision, 1)
	go func() {
		dec, _ := p.Prompt(context.Background(), execRequest)
		got <- dec
	}()
	msg := p.Wait(0, nil)().(permission.Queue)
	if len(msg.Asks) != 1 {
		t.Fatalf("snapshot %+v", msg)
	}
	id := msg.Asks[0].ID
	if !p.Answer(id, permissions.Decision{Answer: permissions.AnswerOnce}) {
		t.Fatal("first answer refused")
	}
	if p.Answer(id, permissions.Decision{Answer: permissions.AnswerDeny}) {
		t.Fatal("a second answer was taken")
	}
	if dec := <-got; dec.Answer != permissions.AnswerOnce {
		t.Fatalf("Prompt returned %+v", dec)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Prompt(ctx, execRequest); !errors.Is(err, context.Canceled) || p.Pending() != 0 {
		t.Fatalf("a Prompt with a dead ctx must return at once: %v, %d pending", err, p.Pending())
	}
}

// Long arguments scroll; what does not fit is counted, never dropped.
func TestDialogArgumentsScroll(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies(ollamatest.Text("x")))
	opts := r.options()
	p := NewPrompter()
	opts.Prompter = p
	d := newDriver(t, opts, 80, 24)
	var lines []string
	for i := range 40 {
		lines = append(lines, fmt.Sprintf(`"line%02d": %d`, i, i))
	}
	req := permissions.Request{Kind: permissions.KindIrreversible, Subject: "files", Object: "files", Function: "write",
		Args: json.RawMessage("{" + strings.Join(lines, ",") + "}"), Detail: "files wants to write", Warning: "expected by the plan; cannot be undone",
		Irreversible: true, Expected: true, Concerns: []permissions.Concern{permissions.ConcernIrreversible}}
	got := make(chan permissions.Decision, 1)
	go func() { dec, _ := p.Prompt(context.Background(), req); got <- dec }()
	d.until("files wants to write")
	v := d.view()
	if !strings.Contains(v, "line00 0") || strings.Contains(v, "line39") || !strings.Contains(v, " more") {
		t.Fatalf("long arguments must show their start and say there is more:\n%s", v)
	}
	d.key(keyDown)
	d.key(keyDown)
	if v := d.view(); strings.Contains(v, "line00 0") || !strings.Contains(v, "↑ 2 above") {
		t.Fatalf("↓ must scroll one line:\n%s", v)
	}
	for range 20 {
		d.key(keyPgDown)
	}
	v = d.view()
	if !strings.Contains(v, "line39 39") || strings.Contains(v, " more ·") {
		t.Fatalf("pgdown must reach the end:\n%s", v)
	}
	// The plan's reason is drawn calm, the concern after it with ⚠.
	if !strings.Contains(v, "✓ expected by the plan") || !strings.Contains(v, "⚠ cannot be undone") || strings.Contains(v, "⚠ expected") {
		t.Fatalf("the warning must stay in view while scrolling, the mark on its concern only:\n%s", v)
	}
	d.key(keyPgUp)
	if v := d.view(); strings.Contains(v, "line39 39") {
		t.Fatalf("pgup must scroll back:\n%s", v)
	}
	d.graceOver()
	d.key(char('o'))
	d.key(keyEnter)
	recvDecision(t, got)
	d.idle()
}

// The hub's warning is red when the request was not expected or cannot
// be undone, amber for the other concerns; a routine request is calm.
// It shows even on a small screen.
func TestDialogWarningColour(t *testing.T) {
	t.Parallel()
	th := style.New(true)
	for _, c := range []struct {
		warning  string
		expected bool
		concerns []permissions.Concern
		irr      bool
		style    string // red, amber or calm
	}{
		{"NOT expected by the plan", false, []permissions.Concern{permissions.ConcernUnexpected}, false, "red"},
		{"expected by the plan; cannot be undone", true, []permissions.Concern{permissions.ConcernIrreversible}, true, "red"},
		{"expected by the plan; instruction-like content (addresses the assistant)", true, []permissions.Concern{permissions.ConcernInstructions}, false, "amber"},
		{"expected by the plan: step s1 uses mail.search", true, nil, false, "calm"},
	} {
		req := execRequest
		req.Warning, req.Expected, req.Concerns, req.Irreversible = c.warning, c.expected, c.concerns, c.irr
		p, _ := permission.New(permission.Ask{ID: 1, Req: req}, permission.Config{Theme: th})
		for _, size := range [][2]int{{80, 23}, {40, 9}} {
			out := p.View(th, size[0], size[1])
			sgr := func(st func(...string) string, lead string) string {
				return strings.Split(st(lead), lead)[0] + lead + " "
			}
			red := strings.Contains(out, sgr(th.Err.Render, "⚠"))
			amber := strings.Contains(out, sgr(th.Warn.Render, "⚠"))
			calm := strings.Contains(out, sgr(th.Dim.Render, "✓")) && !strings.Contains(ansi.Strip(out), "⚠")
			if red != (c.style == "red") || amber != (c.style == "amber") || calm != (c.style == "calm") {
				t.Errorf("%q at %v: red %v, amber %v, calm %v, want %s:\n%s", c.warning, size, red, amber, calm, c.style, out)
			}
		}
	}
}

// The broker hands the Prompter one request at a time; the status bar
// still counts those it queues, from the turn's permission events.
func TestRequestsTheBrokerQueuesAreCounted(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible()) // no rules: both ride apps ask to run
	d := newDriver(t, r.options(), 100, 30)
	d.typeText(ridesQuery)
	d.key(keyEnter)
	d.until("Run ")
	d.until("⚑ 1 waiting")
	if v := d.view(); !strings.Contains(v, "Run metro_hail?") && !strings.Contains(v, "Run quick_ride?") {
		t.Fatalf("no exec dialog:\n%s", v)
	}
	if n := r.prompter.Pending(); n != 1 {
		t.Fatalf("the Prompter holds %d requests, want the one showing", n)
	}
	d.graceOver()
	d.key(char('o'))
	d.untilGone("⚑ 1 waiting")
	d.until("Run ")
	d.graceOver()
	d.key(char('o'))
	d.idle()
	if len(d.raw) != 0 {
		t.Errorf("routine exec dialogs ring no bell, rang %d", len(d.raw))
	}
	if v := d.view(); !strings.Contains(v, "Results") || strings.Contains(v, "waiting") {
		t.Fatalf("after both answers:\n%s", v)
	}
}

// ctrl+c while a dialog is open quits: shutdown cancels the turn, so the
// request leaves the Prompter and the broker logs it unanswered; a turn
// that ended with a request undecided does not claim it is still asking.
func TestQuitWithADialogOpen(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible())
	d := newDriver(t, r.options(), 100, 30)
	d.typeText(mailQuery)
	d.key(keyEnter)
	d.until("Run mail?")
	_, cmd := d.m.Update(ctrl('c'))
	if cmd == nil {
		t.Fatal("ctrl+c returned no command")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Fatal("ctrl+c must quit while a dialog is open")
	}
	d.quit = true
	if !d.model().w.shutdown(10 * time.Second) {
		t.Fatal("the turn did not end")
	}
	if n := r.prompter.Pending(); n != 0 {
		t.Fatalf("%d requests still pending", n)
	}
	// The broker logs it when Prompt returns, which may be after the turn.
	logged := r.decisions(t)
	for end := time.Now().Add(5 * time.Second); len(logged) == 0 && time.Now().Before(end); logged = r.decisions(t) {
		time.Sleep(10 * time.Millisecond)
	}
	if len(logged) != 1 || logged[0].Decision.Allowed || !strings.Contains(logged[0].Decision.Note, "not answered") {
		t.Fatalf("the broker logged %+v", logged)
	}
}

// A choice among apps is one dialog with every candidate: a digit (or
// ←/→) picks one, and the allow chooses it; the activity line names the
// app chosen.
func TestSelectDialogShowsEveryCandidate(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible(), allowExec)
	d := newDriver(t, r.options(), 110, 32)
	d.typeText("What is the fare from the airport to downtown?")
	d.key(keyEnter)
	d.until("Which app for ride.estimate_fare? metro_hail or quick_ride")
	if v := d.view(); !strings.Contains(v, "▸ 1. metro_hail") || !strings.Contains(v, "2. quick_ride") {
		t.Fatalf("every candidate must be shown, the first under the cursor:\n%s", v)
	}
	// The plan's reason is calm; the choice left to the user is the concern.
	if v := d.view(); !strings.Contains(v, "✓ expected by the plan: step s1 needs ride.estimate_fare") || !strings.Contains(v, "⚠ the plan leaves the choice among metro_hail,") {
		t.Fatalf("the judgement must mark the choice, not the plan's reason:\n%s", v)
	}
	d.graceOver()
	// The candidates are a huh select: tab and ←/→ move its cursor.
	d.key(keyTab)
	if v := d.view(); !strings.Contains(v, "▸ 2. quick_ride") || d.model().perm.Pick() != 1 {
		t.Fatalf("tab must move to the second candidate:\n%s", v)
	}
	d.key(tea.KeyPressMsg{Code: tea.KeyLeft})
	if v := d.view(); !strings.Contains(v, "▸ 1. metro_hail") || d.model().perm.Pick() != 0 {
		t.Fatalf("← must move back:\n%s", v)
	}
	d.key(char('2'))
	d.key(char('o'))
	d.key(keyEnter)
	d.idle()
	var choice string
	for _, e := range r.decisions(t) {
		if e.Request.Kind == permissions.KindSelect {
			choice = e.Decision.Choice
		}
	}
	if choice != "quick_ride" {
		t.Fatalf("the chosen app: %q", choice)
	}
	if v := d.view(); !strings.Contains(v, "quick_ride, allowed once (user)") {
		t.Fatalf("the activity must name the app chosen:\n%s", v)
	}
}

// A request of a chat resumed in another folder than it began in says
// both folders, in every size the dialog takes, whatever else it says.
func TestTheDialogNamesBothFolders(t *testing.T) {
	th := style.New(true)
	req := execRequest
	req.Folder, req.ChatFolder = "/home/u/projB", "/home/u/projA"
	p, _ := permission.New(permission.Ask{ID: 1, Req: req}, permission.Config{Theme: th})
	for _, size := range [][2]int{{120, 40}, {80, 23}, {60, 14}} {
		out := ansi.Strip(p.View(th, size[0], size[1]))
		flat := strings.Join(strings.Fields(strings.NewReplacer("│", " ", "⚠", " ").Replace(out)), " ")
		if !strings.Contains(flat, "The apps work in /home/u/projB now; this chat was started in /home/u/projA.") {
			t.Errorf("at %v the dialog does not name both folders:\n%s", size, out)
		}
	}
	req.Folder, req.ChatFolder = "", ""
	p, _ = permission.New(permission.Ask{ID: 1, Req: req}, permission.Config{Theme: th})
	if out := ansi.Strip(p.View(th, 80, 23)); strings.Contains(out, "was started in") {
		t.Errorf("a chat in its own folder names another:\n%s", out)
	}
}

// A write's dialog shows the change as a diff — removed lines −, added
// lines +, the lines around them — in place of the new content's value;
// a long change scrolls with the values.
func TestTheWriteDialogShowsADiff(t *testing.T) {
	th := style.New(true)
	req := execRequest
	req.Function, req.Args = "write", json.RawMessage(`{"path":"notes.txt","content":"alpha\nBETA\ngamma\nCONTENT-VALUE-MARK\n"}`)
	req.Change = &permissions.Change{Path: "notes.txt", Exists: true, Removed: 1, Added: 2, Field: "content", Lines: []permissions.ChangeLine{
		{Op: "@", Text: "from line 1"}, {Op: " ", Text: "alpha"}, {Op: "-", Text: "beta"}, {Op: "+", Text: "BETA"}, {Op: " ", Text: "gamma"}, {Op: "+", Text: "epsilon"},
	}}
	for i := range 40 {
		req.Change.Lines = append(req.Change.Lines, permissions.ChangeLine{Op: "+", Text: fmt.Sprintf("added line %d", i)})
	}
	p, _ := permission.New(permission.Ask{ID: 1, Req: req}, permission.Config{Theme: th})
	out := ansi.Strip(p.View(th, 80, 30))
	for _, want := range []string{"change · notes.txt: 1 line removed, 2 added", "− beta", "+ BETA", "  alpha", "⋯ from line 1", "↓"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "CONTENT-VALUE-MARK") {
		t.Errorf("the new content is shown as a value beside its diff:\n%s", out)
	}
	// Scrolled to the end, the last added line shows.
	for range 60 {
		p.Update(tea.KeyPressMsg{Code: tea.KeyDown})
	}
	if out := ansi.Strip(p.View(th, 80, 30)); !strings.Contains(out, "+ added line 39") {
		t.Errorf("scrolled down, the change's last line does not show:\n%s", out)
	}
}
