//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// nsFlags are the namespaces a command runs in: its own user (mapped to
// the user's uid and gid alone, so that nothing of the host's users is
// its to claim), processes, mounts, network and System V IPC.
const nsFlags = unix.CLONE_NEWUSER | unix.CLONE_NEWNS | unix.CLONE_NEWPID | unix.CLONE_NEWNET | unix.CLONE_NEWIPC

// initStatus is what the namespaces' first process says of its setup.
type initStatus struct {
	Proc   string `json:"proc,omitempty"`   // why /proc of its own could not be mounted
	Sys    string `json:"sys,omitempty"`    // why /sys of its own could not be mounted
	Userns string `json:"userns,omitempty"` // why the limit of user namespaces could not be set to 0
	Net    string `json:"net,omitempty"`    // why the loopback interface is not up
	Hosts  string `json:"hosts,omitempty"`  // why /etc/hosts is not the command's own
	Hidden string `json:"hidden,omitempty"` // why a folder of bulkhead's is not empty here
	// Staged: the folders granted to write whose overlay could not be
	// made (granted read-only instead), and why.
	Staged map[string]string `json:"staged,omitempty"`
	// Listening are the endpoints (by index) that have a listener, whose
	// sockets come with the message, in order.
	Listening []int             `json:"listening,omitempty"`
	Failed    map[string]string `json:"failed,omitempty"` // endpoint: why it has none
}

// startInit starts the namespaces' first process (initStage) and takes
// the listeners of the command's granted endpoints from it, which the
// launcher then serves (forward). refused means the namespaces could not
// be made here (no user namespaces for this user, a container that
// forbids them): the caller confines the command without them. Any other
// error fails the command.
func startInit(s spec, name string, cargs []string) (cmd *exec.Cmd, fwd *forwarder, refused bool, err error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, false, err
	}
	ours, theirs := os.NewFile(uintptr(pair[0]), "control"), os.NewFile(uintptr(pair[1]), "control")
	defer ours.Close()
	sf, err := specFile(s)
	if err != nil {
		theirs.Close()
		return nil, nil, false, err
	}
	defer sf.Close()
	cmd = exec.Command(selfPath(), argInit)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.ExtraFiles = []*os.File{sf, theirs} // specFD, ctlFD
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  nsFlags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
		// to mount /proc and set up the network; the command's stage
		// drops them all
		AmbientCaps: []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN, unix.CAP_SETPCAP},
		Setpgid:     true,
		Pdeathsig:   syscall.SIGKILL,
	}
	err = cmd.Start()
	theirs.Close()
	if err != nil {
		return nil, nil, true, err
	}
	st, ls, err := handshake(ours, len(s.Net))
	if err != nil {
		_ = cmd.Process.Kill() // the first process: the kernel ends the rest
		_ = cmd.Wait()
		return nil, nil, false, err
	}
	// What did not hold is said (an MCP server's stderr goes to the
	// log), never passed over.
	for what, why := range map[string]string{"a /proc of its own": st.Proc, "a /sys of its own": st.Sys,
		"its network": st.Net, "its /etc/hosts": st.Hosts, "bulkhead's folders hidden": st.Hidden} {
		if why != "" {
			fmt.Fprintf(os.Stderr, "bulkhead sandbox: %s: %s\n", what, why)
		}
	}
	for d, why := range st.Staged {
		fmt.Fprintf(os.Stderr, "bulkhead sandbox: %s is read-only to the app: no layer of its own could be made over it (%s)\n", d, why)
	}
	for ep, why := range st.Failed {
		fmt.Fprintf(os.Stderr, "bulkhead sandbox: no listener for the granted %s: %s\n", ep, why)
	}
	if len(ls) > 0 {
		byEndpoint := map[int]net.Listener{}
		for i, idx := range st.Listening {
			if idx >= 0 && idx < len(s.Net) && i < len(ls) {
				byEndpoint[idx] = ls[i]
			}
		}
		fwd = forward(s.Net, byEndpoint)
	}
	return cmd, fwd, false, nil
}

// handshake reads the first process's status and listeners.
func handshake(ctl *os.File, n int) (initStatus, []net.Listener, error) {
	var st initStatus
	c, err := net.FileConn(ctl)
	if err != nil {
		return st, nil, err
	}
	defer c.Close()
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return st, nil, errors.New("the control socket is not a unix socket")
	}
	_ = uc.SetReadDeadline(time.Now().Add(15 * time.Second))
	buf, oob := make([]byte, 64<<10), make([]byte, unix.CmsgSpace(4*max(n, 1)))
	nb, noob, _, _, err := uc.ReadMsgUnix(buf, oob)
	if err != nil {
		return st, nil, fmt.Errorf("the sandbox's first process: %w", err)
	}
	var fds []int
	if noob > 0 {
		msgs, err := unix.ParseSocketControlMessage(oob[:noob])
		if err != nil {
			return st, nil, err
		}
		for _, m := range msgs {
			got, err := unix.ParseUnixRights(&m)
			if err == nil {
				fds = append(fds, got...)
			}
		}
	}
	var ls []net.Listener
	closeAll := func() {
		for _, l := range ls {
			l.Close()
		}
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	if err := json.Unmarshal(buf[:nb], &st); err != nil {
		closeAll()
		return st, nil, fmt.Errorf("the sandbox's first process said %q: %w", buf[:nb], err)
	}
	for len(fds) > 0 {
		fd := fds[0]
		fds = fds[1:]
		unix.CloseOnExec(fd)
		f := os.NewFile(uintptr(fd), "listener")
		l, err := net.FileListener(f)
		f.Close()
		if err != nil {
			closeAll()
			return st, nil, err
		}
		ls = append(ls, l)
	}
	return st, ls, nil
}

