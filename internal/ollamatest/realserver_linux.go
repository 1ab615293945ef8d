package ollamatest

import (
	"sync"
	"syscall"
	"time"
)

// setParentDeathSignal makes the kernel kill the server should the test
// binary die without running its cleanups (e.g. on a -timeout panic).
func setParentDeathSignal(a *syscall.SysProcAttr) {
	a.Pdeathsig = syscall.SIGKILL
}

var subreaperOnce sync.Once

// becomeSubreaper makes the test process the child subreaper of its
// descendants (prctl PR_SET_CHILD_SUBREAPER): when Kill takes down
// `ollama serve`, its orphaned runner processes are re-parented to the test
// process instead of init, so reapGroup can wait for them and no zombie is
// left behind (init in a container often does not reap).
func becomeSubreaper() {
	subreaperOnce.Do(func() {
		const prSetChildSubreaper = 36
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0)
	})
}

// reapGroup waits for the (killed) members of process group pgid that are
// children of the test process, for at most timeout.
func reapGroup(pgid int, timeout time.Duration) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			var ws syscall.WaitStatus
			_, err := syscall.Wait4(-pgid, &ws, 0, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil { // ECHILD: none left
				return
			}
		}
	}()
	select {
	case <-done:
	case <-time.After(timeout):
	}
}
