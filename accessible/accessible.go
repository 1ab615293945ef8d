// Package accessible is bulkhead's chat for screen readers and plain
// terminals (`bulkhead --accessible`, config ui.accessible): no full-screen
// drawing, no colour, one line per request, and every permission dialog
// asked as a huh form in its accessible mode — numbered answers, read as
// a line. What the dialog says is the hub's words (kind, apps, the
// warning, where each value came from); what an app or a model wrote is
// shown as data, cleaned of terminal sequences and clipped.
//
// The same rules as the TUI's dialog hold in their line-mode form: deny
// is the default answer (an empty line or the end of input denies), an
// allow of a request that is not routine takes a second, explicit yes,
// an irreversible action is never offered a permanent grant, and — the
// grace period's form — only a line typed after a question was written
// (Grace after it) answers it: a request typed ahead, a pasted block, a
// "yes" pasted with the number it would confirm answer nothing, and stay
// for the chat (Lines).
package accessible

import (
	"bufio"
	"context"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// Lines is the chat's input, shared by the chat and its dialogs (huh
// reads each answer with a scanner of its own). A reader goroutine takes
// each line as it arrives and notes when; the chat takes lines in order,
// and a dialog takes only a line that arrived after it was put — Grace
// after its question was written — so that nothing typed before the
// question (a request typed ahead, a line pasted, a number meant for an
// earlier question) can answer it. Those lines stay, in order, for the
// chat, and the dialog says so. Nothing typed is lost.
//
// While a dialog reads, the chat waits: a dialog still waiting for its
// answer when its turn ended gets the next line, never the chat (the
// server drops an answer to a request it withdrew).
type Lines struct {
	src  *bufio.Reader
	now  func() time.Time
	mu   sync.Mutex
	cond *sync.Cond
	q    []line // arrived, not yet taken, in order
	err  error  // how the input ended, once it has
	pump bool   // the reader goroutine runs
	asks int    // dialogs reading now
	read uint64 // lines read so far
	wait int    // dialog reads blocked for a line now
}

// line is one line of input and when it arrived.
type line struct {
	s  string
	at time.Time
	n  uint64 // its place in the input, from 1
	// early: a dialog was told of it, as having come before its
	// question (it may have been meant as an answer).
	early bool
}

// Grace is how long after a question is written a line must arrive to
// answer it: a line that arrives sooner was typed before the question
// could be read.
const Grace = 800 * time.Millisecond

// NewLines reads lines from r.
func NewLines(r io.Reader) *Lines {
	l := &Lines{src: bufio.NewReader(r), now: time.Now}
	l.cond = sync.NewCond(&l.mu)
	return l
}

// start runs the reader goroutine once; l.mu is held.
func (l *Lines) start() {
	if l.pump {
		return
	}
	l.pump = true
	go func() {
		for {
			s, err := l.src.ReadString('\n')
			at := l.now() // when it arrived, whatever holds the lock
			s = strings.TrimRight(s, "\r\n")
			if len(s) > 64<<10 {
				s = s[:64<<10]
			}
			l.mu.Lock()
			if s != "" || err == nil {
				l.read++
				l.q = append(l.q, line{s: termtext.Sanitize(s), at: at, n: l.read})
			}
			if err != nil {
				l.err = err
			}
			l.cond.Broadcast()
			l.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
}

// ReadLine returns the chat's next line without its newline (at most 64
// KiB of it; the rest of a longer line is dropped), and the input's end
// with the last line.
func (l *Lines) ReadLine() (string, error) {
	ln, err := l.next()
	return ln.s, err
}

// next is ReadLine with when the line arrived, and whether a dialog was
// told of it.
func (l *Lines) next() (line, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.start()
	for l.asks > 0 || len(l.q) == 0 && l.err == nil {
		l.cond.Wait()
	}
	if len(l.q) == 0 {
		return line{}, l.err
	}
	ln := l.q[0]
	l.q = l.q[1:]
	if len(l.q) == 0 && l.err != nil {
		return ln, l.err
	}
	return ln, nil
}

// ask opens a dialog's reading; each of its questions is put with
// question, and only lines arriving from Grace after the question was
// written answer it. early is told of each line that came sooner (it
// stays for the chat). When ctx ends (the request was withdrawn) the
// dialog reads no more: the input is the chat's again. done ends the
// dialog's reading.
func (l *Lines) ask(ctx context.Context, early func(string)) (d *dialogIn, done func()) {
	l.mu.Lock()
	l.start()
	l.asks++
	l.mu.Unlock()
	d = &dialogIn{l: l, ctx: ctx, early: early, told: map[uint64]bool{}}
	stop := context.AfterFunc(ctx, func() {
		l.mu.Lock()
		l.cond.Broadcast()
		l.mu.Unlock()
	})
	return d, func() {
		stop()
		l.mu.Lock()
		l.asks--
		l.cond.Broadcast()
		l.mu.Unlock()
	}
}

// dialogIn is a dialog's view of the input: one line per Read, only
// lines that arrived from `from` on.
type dialogIn struct {
	l     *Lines
	ctx   context.Context
	from  time.Time
	early func(string)
	told  map[uint64]bool
	rest  []byte // what did not fit the last Read
}

// question starts a question: nothing of the last answer's line carries
// over to it (its window starts at its first Read, once huh has written
// it).
func (d *dialogIn) question() { d.rest = nil }

func (d *dialogIn) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(d.rest) > 0 {
		n := copy(p, d.rest)
		d.rest = d.rest[n:]
		return n, nil
	}
	l := d.l
	l.mu.Lock()
	// The question is on screen by now (huh writes it, then reads): its
	// window starts here at the latest, however long the writing took.
	d.from = later(d.from, l.now().Add(Grace))
	for {
		var early []string
		for i := range l.q {
			ln := l.q[i]
			if ln.at.Before(d.from) {
				if !d.told[ln.n] {
					d.told[ln.n] = true
					l.q[i].early = true
					early = append(early, ln.s)
				}
				continue
			}
			b := []byte(ln.s + "\n")
			l.q = append(l.q[:i:i], l.q[i+1:]...)
			l.mu.Unlock()
			d.tell(early)
			n := copy(p, b)
			d.rest = b[n:]
			return n, nil
		}
		switch {
		case d.ctx.Err() != nil:
			l.mu.Unlock()
			d.tell(early)
			return 0, d.ctx.Err()
		case l.err != nil:
			l.mu.Unlock()
			d.tell(early)
			return 0, l.err
		case len(early) > 0:
			// Say so with the lock let go: the writing may block, and the
			// reader must go on stamping lines as they come.
			l.mu.Unlock()
			d.tell(early)
			l.mu.Lock()
			continue
		}
		l.wait++
		l.cond.Broadcast()
		l.cond.Wait()
		l.wait--
		l.cond.Broadcast()
	}
}

// tell says of each line that it came too soon to answer.
func (d *dialogIn) tell(lines []string) {
	if d.early == nil {
		return
	}
	for _, s := range lines {
		d.early(s)
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
