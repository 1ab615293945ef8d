//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// killGroup signals the child's process group: SIGKILL when hard, else
// SIGTERM.
func killGroup(cmd *exec.Cmd, hard bool) {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
