package serve

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// TestMain lets this test binary be a serving process of its own
// (SERVE_TEST_CHILD names its data directory), for the tests that
// measure or wait for a real process.
func TestMain(m *testing.M) {
	sandbox.Launch() // the MCP servers of the tests run through this binary
	if dir := os.Getenv("SERVE_TEST_CHILD"); dir != "" {
		os.Exit(serveChild(dir))
	}
	testenv.Main(m, false)
}

func serveChild(dir string) int {
	cfg := config.Config{DataDir: dir, Ollama: config.Ollama{Host: "http://127.0.0.1:1"}, Workspace: os.Getenv("SERVE_TEST_WS"),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer eng.Close()
	idle, _ := time.ParseDuration(os.Getenv("SERVE_TEST_IDLE"))
	wait, _ := time.ParseDuration(os.Getenv("SERVE_TEST_HELLO_WAIT"))
	if err := Serve(context.Background(), eng, Options{Fingerprint: "fp", Version: "test", Idle: idle, helloWait: wait}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// child starts this test binary as the serving process of a fresh data
// directory and waits until it listens.
func child(t *testing.T, idle, helloWait time.Duration) (string, *exec.Cmd, <-chan struct{}) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "d")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SERVE_TEST_CHILD="+dir, "SERVE_TEST_WS="+t.TempDir(),
		"SERVE_TEST_IDLE="+idle.String(), "SERVE_TEST_HELLO_WAIT="+helloWait.String())
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
	})
	for i := 0; ; i++ {
		if _, err := Query(dir); err == nil {
			return dir, cmd, exited
		} else if i > 1000 {
			t.Fatalf("the child does not serve: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// raw is a connection spoken by hand, as a foreign client would.
type raw struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, dir string) *raw {
	t.Helper()
	c, err := net.Dial("unix", SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return &raw{c: c, r: bufio.NewReader(c)}
}

func (r *raw) send(t *testing.T, v any) {
	t.Helper()
	if err := r.write(v); err != nil {
		t.Fatal(err)
	}
}

// write sends v, and says whether all of it could be written.
func (r *raw) write(v any) error {
	b, _ := json.Marshal(v)
	var head [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], uint64(len(b)))
	_, err := r.c.Write(append(head[:n], b...))
	return err
}

func (r *raw) recv(within time.Duration) (map[string]any, error) {
	_ = r.c.SetReadDeadline(time.Now().Add(within))
	n, err := binary.ReadUvarint(r.r)
	if err != nil {
		return nil, err
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r.r, b); err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(b, &m)
}

func call(id int, method string, params any) map[string]any {
	m := map[string]any{"id": id, "jsonrpc": "2.0", "method": method}
	if params != nil {
		m["params"] = params
	}
	return m
}

// rawSession does the handshake by hand with the key of dir, as a client
// that reads the data directory would, saying protocol and fingerprint.
func rawSession(t *testing.T, dir string, protocol int, fingerprint string) *raw {
	t.Helper()
	r := dialRaw(t, dir)
	ours := nonce()
	r.send(t, call(1, mHello, Hello{Protocol: protocol, Config: fingerprint, Kind: "raw", Nonce: hex.EncodeToString(ours)}))
	m, err := r.recv(5 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	res, _ := m["result"].(map[string]any)
	theirs, _ := hex.DecodeString(fmt.Sprint(res["nonce"]))
	d, err := openDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := d.key()
	d.Close()
	if err != nil {
		t.Fatal(err)
	}
	r.send(t, call(2, mAuth, Auth{Proof: proof(key, "client", theirs, ours)}))
	if m, err = r.recv(5 * time.Second); err != nil || m["error"] != nil {
		t.Fatalf("auth: %v %v", m, err)
	}
	return r
}

// vmHWM is a process's peak resident memory, in bytes.
func vmHWM(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// A message of 400 MB is refused, to its sender alone, with an error
// that says so — without the serving process reading it into memory —
// and the session goes on; another session does not notice.
func TestAnOversizedMessageIsRefused(t *testing.T) {
	dir, cmd, _ := child(t, time.Minute, 10*time.Second)
	r := rawSession(t, dir, Protocol, "fp")
	other := rawSession(t, dir, Protocol, "fp")
	before := vmHWM(t, cmd.Process.Pid)
	const size = 400 << 20
	prefix := `{"id":7,"jsonrpc":"2.0","method":"chat.new","params":{"pad":"`
	suffix := `"}}`
	var head [binary.MaxVarintLen64]byte
	n := binary.PutUvarint(head[:], size)
	w := bufio.NewWriterSize(r.c, 1<<20)
	w.Write(head[:n])
	w.WriteString(prefix)
	chunk := []byte(strings.Repeat("x", 1<<20))
	left := size - len(prefix) - len(suffix)
	for left > 0 {
		k := min(left, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			t.Fatal(err)
		}
		left -= k
	}
	w.WriteString(suffix)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	m, err := r.recv(60 * time.Second)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := m["error"].(map[string]any)
	if fmt.Sprint(m["id"]) != "7" || e == nil || !strings.Contains(fmt.Sprint(e["message"]), "400.0 MiB in one message") || !strings.Contains(fmt.Sprint(e["message"]), "at most 4.0 MiB") {
		t.Fatalf("the reply to an oversized message: %v", m)
	}
	r.send(t, call(8, mStatus, nil))
	if m, err := r.recv(5 * time.Second); err != nil || m["result"] == nil {
		t.Fatalf("the session after it: %v %v", m, err)
	}
	other.send(t, call(3, mStatus, nil))
	if m, err := other.recv(5 * time.Second); err != nil || m["result"] == nil {
		t.Fatalf("another session: %v %v", m, err)
	}
	after := vmHWM(t, cmd.Process.Pid)
	t.Logf("peak resident memory: %d MiB before, %d MiB after a 400 MiB message", before>>20, after>>20)
	if after-before > 64<<20 {
		t.Fatalf("the serving process grew by %d MiB for a refused message", (after-before)>>20)
	}
}

// A connection that never finishes the handshake is dropped at its
// deadline, and does not keep an unused serving process from exiting.
func TestASilentConnection(t *testing.T) {
	t.Run("dropped at its deadline", func(t *testing.T) {
		dir, _, _ := child(t, time.Minute, 300*time.Millisecond)
		r := dialRaw(t, dir)
		start := time.Now()
		_, err := r.recv(10 * time.Second)
		if err == nil || time.Since(start) > 5*time.Second {
			t.Fatalf("a silent connection after %s: %v", time.Since(start), err)
		}
	})
	t.Run("no client", func(t *testing.T) {
		dir, _, exited := child(t, 300*time.Millisecond, time.Minute)
		r := dialRaw(t, dir)
		r.send(t, call(1, mHello, Hello{Protocol: Protocol, Kind: "silent", Nonce: hex.EncodeToString(nonce())}))
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			t.Fatal("a connection without a session kept the serving process past its idle time")
		}
	})
	t.Run("a long message before the handshake ends it", func(t *testing.T) {
		dir, _, _ := child(t, time.Minute, time.Minute)
		r := dialRaw(t, dir)
		// The process may close the connection before the whole message
		// is written (a broken pipe here): that is the end sought.
		_ = r.write(call(1, mHello, map[string]string{"pad": strings.Repeat("x", maxHello)}))
		if m, err := r.recv(5 * time.Second); err == nil {
			t.Fatalf("a long hello was answered: %v", m)
		}
	})
}

// A session of another protocol gets the status (and may ask an idle
// process to exit), nothing else; one of another configuration may also
// read (list chats, the action log, grants, an export), and changes
// nothing.
func TestAnotherProtocolGetsNothingElse(t *testing.T) {
	dir, _, _ := child(t, time.Minute, 10*time.Second)
	for _, c := range []struct {
		protocol int
		fp       string
		reads    bool
	}{{99, "fp", false}, {Protocol, "another", true}} {
		r := rawSession(t, dir, c.protocol, c.fp)
		r.send(t, call(3, mStatus, nil))
		if m, err := r.recv(5 * time.Second); err != nil || m["result"] == nil {
			t.Fatalf("%+v: status %v %v", c, m, err)
		}
		for i, method := range []string{mChats, mExport, mActions, mGrants, mNewChat, mDeleteChat, mRevokeAll, mSetTrusted, mForget} {
			r.send(t, call(10+i, method, map[string]any{}))
			m, err := r.recv(5 * time.Second)
			e, _ := m["error"].(map[string]any)
			refused := e != nil && strings.Contains(fmt.Sprint(e["message"]), "another protocol or configuration")
			if err != nil || refused == (c.reads && readOnly[method]) {
				t.Fatalf("%+v: %s answered %v %v", c, method, m, err)
			}
		}
	}
}

// A length past any bound (2^64-1, 2^63) ends the connection: nothing
// after it is read as a message of its own.
func TestAnImpossibleLengthEndsTheConnection(t *testing.T) {
	dir, _, _ := child(t, time.Minute, 10*time.Second)
	for _, n := range []uint64{1<<64 - 1, 1 << 63, 2 << 30} {
		r := rawSession(t, dir, Protocol, "fp")
		var head [binary.MaxVarintLen64]byte
		k := binary.PutUvarint(head[:], n)
		smuggled := `{"id":8,"jsonrpc":"2.0","method":"status"}`
		var b [binary.MaxVarintLen64]byte
		m := binary.PutUvarint(b[:], uint64(len(smuggled)))
		r.c.Write(append(append(head[:k], `{"id":7,"method":"x"`...), append(b[:m], smuggled...)...))
		if got, err := r.recv(5 * time.Second); err == nil {
			t.Fatalf("length %d: the connection goes on: %v", n, got)
		}
	}
}

// A reply (no method) over the bound is not turned into a call: it ends
// the connection.
func TestAnOversizedReplyEndsTheConnection(t *testing.T) {
	dir, _, _ := child(t, time.Minute, 10*time.Second)
	r := rawSession(t, dir, Protocol, "fp")
	body := `{"id":3,"jsonrpc":"2.0","result":"` + strings.Repeat("x", maxRequest) + `"}`
	var head [binary.MaxVarintLen64]byte
	k := binary.PutUvarint(head[:], uint64(len(body)))
	r.c.Write(append(head[:k], body...))
	if got, err := r.recv(10 * time.Second); err == nil {
		t.Fatalf("an oversized reply was answered: %v", got)
	}
}

// The id of an oversized call is answered as the JSON it was (a string
// with an escape), not as Go would quote it.
func TestFrameIDs(t *testing.T) {
	for head, want := range map[string]string{
		`{"id":7,"jsonrpc"`:           "7",
		`{"id":"a\u0007b","jsonrpc"`:  `"a\u0007b"`,
		`{"id":-1,"jsonrpc"`:          "",
		`{"jsonrpc":"2.0","id":7`:     "",
		`{"id":"x\",\"method\":\"y"}`: "", // not read whole: no answer, the connection ends
	} {
		if got := frameID([]byte(head)); got != want {
			t.Errorf("frameID(%s) = %s, want %s", head, got, want)
		}
	}
}
