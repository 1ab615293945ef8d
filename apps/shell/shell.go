// Package shell is the built-in shell app: it runs one command line with
// /bin/sh in the workspace folder and returns its exit code and output.
//
// Each command runs behind the operating-system bulkhead (package
// sandbox): a minimal environment, and on Linux a Landlock ruleset that
// lets it read the system's folders and read and write the workspace
// only — not bulkhead's data directory or config, not the rest of the
// user's home. It writes the workspace through a layer of its own
// (package changes): it builds, tests and commits as in the folder
// itself, and what it wrote reaches the workspace only as a change set
// the person accepts after the call (the hub asks). Without a Store the
// workspace is read-only to it.
// Its stdin is /dev/null; its stdout and stderr are collected together,
// up to Options.MaxOutput bytes. When the command outlives
// Options.Timeout, or the caller's context ends, it is killed with every
// process it started, and so is anything it left running when it exits —
// even a process that left its group and session.
//
// An App holds no state between calls and is safe for concurrent use.
package shell

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Defaults for Options.
const (
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 64 << 10
	maxCommand       = 16 << 10
	// waitDelay is how long output is still collected after the shell
	// exits, for what it left running in the background.
	waitDelay = 500 * time.Millisecond
)

// Options tune the app.
type Options struct {
	Timeout   time.Duration // 0 means DefaultTimeout
	MaxOutput int           // bytes of output kept; 0 means DefaultMaxOutput
	// Unconfined runs commands without the sandbox, with bulkhead's full
	// environment: for tests that show the sandbox bites.
	Unconfined bool
	// Private are folders no command may reach (bulkhead's data
	// directory and config folder), whatever the workspace holds or
	// links to.
	Private []string
	// Changes keeps the layers its commands write the workspace
	// through; nil: the workspace is read-only to them.
	Changes *changes.Store
}

// App is the shell app.
type App struct {
	workdir string
	opts    Options
	man     apps.Manifest
}

var _ apps.App = (*App)(nil)

// New returns the shell app, running commands in workdir.
func New(workdir string, opts Options) *App {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MaxOutput <= 0 {
		opts.MaxOutput = DefaultMaxOutput
	}
	return &App{workdir: workdir, opts: opts, man: manifest(opts)}
}

// Manifest declares the app.
func (a *App) Manifest() apps.Manifest { return a.man }

// Call runs one function.
func (a *App) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	return apps.Dispatch(ctx, a.man, map[string]apps.Handler{
		"run": apps.Typed(func(ctx context.Context, _ apps.Call, p struct{ Command string }) (any, error) {
			return a.run(ctx, p.Command)
		}),
	}, c)
}

type result struct {
	ExitCode  int    `json:"exit_code"`
	Output    string `json:"output"`
	Truncated bool   `json:"truncated"`
	TimedOut  bool   `json:"timed_out"`
}

func (a *App) run(ctx context.Context, command string) (result, error) {
	switch {
	case strings.TrimSpace(command) == "":
		return result{}, errors.New("the command is empty")
	case len(command) > maxCommand:
		return result{}, fmt.Errorf("the command is longer than %d KiB", maxCommand>>10)
	case strings.IndexByte(command, 0) >= 0:
		return result{}, errors.New("the command contains a NUL byte")
	}
	tctx, cancel := context.WithTimeout(ctx, a.opts.Timeout)
	defer cancel()
	out := &capped{max: a.opts.MaxOutput}
	// The workspace is a folder other programs of the user's run files
	// from (git's hooks, direnv's .envrc, anything): the command writes
	// it through a layer of its own, read after the call as a change set.
	pol := sandbox.Policy{ReadWrite: []string{a.workdir}, Unconfined: a.opts.Unconfined, Deny: a.opts.Private}
	if a.opts.Changes != nil && !a.opts.Unconfined {
		l, err := a.opts.Changes.New(changes.Owner{App: a.man.Name, Chat: permissions.ChatOf(ctx), Session: permissions.SessionOf(ctx), Private: apps.IsPrivate(ctx)}, a.workdir)
		if err != nil {
			return result{}, fmt.Errorf("a layer for the workspace: %w", err)
		}
		defer a.opts.Changes.Drop(l) // a command that wrote nothing leaves no set
		pol.Layers = map[string]sandbox.Overlay{a.workdir: l.Overlay()}
		pol.Deny = append(slices.Clone(pol.Deny), a.opts.Changes.Root())
	}
	cmd, cleanup, err := sandbox.Command(tctx, pol, a.workdir, "/bin/sh", "-c", command)
	if err != nil {
		return result{}, err
	}
	defer cleanup()
	cmd.Stdout, cmd.Stderr = out, out // nil Stdin reads from /dev/null
	if a.opts.Unconfined {
		cmd.Cancel = func() error { return killGroup(cmd) }
	}
	cmd.WaitDelay = waitDelay
	if err := cmd.Start(); err != nil {
		return result{}, fmt.Errorf("start the command: %v", startError(err))
	}
	err = cmd.Wait()
	killGroup(cmd) // whatever it left behind goes too
	if ctx.Err() != nil {
		return result{}, fmt.Errorf("the command was stopped: %w", ctx.Err())
	}
	res := result{ExitCode: exitCode(cmd), TimedOut: tctx.Err() != nil}
	res.Output, res.Truncated = out.result()
	if err != nil && !res.TimedOut && cmd.ProcessState == nil {
		return result{}, fmt.Errorf("run the command: %v", err)
	}
	return res, nil
}

// killGroup kills the command's whole process group.
func killGroup(cmd *exec.Cmd) error {
	if cmd.Process == nil {
		return nil
	}
	err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// exitCode is the shell's exit status, or 128+n when signal n ended it.
func exitCode(cmd *exec.Cmd) int {
	ps := cmd.ProcessState
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// startError strips the host path from an error starting the shell.
func startError(err error) error {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) && pe.Unwrap() != nil {
		return pe.Unwrap()
	}
	return err
}

// capped keeps the first max bytes written to it and counts the rest.
type capped struct {
	mu        sync.Mutex
	max       int
	buf       bytes.Buffer
	truncated bool
}

func (c *capped) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); len(p) > room {
		c.buf.Write(p[:max(room, 0)])
		c.truncated = true
	} else {
		c.buf.Write(p)
	}
	return len(p), nil
}

func (c *capped) result() (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.ToValidUTF8(c.buf.String(), "\uFFFD"), c.truncated
}
