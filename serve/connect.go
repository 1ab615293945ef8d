package serve

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// ConnectOptions says how to reach the serving process.
type ConnectOptions struct {
	DataDir     string
	Fingerprint string
	// Keys are the configuration key by key (Keys), File the config file
	// read: a serving process that runs with another is named the keys
	// that differ.
	Keys    map[string]string
	File    string
	Version string
	Kind    string // what the client is, for doctor: "tui", "ask"…
	// Limited accepts a busy serving process of another configuration
	// as it is: the session may then call what only reads the data
	// directory (a list, a log, doctor's status), at once, and is told
	// so for the rest.
	Limited bool
	// Profile and Models are the session's folder, apps and models
	// (Session); zero: the serving process's.
	Profile *engine.ProfileSpec
	Models  engine.Models
	// Prompter answers the permission dialogs of this client's turns
	// (nil: each is denied).
	Prompter permissions.Prompter
	// Start starts a serving process for the data directory when none
	// answers (nil: Connect fails with ErrNotServed instead). It returns
	// when the process is started; exited, if not nil, is closed when it
	// exits, with its error in *exitErr.
	Start func() (exited <-chan error, err error)
	// Wait bounds how long a started process may take to listen
	// (0: 60 s).
	Wait time.Duration
}

// ErrNotServed says that no process serves the data directory.
var ErrNotServed = errors.New("no bulkhead serves this data directory")

// Connect opens a session with the process serving opts.DataDir,
// starting one (opts.Start) when none answers. A serving process of
// another protocol or configuration is replaced when no other client
// uses it; else Connect says so and how to stop it.
func Connect(ctx context.Context, opts ConnectOptions) (*Client, error) {
	if opts.Wait <= 0 {
		opts.Wait = 60 * time.Second
	}
	c := &Client{opts: opts, asks: map[string]func(hub.Event){}}
	conn, w, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	c.conn, c.welcome = conn, w
	return c, nil
}

// open connects to the serving process, starting or replacing one as
// Connect says; the connection's events and dialogs come to c.
func (c *Client) open(ctx context.Context) (*jsonrpc2.Conn, Welcome, error) {
	opts := c.opts
	started := false // a process this client started is used as it is
	for waits := 0; ; {
		conn, w, err := c.hello(ctx)
		if err != nil {
			if !notServed(err) {
				return nil, w, err
			}
			if opts.Start == nil {
				return nil, w, ErrNotServed
			}
			if err := start(ctx, opts); err != nil {
				return nil, w, err
			}
			started = true
			continue
		}
		same := w.Protocol == Protocol && w.Config == opts.Fingerprint
		if same && (w.Build == build || w.Busy || started) {
			return conn, w, nil
		}
		if !same && w.Busy && opts.Limited {
			return conn, w, nil
		}
		if !same && (w.Busy || started) {
			conn.Close()
			if w.Busy && !started && waits < busyWaits {
				// A client that just left may not be gone yet.
				waits++
				time.Sleep(100 * time.Millisecond)
				continue
			}
			why := differWords(opts, w)
			if w.Protocol != Protocol {
				why = fmt.Sprintf("it is bulkhead %s, speaking protocol %d; this is bulkhead %s, speaking %d", w.Version, w.Protocol, opts.Version, Protocol)
			}
			return nil, w, fmt.Errorf("the data directory %s is served by another bulkhead (pid %d), and %s; it is %w: finish there, or use another --data-dir (it exits by itself once unused)", opts.DataDir, w.Pid, why, ErrInUse)
		}
		// Idle, and of another configuration, protocol or build: this
		// client's own replaces it.
		replaced, err := replace(ctx, conn, w)
		if err != nil {
			return nil, w, err
		}
		if !replaced {
			// Another client came meanwhile.
			if same {
				return conn, w, nil
			}
			conn.Close()
		}
	}
}

