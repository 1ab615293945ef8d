//go:build linux

package sandbox

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// targets are what the probe tries to reach from inside the sandbox:
// things outside it that each layer must keep from a command.
type targets struct {
	Secret   string // a file in a folder not granted
	Unix     string // a pathname unix socket listening outside
	Abstract string // an abstract unix socket listening outside ("@name")
	TCP      string // a TCP listener on 127.0.0.1 outside
	UDP      string // a UDP socket on 127.0.0.1 outside
	Pid      int    // the prober: a process outside
	Start    string // its start time (field 22 of its stat), to tell it from a namesake
	Pts      string // a terminal of the user's (/dev/pts/N), "" if none could be made
	Shm      string // a file of the user's in /dev/shm, "" if there is none
	// Work is a folder granted to write, a git work tree: what the
	// command writes there, a hook and a new .envrc among it, goes to
	// its layer and never into the folder itself.
	Work string
	// Hidden is a file in a folder the policy denies (bulkhead's data
	// directory, as it were): not even its name may be seen.
	Hidden string
}

// attempt is one try from inside: reached, or why not.
type attempt struct {
	Reached bool   `json:"reached"`
	Err     string `json:"err,omitempty"`
}

func try(err error) attempt {
	if err != nil {
		return attempt{Err: err.Error()}
	}
	return attempt{Reached: true}
}

// findings are the probe's answers.
type findings struct {
	Secret, Shadow, Unix, Abstract, TCP, UDP, Environ, Signal, Keyring attempt
	Pts, Shm, Listen, Userns                                           attempt
	Hook, Envrc, Ordinary, HiddenStat                                  attempt
	// Landed are the files the command wrote that reached the real
	// folder; Staged those found in its layer (read outside, after it
	// ended).
	Landed, Staged []string
	Cmdline        string // /proc/1/cmdline
	SeesProber     bool
	Caps           string // CapEff
	UserNS, NetNS  bool
	Seccomp        string // Seccomp: of /proc/self/status
}

// Probe runs a command in the sandbox (with p's policy, its own
// executable granted to read) that tries what every layer must stop: to
// read a file it was not granted and /etc/shadow, to connect to a
// pathname and an abstract unix socket, a TCP and a UDP port on
// 127.0.0.1, to see and signal a process outside and read its
// environment, to reach the user's keyring, and to hold a capability.
// Nothing is granted to it, so each attempt must fail.
func Probe(ctx context.Context, p Policy) Report {
	var r Report
	r.Namespaces = namespacesRefused()
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		r.Err = "bulkhead's own executable: " + err.Error()
		return r
	}
	dir, err := os.MkdirTemp("", "bulkhead-probe-")
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.RemoveAll(dir)
	tg := targets{Secret: filepath.Join(dir, "secret"), Unix: filepath.Join(dir, "probe.sock"), Pid: os.Getpid(), Start: startTime("self"),
		Work: filepath.Join(dir, "work"), Hidden: filepath.Join(dir, "data", "serve.key")}
	for _, d := range []string{filepath.Join(tg.Work, ".git", "hooks"), filepath.Dir(tg.Hidden)} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	for f, b := range map[string]string{tg.Secret: "probe secret", tg.Hidden: "probe key"} {
		if err := os.WriteFile(f, []byte(b), 0o600); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	// The work tree's layer lies in the denied folder, as a real one
	// lies in bulkhead's data directory.
	layer := Overlay{Upper: filepath.Join(filepath.Dir(tg.Hidden), "layer", "upper"), Work: filepath.Join(filepath.Dir(tg.Hidden), "layer", "work")}
	for _, d := range []string{layer.Upper, layer.Work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			r.Err = err.Error()
			return r
		}
	}
	p.ReadWrite = append(p.ReadWrite, tg.Work)
	p.Layers = maps.Clone(p.Layers)
	if p.Layers == nil {
		p.Layers = map[string]Overlay{}
	}
	p.Layers[tg.Work] = layer
	p.Deny = append(p.Deny, filepath.Dir(tg.Hidden))
	if pts, closePts := openPts(); pts != "" {
		defer closePts()
		tg.Pts = pts
	}
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		shm := filepath.Join("/dev/shm", filepath.Base(dir))
		if os.WriteFile(shm, []byte("probe shm"), 0o600) == nil {
			defer os.Remove(shm)
			tg.Shm = shm
		}
	}
	var heard atomic.Int32 // datagrams that got through
	closers, err := listenAll(&tg, &heard)
	defer func() {
		for _, c := range closers {
			c.Close()
		}
	}()
	if err != nil {
		r.Err = err.Error()
		return r
	}
	tj, _ := json.Marshal(tg)
	p.ReadOnly = append(p.ReadOnly, exe)
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd, cleanup, err := Command(ctx, p, dir, exe, argProbe, string(tj))
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer cleanup()
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		r.Err = fmt.Sprintf("the probe failed: %v %s", err, strings.TrimSpace(errOut.String()))
		return r
	}
	var f findings
	if err := json.Unmarshal(out.Bytes(), &f); err != nil {
		r.Err = fmt.Sprintf("the probe said %q: %v", out.String(), err)
		return r
	}
	time.Sleep(50 * time.Millisecond) // a datagram may still be on its way
	f.UDP.Reached = f.UDP.Reached && heard.Load() > 0
	shadowOpen := readable("/etc/shadow")
	// What it wrote must be in its layer, not in the folder.
	for _, name := range []string{"ordinary.txt", ".envrc", filepath.Join(".git", "hooks", "pre-commit")} {
		if _, err := os.Lstat(filepath.Join(tg.Work, name)); err == nil {
			f.Landed = append(f.Landed, name)
		}
		if _, err := os.Lstat(filepath.Join(layer.Upper, name)); err == nil {
			f.Staged = append(f.Staged, name)
		}
	}
	r.Layers = layers(f, tg, shadowOpen, p.Without)
	return r
}

