package serve_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// A same-user process that cannot read the data directory gets nothing:
// a hello of any protocol and configuration is answered with a challenge
// only; a wrong proof, a replayed one, or any method before the
// handshake ends its connection with no session; and it is not counted
// as a client. A client that reads the key gets its session as before.
func TestOnlyTheKeyOpensASession(t *testing.T) {
	cfg := served(t, ollamatest.Gullible(), "fp")
	sock := serve.SocketPath(cfg.DataDir)
	dial := func() net.Conn {
		c, err := net.Dial("unix", sock)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	closed := func(c net.Conn) bool {
		_, err := readFrame(c, 3*time.Second)
		return err != nil && !errors.Is(err, os.ErrDeadlineExceeded)
	}

	// hello, then an auth it cannot prove
	c := dial()
	if err := writeFrame(c, helloFrame(1, 99)); err != nil {
		t.Fatal(err)
	}
	ch, err := readFrame(c, 3*time.Second)
	if err != nil || !strings.Contains(ch, `"proof"`) || strings.Contains(ch, `"session"`) {
		t.Fatalf("hello must get a challenge and nothing else: %q %v", ch, err)
	}
	writeFrame(c, `{"id":2,"jsonrpc":"2.0","method":"auth","params":{"proof":"00"}}`)
	if r, err := readFrame(c, 3*time.Second); err != nil || !strings.Contains(r, "no_session") {
		t.Fatalf("a wrong proof: %q %v", r, err)
	}
	writeFrame(c, `{"id":3,"jsonrpc":"2.0","method":"chat.list"}`)
	if !closed(c) {
		t.Fatal("a connection with a wrong proof must be closed")
	}

	// straight to a method, and a session's own methods without hello
	for _, m := range []string{"chat.list", "memory.export", "permissions.actions", "turn.ask", "status", "shutdown"} {
		c := dial()
		writeFrame(c, `{"id":1,"jsonrpc":"2.0","method":"`+m+`"}`)
		r, _ := readFrame(c, 3*time.Second)
		if !strings.Contains(r, "no_session") || !closed(c) {
			t.Fatalf("%s before the handshake: %q", m, r)
		}
	}

	// a proof made for another connection's nonces (replayed)
	a, b := dial(), dial()
	writeFrame(a, helloFrame(1, serve.Protocol))
	writeFrame(b, helloFrame(1, serve.Protocol))
	chA, _ := readFrame(a, 3*time.Second)
	readFrame(b, 3*time.Second)
	writeFrame(b, `{"id":2,"jsonrpc":"2.0","method":"auth","params":{"proof":`+field(chA, "proof")+`}}`)
	if r, _ := readFrame(b, 3*time.Second); !strings.Contains(r, "no_session") {
		t.Fatalf("another connection's proof: %q", r)
	}

	// none of them is a client; the user's own client works
	st, err := serve.Query(cfg.DataDir)
	if err != nil || len(st.Clients) != 0 {
		t.Fatalf("connections without a session are counted: %+v %v", st, err)
	}
	if _, err := connect(t, cfg, "fp", nil).Chats(); err != nil {
		t.Fatal(err)
	}
}

// field is the raw JSON value of name in msg (a test's crude reading).
func field(msg, name string) string {
	_, rest, ok := strings.Cut(msg, `"`+name+`":`)
	if !ok {
		return `""`
	}
	if i := strings.IndexAny(rest, ",}"); i >= 0 {
		return rest[:i]
	}
	return rest
}

// The client says nothing of the user's to a process that cannot show it
// knows the data directory's key: it sends its hello, checks the proof,
// and stops.
func TestTheClientChecksTheServer(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, serve.KeyName), []byte(strings.Repeat("k", 32)), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", serve.SocketPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var heard atomic.Int32
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				for {
					msg, err := readFrame(c, 5*time.Second)
					if err != nil {
						return
					}
					heard.Add(1)
					if strings.Contains(msg, `"hello"`) {
						// A dialog of its own first, as if a turn asked.
						writeFrame(c, `{"id":99,"jsonrpc":"2.0","method":"permissions.prompt","params":{"request":{"id":"r1","kind":"irreversible","subject":"files","function":"delete","warning":"x"}}}`)
						writeFrame(c, `{"id":`+field(msg, "id")+`,"jsonrpc":"2.0","result":{"protocol":2,"nonce":"`+strings.Repeat("ab", 32)+`","proof":"`+strings.Repeat("cd", 32)+`"}}`)
					}
				}
			}()
		}
	}()
	var shown atomic.Int32
	victim := promptFunc(func(context.Context, permissions.Request) (permissions.Decision, error) {
		shown.Add(1)
		return permissions.Decision{Answer: permissions.AnswerOnce}, nil
	})
	_, err = serve.Connect(context.Background(), serve.ConnectOptions{DataDir: dir, Fingerprint: "fp", Version: "test", Kind: "victim", Prompter: victim})
	if !errors.Is(err, serve.ErrNotOurs) || !strings.Contains(err.Error(), "nothing was sent") {
		t.Fatalf("a process that does not know the key: %v", err)
	}
	time.Sleep(100 * time.Millisecond)
	if shown.Load() != 0 {
		t.Fatal("a dialog from a process that had not proved the key was shown")
	}
	// the hello, and the refusal of its dialog; nothing of the user's
	if n := heard.Load(); n > 2 {
		t.Fatalf("the fake server heard %d messages; only the hello (and the refusal of its call) may reach it", n)
	}
}

