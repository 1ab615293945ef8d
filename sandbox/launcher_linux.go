//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	ll "github.com/landlock-lsm/go-landlock/landlock"
	llsys "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// waitDelay is how long Command waits for the launcher after asking it to
// stop.
const waitDelay = 3 * time.Second

func launcherAttr() *syscall.SysProcAttr {
	// The launcher hears SIGTERM when bulkhead goes away, and cleans up.
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
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

// Launch turns this process into the launcher when it was started as one
// (os.Args[1] == Arg): it runs the command and exits. Otherwise it
// returns at once. Call it first thing in main and in TestMain.
func Launch() {
	if len(os.Args) < 2 || os.Args[1] != Arg {
		launchable.Store(true)
		return
	}
	os.Exit(launch(os.Args[2:]))
}

func launch(args []string) int {
	var rw, ro []string
	i := 0
	for ; i < len(args) && args[i] != "--"; i += 2 {
		if i+1 >= len(args) {
			return fail("a flag without its value")
		}
		switch args[i] {
		case "--rw":
			rw = append(rw, args[i+1])
		case "--ro":
			ro = append(ro, args[i+1])
		default:
			return fail("unknown flag " + args[i])
		}
	}
	if i+1 >= len(args) {
		return fail("no command")
	}
	name, cargs := args[i+1], args[i+2:]
	// Orphans of the command (a child that called setsid) become ours,
	// so that we can end them.
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fail("become the reaper of the command's processes: " + err.Error())
	}
	if os.Getppid() == 1 {
		return fail("bulkhead is gone") // it died before Pdeathsig was set
	}
	rules := []ll.Rule{
		ll.RODirs(systemRead...).IgnoreIfMissing(),
		ll.RWFiles(systemWrite...).IgnoreIfMissing(),
	}
	// A granted path may be a folder or a single file (an executable
	// whose folder holds more than it should read): Landlock takes a
	// file's rights apart from a folder's.
	roDirs, roFiles := split(ro)
	rwDirs, rwFiles := split(rw)
	for _, r := range []ll.FSRule{ll.RODirs(roDirs...), ll.ROFiles(roFiles...), ll.RWDirs(rwDirs...), ll.RWFiles(rwFiles...)} {
		rules = append(rules, r.IgnoreIfMissing())
	}
	if err := ll.V5.BestEffort().RestrictPaths(rules...); err != nil {
		return fail("restrict the command with Landlock: " + err.Error())
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	cmd := exec.Command(name, cargs...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fail("start " + name + ": " + startError(err))
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	code := 0
	select {
	case err := <-done:
		code = exitCode(cmd, err)
	case <-sigs:
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		code = exitCode(cmd, <-done) // 128+9: killed, as a direct run would say
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	sweep()
	return code
}

// split sorts paths into folders and other files.
func split(paths []string) (dirs, files []string) {
	for _, p := range paths {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			files = append(files, p)
		} else {
			dirs = append(dirs, p)
		}
	}
	return dirs, files
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
