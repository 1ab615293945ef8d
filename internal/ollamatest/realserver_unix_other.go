//go:build unix && !linux

package ollamatest

import (
	"syscall"
	"time"
)

func setParentDeathSignal(*syscall.SysProcAttr) {}

func becomeSubreaper() {}

func reapGroup(int, time.Duration) {}
