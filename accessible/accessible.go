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
// allow of a request that is not routine takes a second, explicit yes, and
// an irreversible action is never offered a permanent grant.
package accessible

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/bulkhead-dev/bulkhead/headless"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// Options says which chat to use.
type Options struct {
	Chat    string // resume this chat ("": a new one)
	Private bool   // a private chat: nothing of it is written to disk
}

// Run reads one request per line from in and answers each in the same
// chat, printing to out, until the end of input or a line "/quit". The
// prompter given to the backend's connection must be p (NewPrompter on
// the same Lines), so that dialogs read the same input.
func Run(ctx context.Context, b headless.Backend, lines *Lines, out io.Writer, opts Options) error {
	chat := opts.Chat
	if chat == "" {
		c, err := b.NewChat(opts.Private)
		if err != nil {
			return err
		}
		chat = c.ID
	} else if _, err := b.Chat(chat); err != nil {
		return err
	}
	fmt.Fprintln(out, "bulkhead, accessible mode. Type a request and press enter; /quit or the end of input ends the chat.")
	if opts.Private {
		fmt.Fprintln(out, "This is a private chat: nothing of it is written to disk.")
	}
	fmt.Fprintln(out, "Permission questions come as numbered lists: type the number and press enter. An empty answer denies.")
	for {
		fmt.Fprint(out, "\nrequest: ")
		line, err := lines.ReadLine()
		if errors.Is(err, io.EOF) && strings.TrimSpace(line) == "" {
			fmt.Fprintln(out)
			return nil
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		q := strings.TrimSpace(line)
		switch q {
		case "":
			continue
		case "/quit", "/exit":
			return nil
		}
		fmt.Fprintln(out, "working…")
		// One turn, printed as `ask` prints it: the whole answer at once
		// (a screen reader reads it as one block), errors said plainly.
		rerr := headless.Run(ctx, b, q, headless.Options{Chat: chat}, out, out)
		if rerr != nil && ctx.Err() != nil {
			return ctx.Err()
		}
		if rerr != nil {
			fmt.Fprintln(out, "The request did not finish; type it again to retry.")
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// Lines reads its input a line at a time and never reads past the line
// it returns: the chat and its dialogs (huh reads each answer with a
// scanner of its own) share one input without losing what was typed
// ahead.
//
// One reader at a time holds it for a whole line: a dialog still waiting
// for its answer when its turn ended gets the next line, never the chat
// (the server drops an answer to a request it withdrew).
type Lines struct {
	mu sync.Mutex
	r  *bufio.Reader
}

// NewLines reads lines from r.
func NewLines(r io.Reader) *Lines { return &Lines{r: bufio.NewReader(r)} }

// ReadLine returns the next line without its newline (at most 64 KiB of
// it; the rest of a longer line is dropped).
func (l *Lines) ReadLine() (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, err := l.r.ReadString('\n')
	s = strings.TrimRight(s, "\r\n")
	if len(s) > 64<<10 {
		s = s[:64<<10]
	}
	return termtext.Sanitize(s), err
}

// Read gives at most one line (with its newline) per call: what huh's
// scanner reads of a dialog's answer is that line and no more.
func (l *Lines) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for n < len(p) {
		c, err := l.r.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		p[n] = c
		n++
		if c == '\n' {
			break
		}
	}
	return n, nil
}
