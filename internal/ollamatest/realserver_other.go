//go:build !unix

package ollamatest

import (
	"os/exec"
	"time"
)

func setProcessGroup(*exec.Cmd) {}

func killProcessGroup(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func becomeSubreaper() {}

func reapGroup(int, time.Duration) {}
