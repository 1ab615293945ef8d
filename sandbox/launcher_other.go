//go:build !linux

package sandbox

import (
	"context"
	"os"
	"syscall"
	"time"
)

const waitDelay = 3 * time.Second

func launcherAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Status reports that this system has no Landlock.
func Status() (int, error) { return 0, ErrNoLandlock }

// Launch refuses to run a command when started as a launcher: this
// system has none of the layers.
func Launch() {
	if len(os.Args) < 2 || (os.Args[1] != Arg && os.Args[1] != argInit && os.Args[1] != argExec && os.Args[1] != argProbe) {
		launchable.Store(true)
		return
	}
	os.Exit(126)
}

// Probe reports that no layer is built for this system.
func Probe(context.Context, Policy) Report {
	return Report{Err: "the sandbox is built for Linux only: out-of-process apps run with a minimal environment and nothing else"}
}

// self is this executable.
func self() (string, error) { return os.Executable() }

// NoDump is not built for this system.
func NoDump() error { return nil }

// Dumpable: this system's processes may be read by their user.
func Dumpable() bool { return true }
