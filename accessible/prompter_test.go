package accessible

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// clock is the input's clock in these tests: it moves only when a line
// is typed.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// ask puts r to a dialog and types in as a person does: each line once
// the dialog waits for it, a second after its question.
func ask(t *testing.T, r permissions.Request, in string) (permissions.Decision, string, *Lines) {
	t.Helper()
	return askTyped(t, r, "", in)
}

// askTyped is ask with ahead typed before the dialog opens (as a request
// typed while the turn runs), then in line by line as the questions come.
func askTyped(t *testing.T, r permissions.Request, ahead, in string) (permissions.Decision, string, *Lines) {
	t.Helper()
	pr, pw := io.Pipe()
	lines := NewLines(pr)
	c := &clock{t: time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)}
	lines.now = c.now
	if ahead != "" {
		lines.mu.Lock()
		lines.start()
		lines.mu.Unlock()
		if _, err := io.WriteString(pw, ahead); err != nil {
			t.Fatal(err)
		}
		for n := strings.Count(ahead, "\n"); ; time.Sleep(time.Millisecond) {
			lines.mu.Lock()
			got := len(lines.q)
			lines.mu.Unlock()
			if got >= n {
				break
			}
		}
	}
	go func() {
		asked := false
		for _, l := range strings.SplitAfter(in, "\n") {
			if l == "" {
				continue
			}
			// Typed once a question waits for it, or, after the dialog,
			// for the chat.
			lines.mu.Lock()
			for {
				// A question seen waiting counts as asked too: the
				// dialog may have opened before this line was due.
				asked = asked || lines.asks > 0 || lines.wait > 0
				if lines.wait > 0 || asked && lines.asks == 0 {
					break
				}
				lines.cond.Wait()
			}
			n := lines.read
			lines.mu.Unlock()
			c.add(time.Second)
			if _, err := io.WriteString(pw, l); err != nil {
				return
			}
			// The line is in, and taken by a question, before the next.
			lines.mu.Lock()
			for lines.read == n || lines.wait > 0 && slices.ContainsFunc(lines.q, func(x line) bool { return x.n > n }) {
				lines.cond.Wait()
			}
			lines.mu.Unlock()
		}
		pw.Close()
	}()
	var out bytes.Buffer
	d, err := NewPrompter(lines, &out).Prompt(context.Background(), r)
	if err != nil {
		t.Fatal(err)
	}
	return d, out.String(), lines
}

// An irreversible send whose recipient an app wrote: the dialog says the
// hub's warning and where the value came from, cleaned of the app's
// terminal sequences; it offers no permanent grant; an allow takes a
// second, explicit yes, and anything else denies.
func TestIrreversibleAsksTwiceAndNeverPermanently(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send",
		Args:   json.RawMessage(`{"to":"eve@evil.example\u001b]0;pwned\u0007","body":"hi"}`),
		Detail: "mail wants to send", Irreversible: true,
		Warning:    "NOT expected by the plan: to came from mail.read; cannot be undone",
		Concerns:   []permissions.Concern{permissions.ConcernUnexpected, permissions.ConcernIrreversible},
		Provenance: []permissions.Provenance{{Path: "to", Source: "mail.read", Key: true}}}
	d, out, _ := ask(t, r, "1\nyes\n")
	if d.Answer != permissions.AnswerOnce {
		t.Fatalf("1 then yes: %+v", d)
	}
	for _, want := range []string{"Permission question: irreversible, mail, send.", "It cannot be undone.",
		"The hub warns: NOT expected by the plan: to came from mail.read", "to: eve@evil.example", "(from mail.read)", "This cannot be undone. Allow it?"} {
		if !strings.Contains(out, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "allow permanently") || strings.ContainsAny(out, "\x1b\a") {
		t.Errorf("no permanent grant for what cannot be undone, and no raw sequence:\n%q", out)
	}
	// The value comes first: it is the decisive one.
	if strings.Index(out, "to: ") > strings.Index(out, "body: ") {
		t.Errorf("the key value must come first:\n%s", out)
	}
	for _, in := range []string{"1\nno\n", "1\n\n", "1\n", "", "\n", "3\n"} {
		if d, _, _ := ask(t, r, in); d.Answer != permissions.AnswerDeny {
			t.Errorf("%q must deny, got %+v", in, d)
		}
	}
}

