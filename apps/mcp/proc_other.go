//go:build !unix

package mcp

import "os/exec"

// killGroup kills the child (there are no process groups to signal).
func killGroup(cmd *exec.Cmd, _ bool) { _ = cmd.Process.Kill() }
