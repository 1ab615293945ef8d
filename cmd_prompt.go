package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/x/term"
	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/doctor"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// The terminal questions of the commands that start MCP servers
// (mcp add, doctor): yes or no where a person sees them, and the
// network a listing may use.

// prompt asks a person yes or no on the terminal: the question goes
// where they see it — standard error when that is the terminal, else
// the terminal itself (/dev/tty) — and the answer is a line of standard
// input. When standard input is not a terminal (tty false), nothing is
// asked: the caller says so and names the flag that answers instead.
// Its questions come one at a time (doctor lists servers side by side).
type prompt struct {
	tty bool
	in  *bufio.Reader
	out io.Writer
	// closeOut closes out when it is the terminal this opened.
	closeOut func()
	// mu is held while a question waits for its answer; answered is when
	// the last one was answered.
	mu       sync.Mutex
	answered time.Time
}

func newPrompt(cmd *cobra.Command) *prompt {
	p := &prompt{in: bufio.NewReader(cmd.InOrStdin()), out: cmd.ErrOrStderr(), closeOut: func() {}}
	f, ok := cmd.InOrStdin().(*os.File)
	p.tty = ok && term.IsTerminal(f.Fd())
	if e, ok := p.out.(*os.File); p.tty && (!ok || !term.IsTerminal(e.Fd())) {
		if t, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			p.out, p.closeOut = t, func() { t.Close() }
		}
	}
	return p
}

// close lets go of the terminal the prompt opened, if it did.
func (p *prompt) close() { p.closeOut() }

// yes asks question and reports whether the answer was y or yes.
func (p *prompt) yes(question string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprint(p.out, question)
	line, _ := p.in.ReadString('\n')
	p.answered = time.Now()
	a := strings.TrimSpace(line)
	return strings.EqualFold(a, "y") || strings.EqualFold(a, "yes")
}

// between runs say, unless a question waits for its answer (then
// nothing is said: a line would land in the middle of the question),
// with the time a progress line counts from: start, or the last answer
// after it.
func (p *prompt) between(start time.Time, say func(since time.Time)) {
	if !p.mu.TryLock() {
		return
	}
	defer p.mu.Unlock()
	if p.answered.After(start) {
		start = p.answered
	}
	say(start)
}

// terminalNet asks on the terminal, for a listing started from it
// (`bulkhead mcp add`, doctor), whether the server's process may reach
// each endpoint of its config (prompt). Not on a terminal it asks
// nothing and allows none, and says so, naming --allow-net; allow (that
// flag) allows every one without asking. It records what it refused,
// for doctor's fix. The listing's process stops when the listing ends,
// so an answer needs no lease. Safe for concurrent use.
type terminalNet struct {
	ask *prompt
	// log gets what is allowed or refused without a question (standard
	// error: never the output a script reads).
	log   io.Writer
	allow bool

	mu      sync.Mutex
	refused map[string]doctor.Network
}

func (t *terminalNet) AllowNetwork(_ context.Context, app, endpoint string) (apps.Lease, bool) {
	app, endpoint = termtext.OneLine(app), termtext.OneLine(endpoint)
	if t.allow {
		fmt.Fprintf(t.log, "%s may connect to %s while it lists its tools (--allow-net)\n", app, endpoint)
		return nil, true
	}
	if !t.ask.tty {
		fmt.Fprintf(t.log, "%s would connect to %s: not asked, since standard input is not a terminal, so not allowed; --allow-net allows it\n", app, endpoint)
		t.refuse(app, endpoint, true)
		return nil, false
	}
	if t.ask.yes(fmt.Sprintf("Network: %s's process may connect to %s, and could send there whatever it reads. Allow it, for this listing? [y/N] ", app, endpoint)) {
		return nil, true
	}
	t.refuse(app, endpoint, false)
	return nil, false
}

func (t *terminalNet) refuse(app, endpoint string, unasked bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.refused == nil {
		t.refused = map[string]doctor.Network{}
	}
	n := t.refused[app]
	n.Refused = append(n.Refused, endpoint)
	n.Unasked = n.Unasked || unasked
	t.refused[app] = n
}

// network is what it refused app (doctor.Options.Network).
func (t *terminalNet) network(app string) doctor.Network {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.refused[app]
}

// syncWriter serialises whole writes to w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(b)
}
