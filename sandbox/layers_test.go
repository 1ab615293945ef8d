package sandbox_test

import (
	"bufio"
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// layer finds a layer of a report by name.
func layer(t *testing.T, r sandbox.Report, name string) sandbox.Layer {
	t.Helper()
	for _, l := range r.Layers {
		if l.Name == name {
			return l
		}
	}
	t.Fatalf("no layer %q in %+v", name, r)
	return sandbox.Layer{}
}

// namespaced skips a test that needs the namespaces where this system
// refuses them (a container without user namespaces, say).
func namespaced(t *testing.T) {
	t.Helper()
	landlocked(t)
	if r := sandbox.Probe(context.Background(), sandbox.Policy{}); r.Namespaces != "" {
		t.Skipf("no namespaces here (%s): the layers they hold are degraded, as doctor says", r.Namespaces)
	}
}

// A command tries, from inside the sandbox, everything the sandbox must
// keep from it — a file it was not granted, /etc/shadow, a pathname and
// an abstract unix socket listening outside, a TCP and a UDP port on
// 127.0.0.1, the environment of a process outside and a signal to it,
// the user's keyring, a capability — and every attempt fails.
func TestEveryLayerHolds(t *testing.T) {
	t.Parallel()
	namespaced(t)
	r := sandbox.Probe(context.Background(), sandbox.Policy{})
	if r.Err != "" {
		t.Fatal(r.Err)
	}
	for _, l := range r.Layers {
		if !l.Holds {
			t.Errorf("%s (by %s) does not hold: reached %v; %s", l.Name, l.By, l.Reached, l.Detail)
		}
	}
	if !r.OK() || !strings.Contains(r.Summary(), "hold") {
		t.Errorf("summary %q", r.Summary())
	}
}

// Each mechanism, left out alone, opens what it alone keeps: so each is
// shown to bite, and the layers that hold without it are the others'.
const (
	plantedFile = "a file written straight into a folder it may write"
	hiddenName  = "the name of a file in bulkhead's data directory"
)

func TestEachMechanismBites(t *testing.T) {
	t.Parallel()
	namespaced(t)
	abi, _ := sandbox.Status()
	root := os.Getuid() == 0
	type testCase struct {
		without []sandbox.Mechanism
		reached map[string][]string // layer -> what got through
		open    []string            // layers degraded with nothing reached
	}
	cases := []testCase{
		{without: []sandbox.Mechanism{sandbox.Seccomp},
			reached: map[string][]string{"unix sockets": {"a pathname unix socket"}, "network": {"a listening socket"}, "keyring": {"the user keyring"}}},
		{without: []sandbox.Mechanism{sandbox.Namespaces},
			reached: map[string][]string{"bulkhead's folders": {hiddenName}},
			open:    []string{"network", "processes", "staged writes"}},
		{without: []sandbox.Mechanism{sandbox.Landlock},
			reached: map[string][]string{"files": {"a file in a folder not granted"}, "terminals": {"a terminal of yours"}}},
		{without: []sandbox.Mechanism{sandbox.Seccomp, sandbox.Namespaces, sandbox.Landlock},
			reached: map[string][]string{"files": {"a file in a folder not granted"}, "unix sockets": {"a pathname unix socket"},
				"abstract sockets": {"an abstract unix socket"}, "network": {"TCP to 127.0.0.1", "UDP to 127.0.0.1", "a listening socket"},
				"capabilities": {"a user namespace of its own"}, "terminals": {"a terminal of yours", "a file of yours in /dev/shm"},
				"keyring": {"the user keyring"}, "staged writes": {plantedFile}, "bulkhead's folders": {hiddenName}}},
		{without: []sandbox.Mechanism{sandbox.Staging},
			reached: map[string][]string{"staged writes": {plantedFile}}},
	}
	if root {
		// only root's own DAC rights would let it read /etc/shadow
		cases[2].reached["/etc"] = []string{"/etc/shadow"}
		cases[3].reached["/etc"] = []string{"/etc/shadow"}
		// a root process's environment stays closed to a command with no
		// capabilities (its permitted set is no subset of the command's)
		cases[3].reached["processes"] = []string{"a signal to a process outside"}
	} else {
		cases[3].reached["processes"] = []string{"the environment of a process outside", "a signal to a process outside"}
		// the kernel's limit of user namespaces is root's to set: an
		// ordinary user's command is kept from one by the filter alone
		cases[0].reached["capabilities"] = []string{"a user namespace of its own"}
	}
	if abi >= 4 {
		// Landlock's TCP rule alone keeps TCP shut; UDP (before ABI 10) is seccomp's and the namespace's
		cases = append(cases, testCase{without: []sandbox.Mechanism{sandbox.Seccomp, sandbox.Namespaces},
			reached: map[string][]string{"unix sockets": {"a pathname unix socket"}, "network": {"UDP to 127.0.0.1", "a listening socket"},
				"capabilities": {"a user namespace of its own"}, "keyring": {"the user keyring"}, "bulkhead's folders": {hiddenName}},
			open: []string{"processes", "staged writes"}})
	}
	// What this system lets the test make to try: a terminal, a file in
	// /dev/shm.
	pt, ptErr := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if ptErr == nil {
		pt.Close()
	}
	_, shmErr := os.Stat("/dev/shm")
	for _, c := range cases {
		for name, want := range c.reached {
			c.reached[name] = slices.DeleteFunc(want, func(w string) bool {
				return w == "a terminal of yours" && ptErr != nil || w == "a file of yours in /dev/shm" && shmErr != nil
			})
			if len(c.reached[name]) == 0 {
				delete(c.reached, name)
			}
		}
	}
	for _, c := range cases {
		r := sandbox.Probe(context.Background(), sandbox.Policy{Without: c.without})
		if r.Err != "" {
			t.Fatalf("without %v: %s", c.without, r.Err)
		}
		for _, l := range r.Layers {
			want := c.reached[l.Name]
			if abi >= 10 && l.Name == "network" {
				want = slices.DeleteFunc(slices.Clone(want), func(s string) bool {
					return strings.HasPrefix(s, "UDP") && !slices.Contains(c.without, sandbox.Landlock)
				})
			}
			if !slices.Equal(l.Reached, want) {
				t.Errorf("without %v, %s: reached %v, want %v", c.without, l.Name, l.Reached, want)
			}
			degraded := len(want) > 0 || slices.Contains(c.open, l.Name)
			if l.Name == "processes" && slices.Contains(c.without, sandbox.Namespaces) {
				degraded = true
			}
			if l.Holds == degraded {
				t.Errorf("without %v, %s: holds %v (reached %v; %s)", c.without, l.Name, l.Holds, l.Reached, l.Detail)
			}
		}
	}
}

// echoServer listens on addr and answers each line with "echo: " and the
// line; it counts connections.
func echoServer(t *testing.T, addr string) (net.Listener, *atomic.Int32) {
	t.Helper()
	l, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	n := new(atomic.Int32)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			n.Add(1)
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte("echo: " + line))
			}()
		}
	}()
	return l, n
}

