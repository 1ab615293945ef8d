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
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// asker is a fake of the hub's network dialog: it answers allow, and
// records what it was asked.
type asker struct {
	allow bool
	// broker, when set, makes the lease of each answer, as the hub does:
	// decision says what allowed it (a grant, a session's answer).
	broker   *permissions.Broker
	decision permissions.Decision
	// request, with broker, has the broker decide (its rules) instead.
	request bool
	mu      sync.Mutex
	asked   []string
}

func (a *asker) AllowNetwork(ctx context.Context, app, endpoint string) (apps.Lease, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, app+" "+endpoint)
	if !a.allow {
		return nil, false
	}
	if a.broker != nil && a.request {
		d, err := a.broker.Request(ctx, permissions.Request{Kind: permissions.KindNetwork, Subject: app, Object: endpoint,
			Detail: app + " may connect to " + endpoint, Warning: "Network: " + app + " could send anything it has read."})
		if err != nil || !d.Allowed {
			return nil, false
		}
		return a.broker.Lease(permissions.SessionOf(ctx), d), true
	}
	if a.broker != nil {
		return a.broker.Lease(permissions.SessionOf(ctx), a.decision), true
	}
	return nil, true
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

// counter is a TCP listener that counts the lines it receives.
type counter struct {
	l     net.Listener
	mu    sync.Mutex
	lines int
}

func countingListener(t *testing.T) *counter {
	t.Helper()
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	c := &counter{l: l}
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				s := bufio.NewScanner(conn)
				for s.Scan() {
					c.mu.Lock()
					c.lines++
					c.mu.Unlock()
				}
			}()
		}
	}()
	return c
}

func (c *counter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lines
}

// waitFor polls until cond holds (bounded: the test fails after 20 s).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// A grant's end ends its access before the next call, with a real
// sandboxed server that keeps connecting to its endpoint between calls:
// when the grant is revoked — or the session that allowed it ends, or
// the allow rule that allowed it leaves the rules —
// its process is stopped at once (the revoke says so), no line reaches
// the endpoint after, and the next call starts a fresh process that
// asks again (here: denied, so nothing reaches it). A session's answer
// serves that session only: another session's call restarts the
// process and asks.
func TestAGrantsEndStopsItsProcess(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	for _, how := range []string{"revoked", "session ended", "other session", "rule removed"} {
		t.Run(how, func(t *testing.T) {
			t.Parallel()
			sink := countingListener(t)
			ep, _ := sandbox.ParseEndpoint(sink.l.Addr().String())
			b, err := permissions.NewBroker(permissions.Options{})
			if err != nil {
				t.Fatal(err)
			}
			grant := permissions.Grant{ID: "g-net", Kind: permissions.KindNetwork, Subject: "beaconer", Object: ep.String()}
			if err := b.AddConfigGrant(grant); err != nil {
				t.Fatal(err)
			}
			yes := &asker{allow: true, broker: b, decision: permissions.Decision{Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourceUser}}
			switch how {
			case "revoked":
				yes.decision = permissions.Decision{Answer: permissions.AnswerPermanent, Allowed: true, Source: permissions.SourceGrant, GrantID: grant.ID}
			case "rule removed":
				// an allow rule decides, with no grant
				if b, err = permissions.NewBroker(permissions.Options{Rules: []permissions.Rule{{Effect: permissions.EffectAllow, Kind: "network", Subject: "beaconer"}}}); err != nil {
					t.Fatal(err)
				}
				yes = &asker{allow: true, broker: b, request: true}
			}
			a, err := mcp.New("beaconer", mcp.Server{Command: mcp.TestServer, Net: []sandbox.Endpoint{ep}}, apps.Default(), nil)
			if err != nil {
				t.Fatal(err)
			}
			in := a.NewInstance()
			t.Cleanup(func() {
				in.(io.Closer).Close()
				a.Close()
			})
			s1 := apps.WithNetwork(permissions.WithSession(context.Background(), "s1"), yes)
			who := func(ctx context.Context) string {
				ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
				defer cancel()
				out, err := in.Call(ctx, apps.Call{Function: "whoami", Args: json.RawMessage(`{}`)})
				if err != nil {
					t.Fatal(err)
				}
				return string(out)
			}
			first := who(s1)
			ctx, cancel := context.WithTimeout(s1, 30*time.Second)
			defer cancel()
			if _, err := in.Call(ctx, apps.Call{Function: "beacon", Args: json.RawMessage(`{"tcp":"` + ep.String() + `"}`)}); err != nil {
				t.Fatal(err)
			}
			waitFor(t, "the beacon to reach the endpoint", func() bool { return sink.count() > 2 })

			no := &asker{}
			next := apps.WithNetwork(permissions.WithSession(context.Background(), "s1"), no)
			switch how {
			case "revoked":
				r, err := b.RevokeReport(grant.ID)
				if err != nil || !slices.Equal(r.Stopped, []string{"beaconer"}) {
					t.Fatalf("the revoke must stop the process that held the grant: %+v %v", r, err)
				}
				if w := permissions.StoppedWords(r.Stopped); w != " — beaconer restarted" {
					t.Errorf("the manager says %q", w)
				}
			case "session ended":
				b.EndSession("s1")
			case "other session":
				next = apps.WithNetwork(permissions.WithSession(context.Background(), "s2"), no)
			case "rule removed":
				if err := b.SetRules(nil); err != nil {
					t.Fatal(err)
				}
			}
			if how != "other session" {
				// Stopped already: not one line more, with no call at all.
				at := sink.count()
				time.Sleep(300 * time.Millisecond)
				if n := sink.count(); n != at {
					t.Fatalf("%d lines reached the endpoint after the grant ended", n-at)
				}
			}
			if again := who(next); again == first {
				t.Fatalf("the next call must run in a fresh process (%s)", again)
			}
			if len(no.calls()) != 1 {
				t.Fatalf("the fresh process must ask again: %v", no.calls())
			}
			at := sink.count()
			time.Sleep(300 * time.Millisecond)
			if n := sink.count(); n != at {
				t.Fatalf("%d lines reached the endpoint from the fresh, denied process", n-at)
			}
		})
	}
}
