//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock"
	"golang.org/x/sys/unix"
)

// execStage confines this process and becomes the command: it drops
// every capability (and any way to regain one), sets no_new_privs,
// restricts itself with Landlock and the seccomp filter, and executes
// the command, which keeps all of it and passes it on to whatever it
// starts.
func execStage(args []string) int {
	// Capabilities and the seccomp filter are a thread's: this one's
	// pass to the program it executes.
	runtime.LockOSThread()
	s, name, cargs, err := parseStage(args)
	if err != nil {
		return fail(err.Error())
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return fail("start " + name + ": " + startError(err))
	}
	if err := dropCapabilities(); err != nil {
		return fail("drop capabilities: " + err.Error())
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs: " + err.Error())
	}
	if !s.without(Landlock) {
		if err := restrict(s); err != nil {
			return fail("restrict the command with Landlock: " + err.Error())
		}
	}
	if !s.without(Seccomp) && seccompAvailable {
		// UDP (name resolution without namespaces) only where Landlock
		// keeps it to port 53 (ABI 10): else a grant would open UDP to
		// every host and port.
		abi, _ := Status()
		if err := installFilter(filterOptions{tcp: len(s.Net) > 0, udp: len(s.Net) > 0 && s.Flat && abi >= 10 && !s.without(Landlock)}); err != nil {
			return fail(err.Error())
		}
	}
	err = syscall.Exec(path, append([]string{name}, cargs...), os.Environ())
	return fail("start " + name + ": " + err.Error())
}

// The secure bits that keep root from gaining capabilities at exec.
const (
	secbitNoRoot             = 1 << 0
	secbitNoRootLocked       = 1 << 1
	secbitNoSetuidFixup      = 1 << 2
	secbitNoSetuidFixupLock  = 1 << 3
	secbitNoCapAmbientRaise  = 1 << 6
	secbitNoCapAmbientLocked = 1 << 7
)

// dropCapabilities leaves this thread with none: the bounding set
// emptied and root's exec rule turned off (where it may: with
// CAP_SETPCAP, which a root user and the namespaces' first process
// have), the ambient set cleared, then every set emptied.
func dropCapabilities() error {
	for c := 0; c < 64; c++ {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0); err != nil {
			break // EINVAL past the last one; EPERM without CAP_SETPCAP (a user with none)
		}
	}
	_ = unix.Prctl(unix.PR_SET_SECUREBITS, secbitNoRoot|secbitNoRootLocked|secbitNoSetuidFixup|secbitNoSetuidFixupLock|
		secbitNoCapAmbientRaise|secbitNoCapAmbientLocked, 0, 0, 0)
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return err
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	return unix.Capset(&hdr, &data[0])
}

// restrict is the command's Landlock ruleset: the system's folders and
// what of /etc and /dev programs need, read only; the spec's folders; the
// granted TCP ports; and (from ABI 6) no abstract unix socket or signal
// outside the command's domain, (from ABI 9) no pathname unix socket.
// Every path is opened here, once, and the rule made on what was opened
// (/proc/self/fd/N): a path that leads — links resolved as they are now
// — into a denied folder (bulkhead's data directory), or holds one,
// fails the command, so a link swapped in after bulkhead checked its
// grants leads nowhere.
func restrict(s spec) error {
	var deny []string
	for _, d := range s.Deny {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			deny = append(deny, r)
		} else {
			deny = append(deny, filepath.Clean(d))
		}
	}
	var keep []*os.File
	defer func() {
		for _, f := range keep {
			f.Close()
		}
	}()
	// opened opens each path (a missing one is skipped) and returns the
	// paths to make rules on, folders and files apart.
	opened := func(paths []string) (dirs, files []string, err error) {
		for _, p := range paths {
			f, err := os.OpenFile(p, unix.O_PATH|unix.O_CLOEXEC, 0)
			if err != nil {
				continue
			}
			real, err := os.Readlink(fmt.Sprintf("/proc/self/fd/%d", f.Fd()))
			if err != nil {
				f.Close()
				return nil, nil, err
			}
			for _, d := range deny {
				if within(real, d) || within(d, real) {
					f.Close()
					return nil, nil, fmt.Errorf("%s leads to %s, which holds or lies in bulkhead's data directory (%s)", p, real, d)
				}
			}
			keep = append(keep, f)
			at := fmt.Sprintf("/proc/self/fd/%d", f.Fd())
			var st unix.Stat_t
			if unix.Fstat(int(f.Fd()), &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR {
				dirs = append(dirs, at)
			} else {
				files = append(files, at)
			}
		}
		return dirs, files, nil
	}
	var rules []ll.Rule
	for _, g := range []struct {
		paths []string
		rw    bool
	}{
		{systemRead, false}, {etcDirs, false}, {etcFiles, false}, {devRead, false}, {systemWrite, true},
		{append(slices.Clone(s.RO), s.readOnly()...), false}, {s.writable(), true}, {s.Own, true}, {shm(s), true},
	} {
		dirs, files, err := opened(g.paths)
		if err != nil {
			return err
		}
		if g.rw {
			// WithRefer: a file may be moved or linked from one folder to
			// another within them (git mv d1/f d2/f, a rename across
			// folders), which Landlock refuses with EXDEV without it.
			rules = append(rules, ll.RWDirs(dirs...).WithRefer(), ll.RWFiles(files...))
		} else {
			rules = append(rules, ll.RODirs(dirs...), ll.ROFiles(files...))
		}
	}
	for _, e := range s.Net {
		rules = append(rules, ll.ConnectTCP(e.Port))
	}
	if s.Flat && len(s.Net) > 0 {
		// name resolution, where the kernel restricts UDP (ABI 10)
		rules = append(rules, ll.ConnectSendUDP(53), ll.BindUDP(0))
	}
	return ll.V11.BestEffort().Restrict(rules...)
}

// writable are the folders of RW the command may write: those staged
// (all of them when staging is left out, for the tests that show what it
// alone keeps).
func (s spec) writable() []string {
	if s.without(Staging) {
		return s.RW
	}
	return slices.DeleteFunc(slices.Clone(s.RW), func(d string) bool { return !slices.Contains(s.Staged, d) })
}

// readOnly are the folders of RW that could not be staged: read-only.
func (s spec) readOnly() []string {
	if s.without(Staging) {
		return nil
	}
	return slices.DeleteFunc(slices.Clone(s.RW), func(d string) bool { return slices.Contains(s.Staged, d) })
}

// shm is /dev/shm when it is the command's own.
func shm(s spec) []string {
	if s.Shm {
		return []string{"/dev/shm"}
	}
	return nil
}

// within reports whether p is dir or lies in it.
func within(p, dir string) bool {
	return p == dir || dir == "/" || strings.HasPrefix(p, dir+string(filepath.Separator))
}
