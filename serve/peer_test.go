package serve_test

import (
	"net"
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
// mode would let them (the kernel names the peer, SO_PEERCRED, the first
// gate before the handshake): with the data directory and the socket
// opened to everyone for the test, a raw hello from another user gets no
// answer at all — the connection is closed — and the same hello from
// this user gets the serving process's challenge.
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
	binDir := t.TempDir()
	if err := os.Chmod(binDir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(binDir, "peer.test")
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
	out, err := client(65534)
	if strings.Contains(out, "GOT-CHALLENGE") || !strings.Contains(out, "NO-ANSWER") {
		t.Fatalf("another user was answered: %v\n%s", err, out)
	}
	if out, err := client(0); err != nil || !strings.Contains(out, "GOT-CHALLENGE") {
		t.Fatalf("this user: %v\n%s", err, out)
	}
}

func TestPeerHelper(t *testing.T) {
	dir := os.Getenv("SERVE_TEST_PEER_DIR")
	if dir == "" {
		t.Skip("run by TestAnotherUserIsRefused")
	}
	c, err := net.Dial("unix", serve.SocketPath(dir))
	if err != nil {
		t.Logf("NO-ANSWER: %v", err)
		return
	}
	defer c.Close()
	if err := writeFrame(c, helloFrame(1, 2)); err != nil {
		t.Logf("NO-ANSWER: %v", err)
		return
	}
	reply, err := readFrame(c, 3*time.Second)
	if err != nil {
		t.Logf("NO-ANSWER: %v", err)
		return
	}
	if strings.Contains(reply, `"proof"`) {
		t.Log("GOT-CHALLENGE")
		return
	}
	t.Logf("NO-ANSWER: %s", reply)
}
