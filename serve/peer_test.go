package serve_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// Another user cannot talk to the serving process even where the socket's
// mode would let them (the kernel names the peer, SO_PEERCRED): with the
// data directory and the socket opened to everyone for the test, a client
// running as another user gets no session, and the same client as this
// user does.
func TestAnotherUserIsRefused(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to run a client as another user")
	}
	if os.Getenv("SERVE_TEST_PEER_DIR") != "" {
		t.Skip("the helper's part is TestPeerHelper")
	}
	cfg := served(t, ollamatest.Gullible(), "fp")
	// Open everything on the way to the socket to everyone.
	for d := cfg.DataDir; d != "/" && d != os.TempDir(); d = filepath.Dir(d) {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(serve.SocketPath(cfg.DataDir), 0o666); err != nil {
		t.Fatal(err)
	}
	// A copy of this test binary that the other user may run.
	bin := filepath.Join(cfg.DataDir, "peer.test")
	b, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	// The same build as far as the serving process can tell (size and
	// time), so that the copy does not replace it.
	fi, err := os.Stat(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(bin, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	client := func(uid uint32) (string, error) {
		cmd := exec.Command(bin, "-test.run=^TestPeerHelper$", "-test.v")
		cmd.Env = append(os.Environ(), "SERVE_TEST_PEER_DIR="+cfg.DataDir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := client(0); err != nil || !strings.Contains(out, "SESSION-OPEN") {
		t.Fatalf("this user: %v\n%s", err, out)
	}
	out, err := client(65534)
	if strings.Contains(out, "SESSION-OPEN") || !strings.Contains(out, "NO-SESSION") {
		t.Fatalf("another user got a session: %v\n%s", err, out)
	}
}

func TestPeerHelper(t *testing.T) {
	dir := os.Getenv("SERVE_TEST_PEER_DIR")
	if dir == "" {
		t.Skip("run by TestAnotherUserIsRefused")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := serve.Connect(ctx, serve.ConnectOptions{DataDir: dir, Fingerprint: "fp", Version: "test", Kind: "peer"})
	if err != nil {
		t.Logf("NO-SESSION: %v", err)
		return
	}
	defer c.Close()
	if _, err := c.Chats(); err != nil {
		t.Logf("NO-SESSION: %v", err)
		return
	}
	t.Log("SESSION-OPEN")
}