// listenAll opens the outside ends the probe tries to reach; heard
// counts the datagrams that arrive.
func listenAll(tg *targets, heard *atomic.Int32) ([]interface{ Close() error }, error) {
	var out []interface{ Close() error }
	accept := func(l net.Listener) {
		go func() {
			for {
				c, err := l.Accept()
				if err != nil {
					return
				}
				c.Close()
			}
		}()
	}
	ul, err := net.Listen("unix", tg.Unix)
	if err != nil {
		return out, err
	}
	out = append(out, ul)
	accept(ul)
	name := make([]byte, 8)
	_, _ = rand.Read(name)
	tg.Abstract = "@bulkhead-probe-" + hex.EncodeToString(name)
	al, err := net.Listen("unix", tg.Abstract)
	if err != nil {
		return out, err
	}
	out = append(out, al)
	accept(al)
	tl, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return out, err
	}
	out = append(out, tl)
	accept(tl)
	tg.TCP = tl.Addr().String()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		return out, err
	}
	out = append(out, pc)
	tg.UDP = pc.LocalAddr().String()
	go func() {
		buf := make([]byte, 64)
		for {
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return
			}
			heard.Add(1)
		}
	}()
	return out, nil
}

// probeStage is the probe inside the sandbox: it tries each target and
// prints its findings as JSON.
func probeStage(args []string) int {
	var tg targets
	if len(args) != 1 || json.Unmarshal([]byte(args[0]), &tg) != nil {
		return fail("probe: want its targets")
	}
	var f findings
	if b, err := os.ReadFile(tg.Secret); err == nil && len(b) > 0 {
		f.Secret = attempt{Reached: true}
	} else {
		f.Secret = try(errOr(err))
	}
	_, err := os.ReadFile("/etc/shadow")
	f.Shadow = try(err)
	dial := func(network, addr string) attempt {
		c, err := net.DialTimeout(network, addr, 2*time.Second)
		if err == nil {
			c.Close()
		}
		return try(err)
	}
	f.Unix = dial("unix", tg.Unix)
	f.Abstract = dial("unix", tg.Abstract)
	f.TCP = dial("tcp4", tg.TCP)
	if c, err := net.Dial("udp4", tg.UDP); err != nil {
		f.UDP = try(err)
	} else {
		_, err = c.Write([]byte("probe"))
		f.UDP = try(err)
		c.Close()
	}
	pid := strconv.Itoa(tg.Pid)
	f.SeesProber = startTime(pid) == tg.Start && tg.Start != ""
	if b, err := os.ReadFile("/proc/" + pid + "/environ"); err == nil && f.SeesProber {
		f.Environ = attempt{Reached: len(b) > 0}
	} else {
		f.Environ = try(errOr(err))
	}
	if f.SeesProber {
		f.Signal = try(syscall.Kill(tg.Pid, 0))
	} else {
		f.Signal = attempt{Err: "no such process here"}
	}
	_, err = unix.KeyctlInt(unix.KEYCTL_GET_KEYRING_ID, unix.KEY_SPEC_USER_KEYRING, 0, 0, 0)
	f.Keyring = try(err)
	for _, x := range []struct {
		path string
		a    *attempt
	}{{tg.Pts, &f.Pts}, {tg.Shm, &f.Shm}} {
		if x.path == "" {
			*x.a = attempt{Err: "none outside"}
			continue
		}
		fd, err := os.Open(x.path)
		if err == nil {
			fd.Close()
		}
		*x.a = try(err)
	}
	// listen without bind: the kernel picks the port, and Landlock's
	// bind rule does not see it
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err != nil {
		f.Listen = try(err)
	} else {
		f.Listen = try(unix.Listen(fd, 1))
		unix.Close(fd)
	}
	// a user namespace of its own would hold every capability
	nu := exec.Command("/bin/true")
	nu.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWUSER}
	f.Userns = try(nu.Run())
	f.Hook = try(os.WriteFile(filepath.Join(tg.Work, ".git", "hooks", "pre-commit"), []byte("#!/bin/sh\n"), 0o755))
	f.Envrc = try(os.WriteFile(filepath.Join(tg.Work, ".envrc"), []byte("echo\n"), 0o644))
	f.Ordinary = try(os.WriteFile(filepath.Join(tg.Work, "ordinary.txt"), []byte("ok\n"), 0o644))
	_, err = os.Lstat(tg.Hidden)
	f.HiddenStat = try(err)
	cl, _ := os.ReadFile("/proc/1/cmdline")
	f.Cmdline = string(bytes.ReplaceAll(cl, []byte{0}, []byte{' '}))
	status, _ := os.ReadFile("/proc/self/status")
	f.Caps = field(string(status), "CapEff:")
	f.Seccomp = field(string(status), "Seccomp:")
	uidMap, _ := os.ReadFile("/proc/self/uid_map")
	f.UserNS = !strings.Contains(string(uidMap), "4294967295")
	if ifs, err := net.Interfaces(); err == nil {
		f.NetNS = len(ifs) == 1 && ifs[0].Flags&net.FlagLoopback != 0
	}
	b, _ := json.Marshal(f)
	os.Stdout.Write(b)
	return 0
}