// A routine request is allowed by its number alone, and the line after
// the answer stays for the chat (type-ahead is not lost); deny with a note
// carries the note.
func TestRoutineAnswerNoteAndChoice(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "clock", Function: "clock.now",
		Args: json.RawMessage(`{"tz":"Asia/Tokyo"}`), Expected: true, Warning: "expected by the plan: step s1 uses clock.now"}
	if !r.Routine() {
		t.Fatal("the fixture should be routine")
	}
	d, out, lines := ask(t, r, "2\nnext request\n")
	if d.Answer != permissions.AnswerSession || !strings.Contains(out, "The hub says: expected by the plan") {
		t.Fatalf("2 allows for the session: %+v\n%s", d, out)
	}
	if l, _ := lines.ReadLine(); l != "next request" {
		t.Fatalf("the line after the answer must stay for the chat, got %q", l)
	}
	d, _, _ = ask(t, r, "5\nnot now, thanks\n")
	if d.Answer != permissions.AnswerDeny || d.Note != "not now, thanks" {
		t.Fatalf("5 denies with a note: %+v", d)
	}

	c := permissions.Request{Kind: permissions.KindSelect, Subject: "hub", Function: "ride.estimate_fare", Choices: []string{"metro_hail", "quick_ride"},
		NoPermanent: true, Warning: "the plan leaves the choice to you", Concerns: []permissions.Concern{permissions.ConcernChoice}}
	d, out, _ = ask(t, c, "2\n1\nyes\n")
	if d.Answer != permissions.AnswerOnce || d.Choice != "quick_ride" || !strings.Contains(out, "Apps that offer it: metro_hail, quick_ride.") {
		t.Fatalf("choose the second app, allow once: %+v\n%s", d, out)
	}
	if d, _, _ = ask(t, c, "2\n3\n"); d.Answer != permissions.AnswerDeny {
		t.Fatalf("a choice then deny: %+v", d)
	}
}

// A private chat's request offers no permanent grant and says so.
func TestPrivateOffersThisChatOnly(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "notes", Function: "notes.search", Private: true, Expected: true}
	_, out, _ := ask(t, r, "4\n")
	if strings.Contains(out, "allow permanently") || !strings.Contains(out, "allow in this private chat") {
		t.Fatalf("a private chat's answers:\n%s", out)
	}
}

// Nothing typed before a question answers it: not a line typed ahead
// while the turn ran, not one that came with the question or too soon
// after it (within Grace), not a "yes" pasted with the number it
// confirms. Such lines stay, in order, for the chat, and the dialog says
// so; an answer typed after the question, once it could be read, counts.
func TestTypedAheadNeverAnswers(t *testing.T) {
	routine := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "clock", Function: "clock.now",
		Expected: true, Warning: "expected by the plan: step s1 uses clock.now"}
	irreversible := permissions.Request{Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send",
		Irreversible: true, Warning: "NOT expected by the plan; cannot be undone",
		Concerns: []permissions.Concern{permissions.ConcernUnexpected, permissions.ConcernIrreversible}}

	// Typed ahead, then nothing: the end of the input denies, and the
	// line is the chat's next request.
	for _, ahead := range []string{"1\n", "2\n", "1\nyes\n", "allow once\n"} {
		d, out, lines := askTyped(t, routine, ahead, "")
		if d.Answer != permissions.AnswerDeny {
			t.Errorf("%q typed ahead answered the dialog: %+v\n%s", ahead, d, out)
		}
		if !strings.Contains(out, "came before this question, so it does not answer it") {
			t.Errorf("the dialog must say why %q did not answer it:\n%s", ahead, out)
		}
		for _, want := range strings.Split(strings.TrimSuffix(ahead, "\n"), "\n") {
			if l, _ := lines.ReadLine(); l != want {
				t.Errorf("typed ahead %q: the chat reads %q, want %q", ahead, l, want)
			}
		}
	}
	// Typed ahead, then an answer after the question: the answer counts,
	// the line typed ahead stays for the chat.
	d, _, lines := askTyped(t, routine, "2\n", "1\n")
	if d.Answer != permissions.AnswerOnce {
		t.Fatalf("1 after the question must allow once (2 was typed ahead): %+v", d)
	}
	if l, _ := lines.ReadLine(); l != "2" {
		t.Fatalf("the chat must read the line typed ahead, got %q", l)
	}

	// A number and its confirmation pasted at once, after the question:
	// the number answers the first question, the yes came before the
	// second one and does not confirm.
	pr, pw := io.Pipe()
	lines = NewLines(pr)
	c := &clock{t: time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)}
	lines.now = c.now
	go func() {
		lines.mu.Lock()
		for lines.wait == 0 {
			lines.cond.Wait()
		}
		lines.mu.Unlock()
		c.add(time.Second)
		io.WriteString(pw, "1\nyes\n")
		lines.mu.Lock()
		for lines.read < 2 || lines.wait == 0 {
			lines.cond.Wait()
		}
		lines.mu.Unlock()
		pw.Close()
	}()
	var out bytes.Buffer
	dec, err := NewPrompter(lines, &out).Prompt(context.Background(), irreversible)
	if err == nil && dec.Answer != permissions.AnswerDeny {
		t.Fatalf("a pasted yes confirmed an irreversible send: %+v\n%s", dec, out.String())
	}
	if !strings.Contains(out.String(), `"yes" came before this question`) {
		t.Fatalf("the dialog must say the yes came too soon:\n%s", out.String())
	}
	if l, _ := lines.ReadLine(); l != "yes" {
		t.Fatalf("the pasted yes must stay for the chat, got %q", l)
	}
}

