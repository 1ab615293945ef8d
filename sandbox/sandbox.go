// Package sandbox runs an out-of-process app's command (an MCP server, a
// shell command line) behind an operating-system bulkhead. The command
// gets a minimal environment and, on Linux, every layer the kernel
// offers (docs/sandbox.md):
//
//   - namespaces (user, pid, mount, network, ipc): the command sees its
//     own processes only, a /proc of its own, and a network of its own
//     with nothing in it but what a network grant puts there;
//   - Landlock: it reads the system's programs and libraries, of /etc
//     only what programs need to run (no shadow files, no keys), its own
//     installation, and reads and writes only the folders its policy
//     grants — never bulkhead's data directory; it connects to no TCP
//     port but a granted one, to no abstract unix socket outside its
//     domain, and signals no process outside it;
//   - seccomp: it opens no unix socket (so no ssh-agent, D-Bus, docker
//     or bulkhead.sock), no socket of another family, no TCP socket
//     without a network grant, no io_uring, no keyring;
//   - no capabilities, and no way to gain any (no_new_privs), whatever
//     user bulkhead runs as.
//
// A network grant (Policy.Net, the user's answer to a `network`
// permission) is a host and a port. With namespaces, the command's
// network holds a listener for each granted endpoint (a host name
// resolves, through the command's own /etc/hosts, to a loopback address
// of its own), and the launcher outside carries each connection to that
// host and port and nowhere else. Without namespaces the command reaches
// the granted ports on any host, and Report says so (degraded).
//
// A command is run through bulkhead itself: Command returns an exec.Cmd
// that starts this executable with the hidden first argument Arg; the
// binary's main (and a test binary's TestMain) calls Launch first thing,
// which sees that argument, becomes the launcher, and never returns. The
// launcher asks to be signalled when bulkhead goes away, starts the
// namespaces' first process (or, where the kernel or the system refuses
// namespaces, confines the command itself), and when the command ends —
// or bulkhead goes away, or the context is cancelled — kills every
// process the command left and exits with the command's status.
//
// On a kernel that lacks a layer, the others still hold; Probe tries from
// inside what each layer must stop and says which held, for `bulkhead
// doctor` and the apps screen. A missing layer is named degraded, never
// silently open.
//
// Everything here is safe for concurrent use.
package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
)

// Arg is the first argument that makes bulkhead a launcher. The stages
// after it have their own (argInit, argExec, argProbe).
const Arg = "__bulkhead_sandbox"

const (
	argInit  = "__bulkhead_sandbox_init"  // the first process of the namespaces
	argExec  = "__bulkhead_sandbox_exec"  // confines itself and becomes the command
	argProbe = "__bulkhead_sandbox_probe" // the command Probe runs inside
)

// launchable is set once Launch has returned: this executable, started
// with Arg, becomes a launcher.
var launchable atomic.Bool

// Mechanism is one of the kernel's means the sandbox uses.
type Mechanism string

// The mechanisms, each a layer of its own.
const (
	Namespaces Mechanism = "namespaces" // user, pid, mount, network, ipc
	Landlock   Mechanism = "landlock"   // files, TCP ports, abstract sockets and signals
	Seccomp    Mechanism = "seccomp"    // socket families, io_uring, keyrings
)

// Policy is what one command may touch.
type Policy struct {
	// ReadWrite are the folders the command may write (the workspace,
	// the folders an app's config grants): folders it shares with the
	// user and the user's tools. It writes each through a layer of its
	// own (Layers): in its mount namespace the folder is a kernel
	// overlay, the real folder below it read-only and the layer above,
	// so that nothing it writes touches the real folder; bulkhead reads
	// the layer as a change set and applies what the person accepts
	// (package changes). A folder without a layer, or where no overlay
	// can be made, is read-only to it. ReadOnly are the folders it may
	// only read (its own installation).
	ReadWrite, ReadOnly []string
	// Layers are the layers of ReadWrite's folders, by folder as named
	// there.
	Layers map[string]Overlay
	// Own are folders that are the command's alone (its package
	// runner's cache and install tree: Runner): read and write directly,
	// since no other principal runs what is in them.
	Own []string
	// Env is the environment beyond the minimal one (Environ): only what
	// the app's config passes.
	Env []string
	// Net are the endpoints the command may connect to: the network
	// grants the user gave this app. None: no network at all.
	Net []Endpoint
	// Unconfined runs the command directly, with bulkhead's full
	// environment and no ruleset: for tests that show the sandbox bites.
	Unconfined bool
	// Without leaves mechanisms out: for tests that show what each one
	// stops by itself.
	Without []Mechanism
	// Deny are folders no grant may reach (bulkhead's data directory and
	// config folder): a command whose grants reach one — as they lead
	// when it starts, links resolved — does not start, and in its mount
	// namespace each is an empty folder (nothing in it can be read,
	// listed or even stat'ed).
	Deny []string
}

