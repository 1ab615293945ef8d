//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// waitDelay is how long Command waits for the launcher after asking it to
// stop.
const waitDelay = 3 * time.Second

func launcherAttr() *syscall.SysProcAttr {
	// The launcher hears SIGTERM when bulkhead goes away, and cleans up.
	// It starts a session of its own: no controlling terminal, so a
	// command started from the user's terminal (doctor) cannot open
	// /dev/tty and write to it, or push input into it.
	return &syscall.SysProcAttr{Setsid: true, Pdeathsig: syscall.SIGTERM}
}

// specFile is s as a sealed in-memory file, for a stage to read on
// specFD.
func specFile(s spec) (*os.File, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("bulkhead-policy", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("a file for the policy: %w", err)
	}
	f := os.NewFile(uintptr(fd), "policy")
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, fmt.Errorf("write the policy: %w", err)
	}
	_, _ = unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE)
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Status reports the Landlock ABI version the kernel offers, or
// ErrNoLandlock.
func Status() (int, error) {
	v, err := llsys.LandlockGetABIVersion()
	if err != nil || v < 1 {
		return 0, ErrNoLandlock
	}
	return v, nil
}

// Launch turns this process into the launcher, or one of its stages,
// when it was started as one (os.Args[1] is Arg or a stage's argument):
// it does its part and exits. Otherwise it returns at once. Call it first
// thing in main and in TestMain.
func Launch() {
	if len(os.Args) < 2 {
		launchable.Store(true)
		return
	}
	switch os.Args[1] {
	case Arg:
		os.Exit(launch(os.Args[2:]))
	case argInit:
		os.Exit(initStage(os.Args[2:]))
	case argExec:
		os.Exit(execStage(os.Args[2:]))
	case argProbe:
		os.Exit(probeStage(os.Args[2:]))
	}
	launchable.Store(true)
}

// launch is the launcher: the process bulkhead starts. It runs the
// command in namespaces of its own where it can (initStage is their
// first process, and this process carries the command's granted
// connections), else confines it without them (execStage), and ends
// everything the command left when the command ends or bulkhead goes.
func launch(args []string) int {
	s, name, cargs, err := parseStage(args)
	if err != nil {
		return fail(err.Error())
	}
	// Orphans of the command (a child that called setsid) become ours,
	// so that we can end them.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("become the reaper of the command's processes: " + err.Error())
	}
	if os.Getppid() == 1 {
		return fail("bulkhead is gone") // it died before Pdeathsig was set
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	var child *exec.Cmd
	var fwd *forwarder
	if !s.without(Namespaces) {
		var refused bool
		child, fwd, refused, err = startInit(s, name, cargs)
		switch {
		case err != nil && !refused:
			return fail("start the sandbox's namespaces: " + err.Error())
		case err != nil:
			child = nil // namespaces refused here: confine without them
			if len(s.Net) > 0 {
				fmt.Fprintf(os.Stderr, "bulkhead sandbox: no namespaces here (%v): the network grants open their ports on every host\n", err)
			}
		}
	}
	if child == nil {
		s.Flat = true
		if len(s.RW) > 0 && !s.without(Staging) {
			// No mount namespace: no layer, so the folders an app may
			// write are granted read-only (doctor names it).
			fmt.Fprintf(os.Stderr, "bulkhead sandbox: no namespaces here: the folders granted to write are read-only (%s)\n", strings.Join(s.RW, ", "))
		}
		sf, err := specFile(s)
		if err != nil {
			return fail(err.Error())
		}
		child = exec.Command(selfPath(), argExec)
		child.Stdin, child.Stdout, child.Stderr = os.Stdin, os.Stdout, os.Stderr
		child.ExtraFiles = []*os.File{sf} // specFD
		child.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		err = child.Start()
		sf.Close()
		if err != nil {
			return fail("start " + name + ": " + startError(err))
		}
	}
	done := make(chan error, 1)
	go func() { done <- child.Wait() }()
	code := 0
	select {
	case err := <-done:
		code = exitCode(child, err)
	case <-sigs:
		_ = syscall.Kill(-child.Process.Pid, syscall.SIGKILL)
		_ = child.Process.Kill()
		code = exitCode(child, <-done) // 128+9: killed, as a direct run would say
	}
	_ = syscall.Kill(-child.Process.Pid, syscall.SIGKILL)
	fwd.close()
	sweep()
	return code
}

// sweep kills and reaps every process left that is ours: what the command
// left running, its own group or not.
func sweep() {
	self := os.Getpid()
	for range 50 {
		kids := children(self)
		if len(kids) == 0 {
			return
		}
		for _, pid := range kids {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// children lists the processes whose parent is pid.
func children(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces and parens.
		s := string(b)
		j := strings.LastIndexByte(s, ')')
		if j < 0 {
			continue
		}
		f := strings.Fields(s[j+1:])
		if len(f) > 1 {
			if ppid, _ := strconv.Atoi(f[1]); ppid == pid {
				out = append(out, p)
			}
		}
	}
	return out
}

func exitCode(cmd *exec.Cmd, err error) int {
	if ps := cmd.ProcessState; ps != nil {
		if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ps.ExitCode()
	}
	if err != nil {
		return 127
	}
	return 0
}

func startError(err error) string {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err.Error()
	}
	return err.Error()
}

func fail(msg string) int {
	fmt.Fprintln(os.Stderr, "bulkhead sandbox: "+msg)
	return 126
}

// self is how to start this executable again: through /proc/self/exe,
// which names the running binary even once its file is gone (a binary
// built by `go run`, or replaced by an upgrade, while a long-lived
// serving process still runs it).
func self() (string, error) {
	if _, err := os.Stat("/proc/self/exe"); err == nil {
		return "/proc/self/exe", nil
	}
	return os.Executable()
}

func selfPath() string {
	p, err := self()
	if err != nil {
		return os.Args[0]
	}
	return p
}

// NoDump makes this process undumpable: its children (an app's process
// among them) cannot read its memory or environment through /proc or
// ptrace it, even as the same user, and it leaves no core. The serving
// process calls it first thing.
func NoDump() error { return unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0) }

// Dumpable says whether this process may be read by its user's other
// processes (NoDump was not called).
func Dumpable() bool {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	return err != nil || v != 0
}
