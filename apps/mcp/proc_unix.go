//go:build unix

package mcp

import (
	"os/exec"
	"syscall"
)

// ownGroup puts the child in a process group of its own, so that stopping
// it also stops whatever it started (npx starts node, node may start more).
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// killGroup signals the child's process group: SIGKILL when hard, else
// SIGTERM.
func killGroup(cmd *exec.Cmd, hard bool) {
	sig := syscall.SIGTERM
	if hard {
		sig = syscall.SIGKILL
	}
	_ = syscall.Kill(-cmd.Process.Pid, sig)
}