// The client refuses a data directory that others can write, or that is
// another user's, before it connects to anything there; one of the
// user's own that others may read is made the user's alone.
func TestTheClientChecksTheDataDirectory(t *testing.T) {
	listenIn := func(dir string) *atomic.Int32 {
		ln, err := net.Listen("unix", serve.SocketPath(dir))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		n := new(atomic.Int32)
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Close()
			}
		}()
		return n
	}
	connectTo := func(dir string) error {
		_, err := serve.Connect(context.Background(), serve.ConnectOptions{DataDir: dir, Fingerprint: "fp", Version: "test", Kind: "victim",
			Start: func() (<-chan error, error) { return nil, errors.New("must not start one") }})
		return err
	}

	open := filepath.Join(t.TempDir(), "open")
	os.Mkdir(open, 0o700)
	os.Chmod(open, 0o777)
	heard := listenIn(open)
	err := connectTo(open)
	if !errors.Is(err, serve.ErrUnsafeDir) || !strings.Contains(err.Error(), open) || !strings.Contains(err.Error(), "0777") {
		t.Fatalf("a data directory others can write: %v", err)
	}
	if heard.Load() != 0 {
		t.Fatal("the client connected into a folder others can write")
	}

	readable := filepath.Join(t.TempDir(), "readable")
	os.Mkdir(readable, 0o755)
	os.Chmod(readable, 0o755)
	_ = connectTo(readable) // nothing serves it
	if fi, _ := os.Stat(readable); fi.Mode().Perm() != 0o700 {
		t.Fatalf("an adopted data directory is %v, want 0700", fi.Mode().Perm())
	}

	if os.Getuid() != 0 {
		t.Log("not root: the case of a folder another user owns is not tried (it needs chown)")
		return
	}
	theirs := filepath.Join(t.TempDir(), "theirs")
	os.Mkdir(theirs, 0o700)
	heard = listenIn(theirs)
	if err := os.Chown(theirs, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	err = connectTo(theirs)
	if !errors.Is(err, serve.ErrUnsafeDir) || !strings.Contains(err.Error(), "uid 65534") {
		t.Fatalf("another user's data directory: %v", err)
	}
	if heard.Load() != 0 {
		t.Fatal("the client connected into another user's folder")
	}
}