// differWords say how a busy serving process's configuration differs
// from the client's: the keys, and what to do. Once a serving process
// reads its config file again on every change (and before it answers a
// client whose configuration differs), what still differs is either
// fixed while it runs or comes from somewhere else than its file.
func differWords(opts ConnectOptions, w Welcome) string {
	keys := Differ(opts.Keys, w.Keys)
	if len(keys) == 0 || w.Keys == nil {
		return fmt.Sprintf("its configuration differs from this one (%s here, %s there)", opts.Fingerprint, w.Config)
	}
	var fixed, other []string
	for _, k := range keys {
		if engine.RestartOnly[k] || k == "vanilla" {
			fixed = append(fixed, k)
		} else {
			other = append(other, k)
		}
	}
	var parts []string
	if len(other) > 0 {
		there, here := w.File, opts.File
		if there == "" {
			there = "no config file"
		}
		if here == "" {
			here = "no config file"
		}
		how := fmt.Sprintf("it runs with %s, this bulkhead with %s", there, here)
		if there == here {
			how = fmt.Sprintf("both read %s, and this bulkhead's differ through a flag or $BULKHEAD_*", there)
		}
		parts = append(parts, fmt.Sprintf("%s differ%s (%s; a session's folder, apps, models and Ollama host are its own and may differ)",
			strings.Join(other, ", "), plural(len(other)), how))
	}
	if len(fixed) > 0 {
		parts = append(parts, fmt.Sprintf("%s differ%s, and %s fixed while it runs", strings.Join(fixed, ", "), plural(len(fixed)), map[bool]string{true: "is", false: "are"}[len(fixed) == 1]))
	}
	return "its " + strings.Join(parts, "; its ")
}

func plural(n int) string {
	if n == 1 {
		return "s"
	}
	return ""
}

// ErrInUse is Connect's error when a busy serving process runs another
// configuration or protocol than the client's.
var ErrInUse = errors.New("in use")

// busyWaits is how many times (100 ms apart) a client of another
// configuration looks again at a busy serving process before it says so.
const busyWaits = 50

// replace asks the idle serving process at conn to exit and waits until
// it has (it holds the store until then). replaced is false, and conn
// still open, when it refused: another client came meanwhile.
func replace(ctx context.Context, conn *jsonrpc2.Conn, w Welcome) (replaced bool, err error) {
	if err := conn.Call(ctx, mShutdown, nil, nil); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
		return false, nil
	}
	conn.Close()
	return true, waitExit(ctx, w.Pid, 30*time.Second)
}