func errOr(err error) error {
	if err == nil {
		return errors.New("empty")
	}
	return err
}

// field is the value of a "Name:\tvalue" line.
func field(s, name string) string {
	for _, l := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(l, name); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// startTime is field 22 of /proc/<pid>/stat, "" when unreadable.
func startTime(pid string) string {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func readable(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// namespacesRefused is why a command cannot get namespaces of its own
// here ("" when it can): a trivial process started with them.
func namespacesRefused() string {
	cmd := exec.Command("/bin/true")
	uid, gid := os.Getuid(), os.Getgid()
	cmd.SysProcAttr = &syscall.SysProcAttr{
		Cloneflags:  nsFlags,
		UidMappings: []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}},
		GidMappings: []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}},
	}
	if err := cmd.Run(); err != nil {
		return err.Error()
	}
	return ""
}

// layers reads the findings as the layers they show.
func layers(f findings, tg targets, shadowOpen bool, without []Mechanism) []Layer {
	abi, llErr := Status()
	ll := ""
	if llErr == nil && !containsMech(without, Landlock) {
		ll = fmt.Sprintf("Landlock ABI %d", abi)
	}
	sc := ""
	if f.Seccomp == "2" {
		sc = "seccomp"
	}
	by := func(parts ...string) string {
		var out []string
		for _, p := range parts {
			if p != "" {
				out = append(out, p)
			}
		}
		if len(out) == 0 {
			return "nothing"
		}
		return strings.Join(out, ", ")
	}
	ns := func(what string) string {
		if f.UserNS && f.NetNS && what == "network" {
			return "network namespace"
		}
		if f.UserNS && what == "pid" {
			return "pid namespace"
		}
		if f.UserNS && what == "mount" {
			return "mount namespace"
		}
		return ""
	}
	staging := ""
	switch {
	case f.Ordinary.Reached && len(f.Staged) > 0 && !containsMech(without, Staging):
		staging = "overlay (mount namespace)"
	case !f.Ordinary.Reached && !f.Hook.Reached && !f.Envrc.Reached:
		staging = "read-only folders"
	}
	landlockFrom := func(min int) string {
		if ll != "" && abi >= min {
			return ll
		}
		return ""
	}
	type try struct {
		what string
		a    attempt
	}
	layer := func(name, by, detail string, tries ...try) Layer {
		l := Layer{Name: name, By: by, Detail: detail, Holds: true}
		for _, t := range tries {
			if t.a.Reached {
				l.Reached = append(l.Reached, t.what)
				l.Holds = false
			}
		}
		return l
	}
	out := []Layer{
		layer("files", by(ll), "reads the system's folders and its own installation, writes only the folders its config grants; never bulkhead's data directory",
			try{"a file in a folder not granted", f.Secret}),
		layer("/etc", by(ll), "only what programs need to run: no shadow files, keys or saved secrets",
			try{"/etc/shadow", f.Shadow}),
		layer("unix sockets", by(sc, landlockFrom(9)), "connects to no socket of yours: ssh-agent, gpg-agent, D-Bus, docker, X11, bulkhead.sock",
			try{"a pathname unix socket", f.Unix}),
		layer("abstract sockets", by(ns("network"), landlockFrom(6), sc), "connects to no abstract unix socket outside its sandbox",
			try{"an abstract unix socket", f.Abstract}),
		layer("network", by(ns("network"), landlockFrom(4), sc), "no TCP or UDP endpoint but what a network grant names, and nothing that listens",
			try{"TCP to 127.0.0.1", f.TCP}, try{"UDP to 127.0.0.1", f.UDP}, try{"a listening socket", f.Listen}),
		layer("processes", by(ns("pid"), landlockFrom(1)), "sees its own processes only; not bulkhead's environment or memory",
			try{"the environment of a process outside", f.Environ}, try{"a signal to a process outside", f.Signal}),
		layer("capabilities", by("no_new_privs, every capability dropped", sc, ns("pid")), "holds no capability and cannot gain one (no user namespace of its own), whatever user bulkhead runs as",
			try{"a capability", attempt{Reached: strings.Trim(f.Caps, "0") != ""}}, try{"a user namespace of its own", f.Userns}),
		layer("terminals", by(ll), "reads none of your terminals (/dev/pts) nor your shared memory (/dev/shm)",
			try{"a terminal of yours", f.Pts}, try{"a file of yours in /dev/shm", f.Shm}),
		layer("keyring", by(sc), "cannot read your kernel keyring",
			try{"the user keyring", f.Keyring}),
		layer("staged writes", by(staging), "what it writes in a folder it shares with you goes to a layer of its own: it reaches the folder only as changes you accepted, each shown with its diff — a git hook or a new .envrc as much as any other file",
			try{"a file written straight into a folder it may write", attempt{Reached: len(f.Landed) > 0}}),
		layer("bulkhead's folders", by(ns("mount")), "bulkhead's data directory and config folder are empty to it: not a name in them can be seen; its policy is not in any process's arguments",
			try{"the name of a file in bulkhead's data directory", f.HiddenStat}, try{"its policy in /proc/1/cmdline", attempt{Reached: strings.Contains(f.Cmdline, tg.Work) || strings.Contains(f.Cmdline, filepath.Dir(tg.Hidden))}}),
	}
	if len(f.Landed) > 0 {
		out[9].Detail = "what it writes in a folder it may write lands there at once (" + strings.Join(f.Landed, ", ") + "): no layer of its own"
	} else if !f.Ordinary.Reached && f.Ordinary.Err != "" {
		out[9].Detail = "no layer can be made here (" + firstLine(f.Ordinary.Err) + "): the folders granted to write are read-only to it"
		out[9].Holds = false
	}
	if !shadowOpen {
		out[1].Detail += " (your user cannot read /etc/shadow either)"
	}
	if tg.Pts == "" && tg.Shm == "" {
		out[7].Detail += " (none could be made here to try)"
	}
	if f.SeesProber {
		out[5].Holds = false
		if out[5].Reached == nil {
			out[5].Detail = "lists your processes (no pid namespace here); their environment and memory stay closed"
		}
	}
	if !f.NetNS {
		out[4].Holds = false
		if out[4].Reached == nil {
			out[4].Detail = "an app without a network grant has no network; but with no network namespace here, a grant opens its port on every host"
		}
	}
	return out
}

func containsMech(ms []Mechanism, m Mechanism) bool {
	for _, x := range ms {
		if x == m {
			return true
		}
	}
	return false
}

// openPts makes a terminal of the user's (a pty pair), for the probe to
// try to read its slave; "" when none can be made here.
func openPts() (string, func()) {
	m, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		return "", nil
	}
	fd := int(m.Fd())
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		m.Close()
		return "", nil
	}
	n, err := unix.IoctlGetUint32(fd, unix.TIOCGPTN)
	if err != nil {
		m.Close()
		return "", nil
	}
	return fmt.Sprintf("/dev/pts/%d", n), func() { m.Close() }
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
