//go:build unix

package ollamatest

import (
	"os/exec"
	"syscall"
)

// setProcessGroup puts the server in its own process group, so that Kill
// also reaches the runner processes `ollama serve` forks.
func setProcessGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	setParentDeathSignal(cmd.SysProcAttr)
}

// killProcessGroup sends SIGKILL to the server's process group.
func killProcessGroup(cmd *exec.Cmd) error {
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil && err != syscall.ESRCH {
		return err
	}
	return nil
}