// Overlay is the writable layer of one folder: Upper holds what the
// command wrote (overlayfs's upper directory: new and changed files,
// whiteouts for what it removed), Work is overlayfs's work directory
// beside it, on the same file system. Both lie outside every folder the
// command is granted (in bulkhead's data directory, which it never
// sees).
type Overlay struct {
	Upper string `json:"upper"`
	Work  string `json:"work"`
}

// spec is a Policy as it travels to the launcher's stages: as a file
// they read on fd 3 (specFD), never as an argument (a command sees the
// arguments of the namespaces' first process in /proc/1/cmdline).
type spec struct {
	// Command is the command and its arguments.
	Command     []string
	RW, RO, Own []string `json:",omitempty"`
	// Layers are the layers of RW's folders (Policy.Layers).
	Layers  map[string]Overlay `json:",omitempty"`
	Net     []Endpoint         `json:",omitempty"`
	Without []Mechanism        `json:",omitempty"`
	// Flat is set by the launcher for the command's stage when it runs
	// without namespaces (the network grants are then ports on any
	// host, and no folder can be staged).
	Flat bool `json:",omitempty"`
	// Shm: /dev/shm is the command's own (a tmpfs the namespaces' first
	// process mounted), so it may write there.
	Shm bool `json:",omitempty"`
	// Staged are the folders of RW the namespaces' first process
	// mounted as overlays; the others of RW (where it could not) are
	// granted read-only.
	Staged []string `json:",omitempty"`
	// Deny are folders no grant may reach (bulkhead's data directory):
	// checked again where the rules are made, on the paths as they are
	// then.
	Deny []string `json:",omitempty"`
}

// Staging is the mechanism that stages a command's writes in the
// folders it shares with the user (overlay_linux.go). Left out (for the
// tests that show what it keeps), the command writes those folders
// directly.
const Staging Mechanism = "overlay"

func (s spec) without(m Mechanism) bool { return slices.Contains(s.Without, m) }

// specFD is the descriptor a stage reads its spec from.
const specFD = 3

// parseStage reads a stage's spec (on specFD): the policy and the
// command.
func parseStage(args []string) (spec, string, []string, error) {
	var s spec
	if len(args) != 0 {
		return s, "", nil, errors.New("a stage takes no arguments: its policy and command come on fd 3")
	}
	f := os.NewFile(specFD, "spec")
	if f == nil {
		return s, "", nil, errors.New("no policy on fd 3")
	}
	b, err := io.ReadAll(io.LimitReader(f, 16<<20))
	f.Close()
	if err != nil {
		return s, "", nil, fmt.Errorf("the policy: %w", err)
	}
	if err := json.Unmarshal(b, &s); err != nil {
		return s, "", nil, fmt.Errorf("the policy: %w", err)
	}
	if len(s.Command) == 0 {
		return s, "", nil, errors.New("the policy names no command")
	}
	return s, s.Command[0], s.Command[1:], nil
}

// systemRead are the folders every command may read: the system's
// programs and libraries and the kernel's views of the process. None of
// them holds the user's data. /etc is read file by file (etcFiles), /dev
// device by device (devRead, systemWrite): not the user's terminals
// (/dev/pts), not shared memory (/dev/shm, unless it is the command's
// own), not input or sound devices.
var systemRead = []string{"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/opt", "/proc", "/sys", "/nix", "/snap",
	// where /etc/resolv.conf leads on systems that manage it
	"/run/systemd/resolve", "/run/resolvconf"}

// devRead are the device files every command may read.
var devRead = []string{"/dev/random", "/dev/urandom"}

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
	for _, e := range p.Net {
		if err := e.Valid(); err != nil {
			return nil, nil, fmt.Errorf("sandbox: %w", err)
		}
	}
	exe, err := self()
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: find bulkhead's own executable: %w", err)
	}
	tmp, err := os.MkdirTemp("", "bulkhead-app-")
	if err != nil {
		return nil, nil, fmt.Errorf("sandbox: a temporary folder: %w", err)
	}
	s := spec{Command: append([]string{name}, args...), RW: p.ReadWrite, RO: p.ReadOnly, Own: append(slices.Clone(p.Own), tmp), Layers: p.Layers, Net: p.Net, Without: p.Without, Deny: p.Deny}
	sf, err := specFile(s)
	if err != nil {
		_ = os.RemoveAll(tmp)
		return nil, nil, fmt.Errorf("sandbox: %w", err)
	}
	cleanup := func() {
		sf.Close()
		_ = os.RemoveAll(tmp)
	}
	cmd := exec.CommandContext(ctx, exe, Arg)
	cmd.ExtraFiles = []*os.File{sf} // specFD
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
