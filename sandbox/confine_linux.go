//go:build linux

package sandbox

import (
	"errors"
	"os"
	"os/exec"
	"runtime"
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
		if err := installFilter(filterOptions{tcp: len(s.Net) > 0, udp: len(s.Net) > 0 && s.Flat}); err != nil {
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
// what of /etc programs need, read only; the spec's folders; the granted
// TCP ports; and (from ABI 6) no abstract unix socket or signal outside
// the command's domain, (from ABI 9) no pathname unix socket.
func restrict(s spec) error {
	rules := []ll.Rule{
		ll.RODirs(systemRead...).IgnoreIfMissing(),
		ll.RWFiles(systemWrite...).IgnoreIfMissing(),
	}
	etcD, etcF := split(etcDirs)
	_, more := split(etcFiles)
	roDirs, roFiles := split(s.RO)
	rwDirs, rwFiles := split(s.RW)
	// A granted path may be a folder or a single file (an executable
	// whose folder holds more than it should read): Landlock takes a
	// file's rights apart from a folder's.
	for _, r := range []ll.FSRule{ll.RODirs(etcD...), ll.ROFiles(append(etcF, more...)...), ll.RODirs(roDirs...), ll.ROFiles(roFiles...), ll.RWDirs(rwDirs...), ll.RWFiles(rwFiles...)} {
		rules = append(rules, r.IgnoreIfMissing())
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