// A line is judged by when it arrived, not by when the dialog got to it:
// while the dialog is saying that a typed-ahead line does not answer it
// (the terminal may be slow to take the words), a line typed within
// Grace still does not answer either.
func TestALineTooSoonStaysTooSoonWhileTheDialogWrites(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "clock", Function: "clock.now",
		Expected: true, Warning: "expected by the plan: step s1 uses clock.now"}
	pr, pw := io.Pipe()
	lines := NewLines(pr)
	c := &clock{t: time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)}
	lines.now = c.now
	lines.mu.Lock()
	lines.start()
	lines.mu.Unlock()
	io.WriteString(pw, "typed ahead\n")
	for lines.readCount() < 1 {
		time.Sleep(time.Millisecond)
	}
	out := &slowScreen{held: make(chan struct{}), release: make(chan struct{})}
	go func() {
		<-out.held // the dialog is writing its note of the line typed ahead
		c.add(200 * time.Millisecond)
		io.WriteString(pw, "1\n") // within Grace of the question
		// It is in (and stamped) at once, unless something holds the
		// reader up: then the clock moves on regardless.
		for end := time.Now().Add(2 * time.Second); lines.readCount() < 2 && time.Now().Before(end); {
			time.Sleep(time.Millisecond)
		}
		c.add(2 * time.Second)
		close(out.release)
		pw.Close()
	}()
	d, err := NewPrompter(lines, out).Prompt(context.Background(), r)
	if err == nil && d.Answer != permissions.AnswerDeny {
		t.Fatalf("a line typed 200 ms after the question answered it: %+v", d)
	}
	for _, want := range []string{"typed ahead", "1"} {
		if l, _ := lines.ReadLine(); l != want {
			t.Fatalf("the chat reads %q, want %q", l, want)
		}
	}
}

// A request withdrawn while its dialog waits (the turn ended) lets the
// input go: Prompt returns, and the next line is the chat's.
func TestAWithdrawnDialogLetsTheInputGo(t *testing.T) {
	r := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: "clock", Function: "clock.now", Expected: true}
	pr, pw := io.Pipe()
	defer pw.Close()
	lines := NewLines(pr)
	ctx, cancel := context.WithCancel(context.Background())
	got := make(chan error, 1)
	go func() {
		_, err := NewPrompter(lines, io.Discard).Prompt(ctx, r)
		got <- err
	}()
	for {
		lines.mu.Lock()
		w := lines.wait
		lines.mu.Unlock()
		if w > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	select {
	case err := <-got:
		if err == nil {
			t.Fatal("a withdrawn dialog must say so")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a withdrawn dialog kept the input")
	}
	go io.WriteString(pw, "next request\n")
	if l, _ := lines.ReadLine(); l != "next request" {
		t.Fatalf("the chat reads %q", l)
	}
}

// slowScreen is a terminal slow to take the dialog's note of a line typed
// ahead: it holds that write until released.
type slowScreen struct {
	mu      sync.Mutex
	b       bytes.Buffer
	held    chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *slowScreen) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("came before this question")) {
		s.once.Do(func() { close(s.held) })
		<-s.release
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// readCount is how many lines the reader has taken in.
func (l *Lines) readCount() uint64 {
	if !l.mu.TryLock() {
		return 0
	}
	defer l.mu.Unlock()
	return l.read
}