// notServed says whether a dial error means nothing listens there.
func notServed(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// start starts a serving process, one client at a time (a lock file in
// the data directory), and waits until it listens.
func start(ctx context.Context, opts ConnectOptions) error {
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory %s: %w", opts.DataDir, err)
	}
	d, err := openDataDir(opts.DataDir)
	if err != nil {
		return err
	}
	defer d.Close()
	sock := SocketPath(opts.DataDir)
	lock, err := os.OpenFile(d.at("serve.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	// Another client may have started one while this one waited.
	if c, err := dialDir(opts.DataDir); err == nil {
		c.Close()
		return nil
	}
	exited, err := opts.Start()
	if err != nil {
		return fmt.Errorf("start bulkhead serve: %w", err)
	}
	deadline := time.Now().Add(opts.Wait)
	// How long a held directory may stay held: a process closing it
	// takes a moment.
	held := time.Now().Add(15 * time.Second)
	for {
		if c, err := dialDir(opts.DataDir); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			if err != nil {
				return err
			}
			// It found the directory held: another process serves it,
			// or is closing it (a replaced one, an older bulkhead).
			// Try that one, then start again until the deadline.
			if c, derr := dialDir(opts.DataDir); derr == nil {
				c.Close()
				return nil
			}
			if time.Now().After(held) {
				return fmt.Errorf("bulkhead serve exited at once: the data directory %s is held by another bulkhead process that does not serve it (an older bulkhead? close it, or use another --data-dir)", opts.DataDir)
			}
			time.Sleep(100 * time.Millisecond)
			if exited, err = opts.Start(); err != nil {
				return fmt.Errorf("start bulkhead serve: %w", err)
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bulkhead serve did not listen on %s within %s (see bulkhead.log in the data directory)", sock, opts.Wait)
		}
	}
}

// waitExit waits until the process pid has exited (it has closed the
// data directory then).
func waitExit(ctx context.Context, pid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	if pid == os.Getpid() {
		// Served from this very process (tests): it cannot exit, and
		// stops serving when Serve returns.
		return nil
	}
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the bulkhead serving this data directory (pid %d) did not exit within %s", pid, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// hello dials the socket of the checked data directory and does the
// handshake (auth.go): it says nothing of the user's until the process
// there has shown it knows the data directory's key, and gets a session
// by showing it does too.
func (c *Client) hello(ctx context.Context) (*jsonrpc2.Conn, Welcome, error) {
	var w Welcome
	d, err := openDataDir(c.opts.DataDir)
	if err != nil {
		return nil, w, err
	}
	defer d.Close()
	addr, err := d.socket()
	if err != nil {
		return nil, w, err
	}
	nc, err := net.Dial("unix", addr)
	if err != nil {
		return nil, w, err
	}
	// Until the process on the socket has shown it knows the key, its
	// messages are small and its calls (a dialog, an event) are not
	// taken.
	fr := newFrames(nc, maxHello, maxRequest)
	live := new(atomic.Bool)
	conn := jsonrpc2.NewConn(context.Background(), fr, clientHandler{c: c, live: live}, jsonrpc2.SetLogger(quiet))
	ours := nonce()
	h := Hello{Protocol: Protocol, Version: c.opts.Version, Config: c.opts.Fingerprint, Keys: c.opts.Keys, File: c.opts.File, Pid: os.Getpid(), Kind: c.opts.Kind, Build: build, Nonce: hex.EncodeToString(ours),
		Profile: c.opts.Profile, Models: c.opts.Models}
	fail := func(err error) (*jsonrpc2.Conn, Welcome, error) {
		conn.Close()
		if errors.Is(err, jsonrpc2.ErrClosed) {
			// It went away as this one came: as if nothing listened.
			return nil, w, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
		}
		return nil, w, fmt.Errorf("talk to the bulkhead serving %s: %w", c.opts.DataDir, fromRPC(err))
	}
	// A Challenge; from a serving process of an older protocol, a
	// Welcome.
	var reply struct {
		Welcome
		Nonce string `json:"nonce"`
		Proof string `json:"proof"`
	}
	if err := conn.Call(ctx, mHello, h, &reply); err != nil {
		return fail(err)
	}
	if reply.Proof == "" {
		// A serving process of a protocol before the handshake: it gets
		// nothing but, when idle, the request to exit (open).
		w = reply.Welcome
		w.Protocol = min(w.Protocol, Protocol-1)
		return conn, w, nil
	}
	key, err := d.key()
	if err != nil {
		conn.Close()
		return nil, w, err
	}
	theirs, err := hex.DecodeString(reply.Nonce)
	if err != nil || len(theirs) != nonceSize || !proofOK(reply.Proof, proof(key, "server", ours, theirs)) {
		conn.Close()
		return nil, w, fmt.Errorf("%w: it does not know the key in %s (another user's process, or a program that is not bulkhead); nothing was sent to it", ErrNotOurs, c.opts.DataDir)
	}
	live.Store(true)
	fr.readMax.Store(maxReply)
	if err := conn.Call(ctx, mAuth, Auth{Proof: proof(key, "client", theirs, ours)}, &w); err != nil {
		return fail(err)
	}
	return conn, w, nil
}

// Shutdown asks the serving process to exit, which it does when no other
// client is connected; it returns once the process is gone (or within).
func (c *Client) Shutdown(within time.Duration) error {
	st, err := c.Status()
	if err != nil {
		return err
	}
	// The reply may be lost as the process closes its connections; a
	// client that just left may not be gone yet.
	deadline := time.Now().Add(within)
	for {
		err := c.call(mShutdown, nil, nil)
		if err == nil || errors.Is(err, ErrGone) {
			break
		}
		if !errors.Is(err, errOthers) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Close()
	return waitExit(context.Background(), st.Pid, time.Until(deadline))
}

// alive says whether a process runs (a zombie, exited but not yet
// reaped, does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) STATE …: the state follows the last ')'.
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

// Stop asks the process serving dataDir, if any, to exit (it does when
// no other client is connected) and waits until it has, or within.
func Stop(dataDir string, within time.Duration) error {
	c := &Client{opts: ConnectOptions{DataDir: dataDir, Kind: "stop"}, asks: map[string]func(hub.Event){}}
	conn, w, err := c.hello(context.Background())
	if err != nil {
		if notServed(err) {
			return nil
		}
		return err
	}
	c.conn, c.welcome = conn, w
	defer c.Close() // a refusal leaves the connection open: it would count as a client
	return c.Shutdown(within)
}

// Query asks the process serving dataDir, if any, for its status,
// whatever its configuration (ErrNotServed: none serves it).
func Query(dataDir string) (Status, error) {
	c := &Client{opts: ConnectOptions{DataDir: dataDir, Kind: "status"}, asks: map[string]func(hub.Event){}}
	conn, w, err := c.hello(context.Background())
	if err != nil {
		if notServed(err) {
			return Status{}, ErrNotServed
		}
		return Status{}, err
	}
	c.conn, c.welcome = conn, w
	defer c.Close()
	return c.Status()
}
