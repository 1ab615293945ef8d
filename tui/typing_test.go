package tui

import (
	"context"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// virtualClock stands in for the model's timers: after records what is
// due when, and advance delivers what has come due, in order.
type virtualClock struct {
	mu    sync.Mutex
	now   time.Duration
	timer []timed
}

type timed struct {
	at  time.Duration
	msg tea.Msg
}

func (c *virtualClock) after(d time.Duration, msg tea.Msg) tea.Cmd {
	c.mu.Lock()
	c.timer = append(c.timer, timed{c.now + d, msg})
	c.mu.Unlock()
	return nil
}

// advance moves the clock by d and sends every message that came due.
func (c *virtualClock) advance(d *driver, by time.Duration) {
	c.mu.Lock()
	c.now += by
	var due []timed
	keep := c.timer[:0]
	for _, t := range c.timer {
		if t.at <= c.now {
			due = append(due, t)
		} else {
			keep = append(keep, t)
		}
	}
	c.timer = keep
	c.mu.Unlock()
	sort.SliceStable(due, func(i, j int) bool { return due[i].at < due[j].at })
	for _, t := range due {
		d.send(t.msg)
	}
}

// drain handles whatever the Cmds have delivered, without waiting long.
func (d *driver) drain() {
	for {
		select {
		case msg := <-d.msgs:
			d.pending--
			d.send(msg)
		case <-time.After(2 * time.Millisecond):
			return
		}
	}
}

// sentences hold every key a dialog answers to (o, s, p, d, n, x, and the
// arrows' letters are not answers), in ordinary words.
var sentences = []string{
	"what about tomorrow morning? please tell me more",
	"do not send anything yet, maybe next week",
	"expand on the options and explain the pros",
	"so perhaps you could summarise the notes now",
	"no, not that one; the other draft is fine",
	"ok, please proceed only if nothing is deleted",
}

// dialogOfEveryKind are the requests that open while the user types.
func dialogOfEveryKind() []permissions.Request {
	var out []permissions.Request
	for _, k := range dialogKinds {
		out = append(out, k.req)
	}
	return out
}

// Typing sentences that hold every dialog key, at 8 and at 15 keys per
// second, while dialogs of every kind open at random moments, answers no
// dialog and loses no character: every key reaches the input box.
func TestTypingNeverAnswersADialog(t *testing.T) {
	t.Parallel()
	for _, rate := range []int{8, 15} {
		t.Run(fmt.Sprintf("%d_keys_per_second", rate), func(t *testing.T) {
			t.Parallel()
			r := newRig(t, replies(ollamatest.Text("x")))
			opts := r.options()
			p := NewPrompter()
			opts.Prompter = p
			clock := &virtualClock{}
			d := newDriver(t, opts, 100, 32, atSeen, func(m *Model) { m.after = clock.after })

			reqs := dialogOfEveryKind()
			rnd := rand.New(rand.NewSource(int64(rate)))
			text := strings.Join(sentences, " ")
			// Each request opens at a random key.
			opens := map[int][]permissions.Request{}
			for _, req := range reqs {
				i := rnd.Intn(len([]rune(text)) - 1)
				opens[i] = append(opens[i], req)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			var decided []permissions.Decision
			var wg sync.WaitGroup
			step := time.Second / time.Duration(rate)
			for i, ch := range []rune(text) {
				for _, req := range opens[i] {
					wg.Add(1)
					go func(req permissions.Request) {
						defer wg.Done()
						dec, err := p.Prompt(ctx, req)
						if err == nil {
							mu.Lock()
							decided = append(decided, dec)
							mu.Unlock()
						}
					}(req)
				}
				d.drain()
				clock.advance(d, step)
				d.send(tea.KeyPressMsg{Code: ch, Text: string(ch)})
			}
			d.drain()
			if got := d.model().input.value(); got != text {
				t.Fatalf("characters were lost or went elsewhere:\n got %q\nwant %q", got, text)
			}
			mu.Lock()
			n := len(decided)
			mu.Unlock()
			if n != 0 {
				t.Fatalf("typing answered %d dialogs: %+v", n, decided)
			}
			if d.model().perm == nil {
				t.Fatalf("a dialog should be showing:\n%s", d.view())
			}
			// Once the typing stops for the grace period, the dialog says
			// it takes answers.
			if v := d.view(); !strings.Contains(v, "typing goes to your message") {
				t.Fatalf("while typing, the dialog says keys go to the message:\n%s", v)
			}
			clock.advance(d, widget.ArmDelay)
			if v := d.view(); !strings.Contains(v, "answering now") {
				t.Fatalf("after the pause the dialog must say it answers now:\n%s", v)
			}
			cancel()
			wg.Wait()
			d.drain()
		})
	}
}

// A risky request is never allowed by one key: o chooses, enter confirms;
// any other key takes the choice back (and is typing). A routine one
// answers at once.
func TestRiskyAllowIsAChoiceThenEnter(t *testing.T) {
	t.Parallel()
	d, p := caveatDriver(t, 100, 32)
	var send permissions.Request
	for _, k := range dialogKinds {
		if k.name == "send" {
			send = k.req
		}
	}
	got := prompt(t, d, p, send)
	d.key(char('o'))
	if v := d.view(); p.Pending() != 1 || !strings.Contains(v, "enter confirms") || !strings.Contains(v, "▸ o allow once") {
		t.Fatalf("o must only choose:\n%s", v)
	}
	d.key(char('k')) // typing: the choice goes, k reaches the input
	if v := d.view(); p.Pending() != 1 || strings.Contains(v, "enter confirms") || d.model().input.value() != "k" {
		t.Fatalf("another key takes the choice back and is typing (input %q):\n%s", d.model().input.value(), v)
	}
	d.key(keyEnter) // enter now is the message's, not the dialog's
	if p.Pending() != 1 {
		t.Fatal("enter after the choice was taken back answered the dialog")
	}
	d.graceOver()
	d.key(char('o'))
	d.key(keyEnter)
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce {
		t.Fatalf("decision %+v", dec)
	}

	var exec permissions.Request
	for _, k := range dialogKinds {
		if k.name == "exec" {
			exec = k.req
		}
	}
	got = prompt(t, d, p, exec)
	d.key(char('o'))
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce {
		t.Fatalf("a routine dialog answers o at once: %+v", dec)
	}
	d.idle()
}

// A routine dialog is calm and silent; a risky one rings the bell and
// wears the warning.
func TestSeverityStyling(t *testing.T) {
	t.Parallel()
	d, p := caveatDriver(t, 100, 32)
	for _, k := range dialogKinds {
		before := len(d.raw)
		got := prompt(t, d, p, k.req)
		d.idle() // the bell, if any, is written
		v := d.view()
		routine := k.req.Routine()
		rang := len(d.raw) > before
		if rang == routine {
			t.Errorf("%s: routine %v, bell %v", k.name, routine, rang)
		}
		if strings.Contains(v, "⚠") == routine {
			t.Errorf("%s: routine %v, but the ⚠ shows = %v:\n%s", k.name, routine, !routine, v)
		}
		d.key(char('d'))
		recvDecision(t, got)
	}
	d.idle()
}
