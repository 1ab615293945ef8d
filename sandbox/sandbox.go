// Package sandbox runs an out-of-process app's command (an MCP server, a
// shell command line) behind an operating-system bulkhead: a minimal
// environment, and on Linux a Landlock ruleset that lets it read the
// system's own folders and read and write only the folders its policy
// grants — never bulkhead's data directory, the user's home or anything
// else. Whatever the command starts dies with it.
//
// A command is run through bulkhead itself: Command returns an exec.Cmd
// that starts this executable with the hidden first argument Arg; the
// binary's main (and a test binary's TestMain) calls Launch first thing,
// which sees that argument, becomes the launcher, and never returns. The
// launcher asks to be signalled when bulkhead goes away, makes itself
// the reaper of every process its command leaves behind (so a child that
// calls setsid is still its own), restricts itself with Landlock (which
// its children inherit and cannot shed), starts the command in a process
// group of its own, and when the command ends — or bulkhead goes away, or
// the context is cancelled — kills the group and every descendant left,
// and exits with the command's status.
//
// On a kernel without Landlock the ruleset is skipped (BestEffort): the
// environment and the process lifetime still hold. Status says which, for
// `bulkhead doctor` and the apps screen.
//
// Everything here is safe for concurrent use.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// Arg is the first argument that makes bulkhead a launcher.
const Arg = "__bulkhead_sandbox"

// launchable is set once Launch has returned: this executable, started
// with Arg, becomes a launcher.
var launchable atomic.Bool

// Policy is what one command may touch.
type Policy struct {
	// ReadWrite are the folders the command may read and write (the
	// workspace); ReadOnly those it may only read (its own installation).
	ReadWrite, ReadOnly []string
	// Env is the environment beyond the minimal one (Environ): only what
	// the app's config passes.
	Env []string
	// Unconfined runs the command directly, with bulkhead's full
	// environment and no ruleset: for tests that show the sandbox bites.
	Unconfined bool
}

// systemRead are the folders every command may read: the system's
// programs, libraries and configuration, and the kernel's views of the
// process. None of them holds the user's data.
var systemRead = []string{"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc", "/opt", "/proc", "/sys", "/dev", "/run", "/nix", "/snap"}

// systemWrite are device files every command may write.
var systemWrite = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/tty"}

// keptEnv are the variables of bulkhead's environment a command gets: how
// to find programs and how to speak, nothing that names the user's
// secrets or bulkhead's files.
var keptEnv = []string{"PATH", "LANG", "LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_MESSAGES", "TZ", "TERM", "USER", "LOGNAME", "SHELL"}

// Environ is the minimal environment: keptEnv from bulkhead's, HOME and
// the temporary folders pointed at tmp (the one writable place outside
// the policy's folders), then extra (which wins).
func Environ(tmp string, extra []string) []string {
	var out []string
	for _, k := range keptEnv {
		if v, ok := os.LookupEnv(k); ok {
			out = append(out, k+"="+v)
		}
	}
	if !slices.ContainsFunc(out, func(s string) bool { return strings.HasPrefix(s, "PATH=") }) {
		out = append(out, "PATH=/usr/local/bin:/usr/bin:/bin")
	}
	out = append(out, "HOME="+tmp, "TMPDIR="+tmp, "XDG_CACHE_HOME="+filepath.Join(tmp, ".cache"), "XDG_CONFIG_HOME="+filepath.Join(tmp, ".config"))
	for _, e := range extra {
		k, _, _ := strings.Cut(e, "=")
		out = slices.DeleteFunc(out, func(s string) bool { return strings.HasPrefix(s, k+"=") })
		out = append(out, e)
	}
	return out
}

// Command is exec.CommandContext for name and args under p: the command
// runs through the launcher, in dir, with p's environment, and is killed
// with everything it started when ctx ends. The caller sets Stdin, Stdout
// and Stderr and starts it; Cleanup must be called after Wait (it removes
// the command's temporary folder).
func Command(ctx context.Context, p Policy, dir, name string, args ...string) (*exec.Cmd, func(), error) {
	if p.Unconfined {
		cmd := exec.CommandContext(ctx, name, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), p.Env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		return cmd, func() {}, nil
	}
	if !launchable.Load() {
		// This executable would start itself and run its own main (or
		// its tests) again instead of the command.
		return nil, nil, errors.New("sandbox: this program never called sandbox.Launch, so it cannot be a launcher")
	}
	exe, err := self()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: find bulkhead's own executable: %w", err)
	}
	tmp, err := os.MkdirTemp("", "bulkhead-app-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: a temporary folder: %w", err)
	}
	cleanup := func() { _ = os.RemoveAll(tmp) }
	argv := []string{Arg}
	for _, d := range append(slices.Clone(p.ReadWrite), tmp) {
		argv = append(argv, "--rw", d)
	}
	for _, d := range p.ReadOnly {
		argv = append(argv, "--ro", d)
	}
	argv = append(argv, "--", name)
	argv = append(argv, args...)
	cmd := exec.CommandContext(ctx, exe, argv...)
	cmd.Dir = dir
	cmd.Env = Environ(tmp, p.Env)
	cmd.SysProcAttr = launcherAttr()
	// The launcher kills its command and what it left on SIGTERM; a
	// launcher that does not end in time is killed.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = waitDelay
	return cmd, cleanup, nil
}

// ErrNoLandlock is what Status reports on a kernel without Landlock.
var ErrNoLandlock = errors.New("this kernel has no Landlock: out-of-process apps run with a minimal environment and die with bulkhead, but can read and write whatever your user can")

// Summary says in a line what the operating-system bulkhead holds, for
// the ABI version and error Status returned; ok is false without
// Landlock (degraded).
func Summary(abi int, err error) (line string, ok bool) {
	if err != nil {
		return "no Landlock — degraded: MCP servers and shell commands still get a minimal environment and die with bulkhead, but can read and write whatever your user can (bulkhead's data directory too)", false
	}
	return fmt.Sprintf("Landlock ABI %d — MCP servers and shell commands are confined: they read the system's folders and their own installation, and write only the folders their config grants; never bulkhead's data directory", abi), true
}
