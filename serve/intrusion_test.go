package serve_test

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/serve"
)

var (
	testServerOnce sync.Once
	testServerPath string
	testServerErr  error
)

// testServer is the MCP test server (apps/mcp/internal/testserver),
// built once for this test binary.
func testServer(t *testing.T) string {
	t.Helper()
	testServerOnce.Do(func() {
		dir, err := os.MkdirTemp("", "serve-testserver-")
		if err != nil {
			testServerErr = err
			return
		}
		testServerPath = filepath.Join(dir, "testserver")
		out, err := exec.Command("go", "build", "-o", testServerPath, "../apps/mcp/internal/testserver").CombinedOutput()
		if err != nil {
			testServerErr = err
			testServerPath = string(out)
		}
	})
	if testServerErr != nil {
		t.Fatalf("build the test server: %v\n%s", testServerErr, testServerPath)
	}
	return testServerPath
}

// intruder is a sandboxed MCP server of the user's uid that bulkhead's
// data directory is not granted to (as every app's), with mechanisms of
// the sandbox left out.
func intruder(t *testing.T, dataDir string, without ...sandbox.Mechanism) func(args map[string]string) string {
	t.Helper()
	a, err := mcp.New("intruder", mcp.Server{Command: testServer(t), Private: []string{dataDir}, Without: without}, apps.Default(), nil)
	if err != nil {
		t.Fatal(err)
	}
	in := a.NewInstance()
	t.Cleanup(func() {
		in.(io.Closer).Close()
		a.Close()
	})
	return func(args map[string]string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		fn := "reach"
		if _, ok := args["read"]; ok {
			fn = "probe"
		}
		b, _ := json.Marshal(args)
		out, err := in.Call(ctx, apps.Call{Function: fn, Args: b})
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		var res struct{ Content string }
		_ = json.Unmarshal(out, &res)
		return res.Content
	}
}

// A sandboxed app is not a client of bulkhead serve. With the sandbox's
// socket layers left out, it finds bulkhead.sock in /proc/net/unix and
// connects, as an attacker would — and gets a challenge it cannot answer:
// it cannot read the serving key (the data directory is not granted to
// it), its auth is refused and its calls (the chats, a turn of its own)
// get nothing. With the whole sandbox it does not even find the socket,
// nor connect to it when given the path.
func TestASandboxedAppGetsNoSession(t *testing.T) {
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	cfg := served(t, ollamatest.Gullible(), "fp")
	sock := serve.SocketPath(cfg.DataDir)

	t.Run("the key alone", func(t *testing.T) {
		reach := intruder(t, cfg.DataDir, sandbox.Seccomp, sandbox.Namespaces)
		found := reach(map[string]string{"find": "bulkhead.sock"})
		if !strings.Contains(found, sock) {
			t.Fatalf("without its socket layers the app must find the socket (or the test shows nothing): %s", found)
		}
		if out := reach(map[string]string{"read": filepath.Join(cfg.DataDir, serve.KeyName)}); !strings.Contains(out, "read failed") {
			t.Fatalf("the app read the serving key: %s", out)
		}
		out := reach(map[string]string{"hello": sock})
		t.Log(out)
		if !strings.Contains(out, `"proof"`) {
			t.Fatalf("the app must have connected and got the challenge: %s", out)
		}
		if strings.Contains(out, `"session"`) || strings.Contains(out, `"result":[`) || strings.Contains(out, `"turn"`) || !strings.Contains(out, "no_session") {
			t.Fatalf("the app got a session: %s", out)
		}
		if st, err := serve.Query(cfg.DataDir); err != nil || len(st.Clients) != 0 {
			t.Fatalf("the app counts as a client: %+v %v", st, err)
		}
	})

	t.Run("the whole sandbox", func(t *testing.T) {
		reach := intruder(t, cfg.DataDir)
		if out := reach(map[string]string{"find": "bulkhead.sock"}); !strings.Contains(out, "found nothing") {
			t.Fatalf("the app saw the socket: %s", out)
		}
		if out := reach(map[string]string{"hello": sock}); !strings.Contains(out, "connect failed") || !strings.Contains(out, "permission denied") {
			t.Fatalf("the app connected to the socket: %s", out)
		}
	})
}