// initStage is the namespaces' first process (pid 1 of the command's pid
// namespace): it mounts a /proc of the namespace, brings its network up
// with a listener per granted endpoint (handed to the launcher over fd
// 3), gives the command its own /etc/hosts, starts the command's stage
// and reaps every process of the namespace until the command ends. When
// it exits, the kernel ends whatever else runs in the namespace.
func initStage(args []string) int {
	s, name, _, err := parseStage(args)
	if err != nil {
		return fail(err.Error())
	}
	const ctl = specFD + 1
	unix.CloseOnExec(ctl)
	var st initStatus
	private := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, "")
	if private != nil {
		st.Proc = "make mounts private: " + private.Error()
	}
	// The folders it may write, each an overlay of its layer over the
	// real folder (in this namespace only), before bulkhead's folders —
	// where the layers lie — are hidden; a folder that cannot be staged
	// is granted read-only.
	if !s.without(Staging) {
		for _, d := range s.RW {
			layer, ok := s.Layers[d]
			if !ok {
				continue // read-only, as its caller chose: no layer was made
			}
			err := private
			if err == nil {
				err = mountOverlay(d, layer)
			}
			if err != nil {
				if st.Staged == nil {
					st.Staged = map[string]string{}
				}
				st.Staged[d] = err.Error()
				continue
			}
			s.Staged = append(s.Staged, d)
		}
	}
	// bulkhead's own folders: empty here.
	if private == nil {
		st.Hidden = hide(s.Deny)
	}
	// The working folder again by its name: through the overlay where
	// it is one of the folders staged (the one inherited is the folder
	// under the mount, which Landlock grants nothing in).
	if wd, err := os.Getwd(); err == nil {
		_ = os.Chdir(wd)
	}
	if private == nil {
		if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			st.Proc = "mount /proc: " + err.Error()
		} else if err := os.WriteFile("/proc/sys/user/max_user_namespaces", []byte("0\n"), 0); err != nil {
			// The filter refuses new user namespaces; this is the
			// kernel's own limit too, for this namespace and below, where
			// the user may set it (as root: an ordinary user's is the
			// filter's alone).
			st.Userns = err.Error()
		}
		// The namespace's own sysfs (its network's interfaces, not the
		// host's), and shared memory of its own.
		if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
			st.Sys = err.Error()
		}
		if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
			if err := unix.Mount("tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=64m,mode=1777"); err == nil {
				s.Shm = true
			}
		}
	}
	var fds []int
	if err := loUp(); err != nil {
		st.Net = err.Error()
	} else if len(s.Net) > 0 {
		pl := planNet(s.Net)
		st.Failed = map[string]string{}
		for i, e := range s.Net {
			if err := addLoopback(pl.addr[i]); err != nil {
				st.Failed[e.String()] = "address " + pl.addr[i].String() + ": " + err.Error()
				continue
			}
			fd, err := listenInside(pl.addr[i], e.Port)
			if err != nil {
				st.Failed[e.String()] = err.Error()
				continue
			}
			fds = append(fds, fd)
			st.Listening = append(st.Listening, i)
		}
		if slices.ContainsFunc(s.Net, func(e Endpoint) bool { _, err := netipAddr(e.Host); return err != nil }) {
			if err := bindHosts(pl.hosts); err != nil {
				st.Hosts = err.Error()
			}
		}
	}
	msg, _ := json.Marshal(st)
	var oob []byte
	if len(fds) > 0 {
		oob = unix.UnixRights(fds...)
	}
	err = unix.Sendmsg(ctl, msg, oob, nil, 0)
	for _, fd := range fds {
		unix.Close(fd)
	}
	unix.Close(ctl)
	if err != nil {
		return fail("hand the launcher the command's network: " + err.Error())
	}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	exe := selfPath()
	closeOnExecAll()
	sf, err := specFile(s)
	if err != nil {
		return fail(err.Error())
	}
	p, err := os.StartProcess(exe, []string{exe, argExec}, &os.ProcAttr{
		Env: os.Environ(), Files: []*os.File{os.Stdin, os.Stdout, os.Stderr, sf}, Sys: &syscall.SysProcAttr{Setpgid: true},
	})
	sf.Close()
	if err != nil {
		return fail("start " + name + ": " + err.Error())
	}
	go func() {
		<-sigs
		_ = syscall.Kill(-1, syscall.SIGKILL) // every other process of the namespace
	}()
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return 127
		}
		if pid == p.Pid {
			if ws.Signaled() {
				return 128 + int(ws.Signal())
			}
			return ws.ExitStatus()
		}
	}
}

// closeOnExecAll marks every descriptor above stderr close-on-exec.
func closeOnExecAll() {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// hide mounts an empty, read-only folder over each of dirs that exists
// (bulkhead's data directory and config folder): the command finds
// nothing in them, not even a name to stat. It returns what failed.
func hide(dirs []string) string {
	var failed []string
	for _, d := range dirs {
		fi, err := os.Stat(d)
		if err != nil || !fi.IsDir() {
			continue
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "size=4k,mode=0"); err != nil {
			failed = append(failed, d+": "+err.Error())
		}
	}
	return strings.Join(failed, "; ")
}
