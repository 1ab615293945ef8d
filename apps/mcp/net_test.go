package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// asker is a fake of the hub's network dialog: it answers allow, and
// records what it was asked.
type asker struct {
	allow bool
	mu    sync.Mutex
	asked []string
}

func (a *asker) AllowNetwork(_ context.Context, app, endpoint string) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, app+" "+endpoint)
	return a.allow
}

func (a *asker) calls() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return slices.Clone(a.asked)
}

// echoListener answers each line on a TCP port of 127.0.0.1.
func echoListener(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				line, _ := bufio.NewReader(c).ReadString('\n')
				c.Write([]byte("echo: " + line))
			}()
		}
	}()
	return l.Addr().String()
}

// agentListener is a unix socket outside the sandbox, as an ssh-agent's.
func agentListener(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "agent.sock")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	return path
}

func reach(t *testing.T, ctx context.Context, a apps.App, args map[string]string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	b, _ := json.Marshal(args)
	out, err := a.Call(ctx, apps.Call{Function: "reach", Args: b})
	if err != nil {
		t.Fatalf("reach: %v", err)
	}
	var res struct{ Content string }
	_ = json.Unmarshal(out, &res)
	return res.Content
}

// A sandboxed MCP server reaches no TCP endpoint and no unix socket
// outside — an agent-like listener — unless a net grant names the
// endpoint, and then only after the user allowed it (a network dialog,
// asked when the server's process starts); a denied or unasked endpoint
// stays closed, and another port never opens. Unconfined, the same
// server reaches all of it, so the test can fail.
func TestServersReachOnlyGrantedEndpoints(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	granted, other, agent := echoListener(t), echoListener(t), agentListener(t)
	ep, _ := sandbox.ParseEndpoint(granted)
	cfg := mcp.Server{Command: mcp.TestServer, Net: []sandbox.Endpoint{ep}}
	newInstance := func(unconfined bool) apps.App {
		c := cfg
		c.Unconfined = unconfined
		a, err := mcp.New("reacher", c, apps.Default(), nil)
		if err != nil {
			t.Fatal(err)
		}
		in := a.NewInstance()
		t.Cleanup(func() {
			in.(io.Closer).Close()
			a.Close()
		})
		return in
	}

	yes := &asker{allow: true}
	in := newInstance(false)
	ctx := apps.WithNetwork(context.Background(), yes)
	if out := reach(t, ctx, in, map[string]string{"tcp": granted, "unix": agent}); !strings.Contains(out, "tcp ok: echo: hello from the server") || !strings.Contains(out, "unix failed") {
		t.Fatalf("allowed endpoint and an agent socket: %s", out)
	}
	if out := reach(t, ctx, in, map[string]string{"tcp": other}); !strings.Contains(out, "tcp failed") {
		t.Fatalf("another port: %s", out)
	}
	if got := yes.calls(); !slices.Equal(got, []string{"reacher " + granted}) {
		t.Fatalf("asked %v: once, for the endpoint of the config, when the process started", got)
	}

	no := &asker{}
	in = newInstance(false)
	if out := reach(t, apps.WithNetwork(context.Background(), no), in, map[string]string{"tcp": granted}); !strings.Contains(out, "tcp failed") {
		t.Fatalf("a denied endpoint: %s", out)
	}
	if len(no.calls()) != 1 {
		t.Fatalf("asked %v", no.calls())
	}

	in = newInstance(false)
	if out := reach(t, context.Background(), in, map[string]string{"tcp": granted}); !strings.Contains(out, "tcp failed") {
		t.Fatalf("no one to ask: %s", out)
	}

	open := newInstance(true)
	if out := reach(t, context.Background(), open, map[string]string{"tcp": other, "unix": agent}); !strings.Contains(out, "tcp ok") || !strings.Contains(out, "unix ok") {
		t.Fatalf("unconfined, the server reaches them (or the test proves nothing): %s", out)
	}
}
