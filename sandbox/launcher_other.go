//go:build !linux

package sandbox

import (
	"os"
	"syscall"
	"time"
)

const waitDelay = 3 * time.Second

func launcherAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// Status reports that this system has no Landlock.
func Status() (int, error) { return 0, ErrNoLandlock }

// Launch runs the command without a ruleset when started as a launcher.
func Launch() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		launchable.Store(true)
		return
	}
	os.Exit(126)
}

// self is this executable.
func self() (string, error) { return os.Executable() }
