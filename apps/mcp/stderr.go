package mcp

import (
	"bytes"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"
)

// What a server may write to bulkhead's log on the side (its stderr and
// its MCP log messages), per app, all its processes together: a token
// bucket of lines and one of bytes, each with a burst. A line the bucket
// cannot pay for is dropped, and the count of dropped lines is logged
// once per window ("N lines of stderr dropped"), so a server that floods
// its stderr cannot grow bulkhead.log.
const (
	stderrLines      = 10       // lines a second
	stderrLineBurst  = 100      // lines at once
	stderrBytes      = 8 << 10  // bytes a second
	stderrByteBurst  = 64 << 10 // bytes at once
	stderrWindow     = 5 * time.Second
	stderrLineMax    = 4000 // bytes of one line that are logged
	stderrPartialMax = 4000 // a line longer than this is logged in pieces
	// stderrTail lines of a process's stderr are kept, each cut to
	// stderrTailMax bytes, for the message about a process that exited
	// as it started (ExitError).
	stderrTail    = 8
	stderrTailMax = 300
)

// stderrGate rate-limits what an app's servers write to the log, and
// withholds what they write during a private turn (counting it instead:
// a private query's words may be in it).
type stderrGate struct {
	log *slog.Logger
	now func() time.Time

	mu            sync.Mutex
	lines, bytes  float64 // tokens
	last          time.Time
	dropped, held int
	reported      time.Time
}

func newStderrGate(log *slog.Logger) *stderrGate {
	return &stderrGate{log: log, now: time.Now, lines: stderrLineBurst, bytes: stderrByteBurst}
}

// line logs (or drops, or withholds) one line; what names where it came
// from ("server stderr", "server log").
func (g *stderrGate) line(what string, text []byte, private bool) (logged bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	if !g.last.IsZero() {
		dt := now.Sub(g.last).Seconds()
		g.lines = min(stderrLineBurst, g.lines+dt*stderrLines)
		g.bytes = min(stderrByteBurst, g.bytes+dt*stderrBytes)
	}
	g.last = now
	if g.reported.IsZero() {
		g.reported = now // the first window starts with the first line
	}
	if len(text) > stderrLineMax {
		text = text[:stderrLineMax]
	}
	switch {
	case private:
		g.held++
	case g.lines >= 1 && g.bytes >= float64(len(text)):
		g.lines--
		g.bytes -= float64(len(text))
		g.log.Info(what, "line", clip(string(text), stderrLineMax))
		logged = true
	default:
		g.dropped++
	}
	if now.Sub(g.reported) >= stderrWindow {
		g.reportLocked(now)
	}
	return logged
}

// report logs the counts of dropped and withheld lines not yet logged.
func (g *stderrGate) report() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.reportLocked(g.now())
}

func (g *stderrGate) reportLocked(now time.Time) {
	if g.dropped > 0 {
		g.log.Warn(plural(g.dropped, "line")+" of stderr dropped", "limit", "10 lines or 8 KiB a second")
	}
	if g.held > 0 {
		g.log.Info(plural(g.held, "line") + " withheld during a private turn")
	}
	if g.dropped > 0 || g.held > 0 {
		g.reported = now
	}
	g.dropped, g.held = 0, 0
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// stderrLog is one server process's stderr: whole lines to the app's
// gate, withheld while private says so.
type stderrLog struct {
	gate    *stderrGate
	private *atomic.Bool
	buf     []byte
	// logged and unlogged count its lines that reached the log and
	// those that did not (withheld, dropped): what a message about the
	// process may truly say of its stderr.
	logged, unlogged atomic.Int64
	// tail are its last lines (not those of a private turn), cleaned
	mu   sync.Mutex
	tail []string
}

// last are the process's last lines of stderr, as kept (none while
// private).
func (w *stderrLog) last() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.tail...)
}

// keep keeps a line in the tail, unless the instance is private.
func (w *stderrLog) keep(line []byte, private bool) {
	if private {
		return
	}
	l := cleanLine(string(line), stderrTailMax)
	if l == "" {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.tail = append(w.tail, l)
	if len(w.tail) > stderrTail {
		w.tail = w.tail[len(w.tail)-stderrTail:]
	}
}

// cleanLine is a server's line as bulkhead may show it: valid UTF-8,
// no control characters (a tab or a line break is a space), trimmed, at
// most max bytes.
func cleanLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\t', r == '\n', r == '\r':
			return ' '
		case unicode.IsControl(r), r == '\u2028', r == '\u2029', unicode.Is(unicode.Bidi_Control, r):
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, "\uFFFD"))
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// words say, truly, where the process's stderr went.
func (w *stderrLog) words() string {
	switch {
	case w.logged.Load() > 0:
		return "its stderr is in bulkhead.log"
	case w.unlogged.Load() > 0:
		return "its stderr was not logged (withheld in a private turn, or over the log's rate limit)"
	}
	return "it wrote nothing to stderr"
}

func (w *stderrLog) count(logged bool) {
	if logged {
		w.logged.Add(1)
	} else {
		w.unlogged.Add(1)
	}
}

func (w *stderrLog) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.buf = append(w.buf, p...)
			if len(w.buf) > stderrPartialMax {
				w.flushLine()
			}
			break
		}
		if len(w.buf) > 0 {
			w.buf = append(w.buf, p[:i]...)
			w.flushLine()
		} else {
			private := w.private.Load()
			w.keep(p[:i], private)
			w.count(w.gate.line("server stderr", p[:i], private))
		}
		p = p[i+1:]
	}
	return n, nil
}

func (w *stderrLog) flushLine() {
	private := w.private.Load()
	w.keep(w.buf, private)
	w.count(w.gate.line("server stderr", w.buf, private))
	w.buf = w.buf[:0]
}

// flush logs a last line without its newline and the counts left.
func (w *stderrLog) flush() {
	if len(w.buf) > 0 {
		w.flushLine()
	}
	w.gate.report()
}
