// Package ptytest is a test-only helper: it runs a command in a
// pseudo-terminal of a given size and feeds what the command writes into
// a virtual terminal emulator, so that a test reads the screen as text,
// types keys and waits for what it expects to appear.
package ptytest

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/charmbracelet/x/vt"
	"github.com/creack/pty"
)

// Key bytes a terminal sends.
const (
	KeyEnter  = "\r"
	KeyEscape = "\x1b"
	KeyCtrlC  = "\x03"
	KeyCtrlD  = "\x04"
	KeyTab    = "\t"
)

// Term is a command running in a pseudo-terminal, its output rendered by
// a virtual terminal.
type Term struct {
	cmd  *exec.Cmd
	ptmx *os.File
	done chan struct{} // closed once the process is reaped

	mu  sync.Mutex // guards em
	em  *vt.Emulator
	wmu sync.Mutex // serialises writes to ptmx
}

// Start starts cmd in a cols×rows pseudo-terminal (cmd's stdin, stdout
// and stderr are the terminal). At t's cleanup the process gets SIGTERM,
// then SIGKILL if it has not ended within 5 s.
func Start(t testing.TB, cmd *exec.Cmd, cols, rows int) *Term {
	t.Helper()
	ptmx, err := pty.StartWithSize(cmd, &pty.Winsize{Cols: uint16(cols), Rows: uint16(rows)})
	if err != nil {
		t.Fatalf("ptytest: start %v: %v", cmd.Args, err)
	}
	tm := &Term{cmd: cmd, ptmx: ptmx, done: make(chan struct{}), em: vt.NewEmulator(cols, rows)}
	// What the emulator answers to the program's queries (cursor
	// position, colours, device attributes) goes back as its input, as a
	// real terminal's would; the emulator blocks until it is read.
	go func() {
		buf := make([]byte, 256)
		for {
			n, err := tm.em.Read(buf)
			if n > 0 {
				_ = tm.write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	output := make(chan struct{})
	go func() {
		defer close(output)
		buf := make([]byte, 32*1024)
		for {
			n, err := ptmx.Read(buf)
			if n > 0 {
				tm.mu.Lock()
				_, _ = tm.em.Write(buf[:n])
				tm.mu.Unlock()
			}
			if err != nil {
				return
			}
		}
	}()
	go func() {
		_ = cmd.Wait()
		close(tm.done)
	}()
	t.Cleanup(func() {
		tm.Stop(5 * time.Second)
		_ = ptmx.Close()
		<-output
		// Ends the goroutine reading the emulator's answers (Close
		// itself would race with that Read).
		if pw, ok := tm.em.InputPipe().(io.Closer); ok {
			_ = pw.Close()
		}
	})
	return tm
}

// Stop sends SIGTERM and waits up to grace for the process to end, then
// SIGKILLs it and waits for it. It returns at once if it has ended.
func (tm *Term) Stop(grace time.Duration) {
	select {
	case <-tm.done:
		return
	default:
	}
	_ = tm.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-tm.done:
		return
	case <-time.After(grace):
	}
	_ = tm.cmd.Process.Kill()
	<-tm.done
}

// Done is closed once the process has ended.
func (tm *Term) Done() <-chan struct{} { return tm.done }

// Cmd is the command running in the terminal.
func (tm *Term) Cmd() *exec.Cmd { return tm.cmd }

func (tm *Term) write(b []byte) error {
	tm.wmu.Lock()
	defer tm.wmu.Unlock()
	_, err := tm.ptmx.Write(b)
	if errors.Is(err, os.ErrClosed) {
		return io.EOF
	}
	return err
}

// Type sends s as typed input: raw bytes, so "\x03" is ctrl+c.
func (tm *Term) Type(s string) {
	_ = tm.write([]byte(s))
}

// Enter presses enter.
func (tm *Term) Enter() { tm.Type(KeyEnter) }

// Screen is the text on the screen now, one line per row, trailing
// spaces trimmed.
func (tm *Term) Screen() string {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	return tm.em.String()
}

// WaitFor waits until the screen contains substr and returns the screen;
// it fails t, with the last screen, if it does not within timeout or the
// process ends first.
func (tm *Term) WaitFor(t testing.TB, substr string, timeout time.Duration) string {
	t.Helper()
	screen, ok := tm.Wait(func(s string) bool { return strings.Contains(s, substr) }, timeout)
	if !ok {
		t.Fatalf("ptytest: no %q on the screen within %v (process ended: %v); last screen:\n%s", substr, timeout, tm.ended(), screen)
	}
	return screen
}

// Wait polls the screen until ok(screen) holds or timeout passes, and
// returns the last screen and whether ok held.
func (tm *Term) Wait(ok func(screen string) bool, timeout time.Duration) (string, bool) {
	deadline := time.Now().Add(timeout)
	for {
		s := tm.Screen()
		if ok(s) {
			return s, true
		}
		if time.Now().After(deadline) {
			return s, false
		}
		select {
		case <-tm.done:
			// One last look: the final frame may have just arrived.
			time.Sleep(50 * time.Millisecond)
			s = tm.Screen()
			return s, ok(s)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

func (tm *Term) ended() bool {
	select {
	case <-tm.done:
		return true
	default:
		return false
	}
}