// dial runs this test binary in the sandbox under p, to connect to addr.
func dial(t *testing.T, p sandbox.Policy, addr string) string {
	t.Helper()
	exe, _ := filepath.EvalSymlinks(os.Args[0])
	exe, _ = filepath.Abs(exe)
	p.ReadOnly = append(p.ReadOnly, exe)
	p.Env = append(p.Env, "SANDBOX_TEST_DIAL="+addr)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dir := t.TempDir()
	cmd, cleanup, err := sandbox.Command(ctx, p, dir, exe)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return strings.TrimSpace(string(out))
}

func endpoint(t *testing.T, s string) sandbox.Endpoint {
	t.Helper()
	e, err := sandbox.ParseEndpoint(s)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// A network grant opens its endpoint and nothing else: the command
// reaches the granted host and port (by address, by "localhost", by a
// host name, by an address of this machine that is not loopback), and
// not another port on the same host, nor anything without a grant.
func TestNetworkGrantsOpenTheirEndpointAlone(t *testing.T) {
	t.Parallel()
	namespaced(t)
	granted, n := echoServer(t, "127.0.0.1:0")
	other, m := echoServer(t, "127.0.0.1:0")
	gaddr, oaddr := granted.Addr().String(), other.Addr().String()
	_, port, _ := net.SplitHostPort(gaddr)

	if out := dial(t, sandbox.Policy{}, gaddr); !strings.Contains(out, "dial failed") {
		t.Fatalf("without a grant the command reached %s: %s", gaddr, out)
	}
	grant := []sandbox.Endpoint{endpoint(t, gaddr)}
	if out := dial(t, sandbox.Policy{Net: grant}, gaddr); out != "got: echo: hello from inside" {
		t.Fatalf("the granted endpoint %s: %s", gaddr, out)
	}
	if out := dial(t, sandbox.Policy{Net: grant}, oaddr); !strings.Contains(out, "dial failed") {
		t.Fatalf("a grant of %s let the command reach %s: %s", gaddr, oaddr, out)
	}
	if out := dial(t, sandbox.Policy{Net: []sandbox.Endpoint{endpoint(t, "localhost:"+port)}}, "localhost:"+port); out != "got: echo: hello from inside" {
		t.Fatalf("localhost:%s: %s", port, out)
	}
	if m.Load() != 0 {
		t.Fatalf("the other listener was reached %d times", m.Load())
	}
	if n.Load() != 2 {
		t.Fatalf("the granted listener was reached %d times, want 2", n.Load())
	}

	// A host name this machine resolves to itself: inside, the name is
	// the sandbox's own address for it, and the launcher carries the
	// connection to the name outside.
	if host, err := os.Hostname(); err == nil {
		if addrs, err := net.LookupHost(host); err == nil && slices.Contains(addrs, "127.0.0.1") {
			ep := endpoint(t, net.JoinHostPort(host, port))
			if out := dial(t, sandbox.Policy{Net: []sandbox.Endpoint{ep}}, ep.String()); out != "got: echo: hello from inside" {
				t.Fatalf("host name %s: %s", ep, out)
			}
		} else {
			t.Logf("%s does not resolve to 127.0.0.1 here (%v %v): the host-name case is not tried", host, addrs, err)
		}
	}
	// An address of this machine's own, not loopback.
	if ip := ownIPv4(); ip != "" {
		l, k := echoServer(t, ip+":0")
		ep := endpoint(t, l.Addr().String())
		if out := dial(t, sandbox.Policy{Net: []sandbox.Endpoint{ep}}, ep.String()); out != "got: echo: hello from inside" || k.Load() != 1 {
			t.Fatalf("address %s: %s (%d connections)", ep, out, k.Load())
		}
	}
}

// Without namespaces (where the system refuses them), a grant opens its
// port — Landlock's TCP rule — and other ports stay shut.
func TestNetworkGrantsWithoutNamespaces(t *testing.T) {
	t.Parallel()
	landlocked(t)
	if abi, _ := sandbox.Status(); abi < 4 {
		t.Skip("Landlock before ABI 4 has no TCP rules")
	}
	granted, _ := echoServer(t, "127.0.0.1:0")
	other, _ := echoServer(t, "127.0.0.1:0")
	p := sandbox.Policy{Net: []sandbox.Endpoint{endpoint(t, granted.Addr().String())}, Without: []sandbox.Mechanism{sandbox.Namespaces}}
	if out := dial(t, p, granted.Addr().String()); out != "got: echo: hello from inside" {
		t.Fatalf("granted: %s", out)
	}
	if out := dial(t, p, other.Addr().String()); !strings.Contains(out, "dial failed") {
		t.Fatalf("another port: %s", out)
	}
	if out := dial(t, sandbox.Policy{Without: []sandbox.Mechanism{sandbox.Namespaces}}, granted.Addr().String()); !strings.Contains(out, "dial failed") {
		t.Fatalf("no grant: %s", out)
	}
}

// ownIPv4 is an IPv4 address of this machine that is not loopback, or "".
func ownIPv4() string {
	addrs, _ := net.InterfaceAddrs()
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() {
			return n.IP.String()
		}
	}
	return ""
}

// What programs need of /etc is there (users, names, the linker's
// cache); the shadow file is not.
func TestEtcHasWhatProgramsNeed(t *testing.T) {
	t.Parallel()
	landlocked(t)
	ws := t.TempDir()
	out, _ := run(t, sandbox.Policy{ReadWrite: []string{ws}}, ws, "id -un >/dev/null && echo users-ok; head -c 0 /etc/ld.so.cache && echo linker-ok; cat /etc/shadow >/dev/null 2>&1 || echo shadow-closed; ls /etc/ssh 2>&1 | head -1")
	for _, want := range []string{"users-ok", "linker-ok", "shadow-closed"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %s in %q", want, out)
		}
	}
}
