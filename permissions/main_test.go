package permissions_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

func TestMain(m *testing.M) {
	testenv.Main(m, true)
}

// clock is a settable Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// env is one user's disk: a store, a key file and a clock. Each broker
// built from it is one run of the program.
type env struct {
	kv      *permissionstest.KV
	keyFile string
	clock   *clock
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return &env{
		kv:      permissionstest.NewKV(),
		keyFile: filepath.Join(t.TempDir(), "bulkhead", "grant.key"),
		clock:   newClock(),
	}
}

func (e *env) options(p permissions.Prompter, rules ...permissions.Rule) permissions.Options {
	return permissions.Options{
		Store: e.kv, NotFound: permissionstest.ErrNotFound, KeyFile: e.keyFile,
		Rules: rules, Prompter: p, Now: e.clock.Now,
	}
}

func (e *env) broker(t *testing.T, p permissions.Prompter, rules ...permissions.Rule) *permissions.Broker {
	t.Helper()
	b, err := permissions.NewBroker(e.options(p, rules...))
	if err != nil {
		t.Fatalf("NewBroker: %v", err)
	}
	return b
}

// execNotes is a plain request: run the notes app.
var execNotes = permissions.Request{
	Kind: permissions.KindExec, Subject: "hub", Object: "notes",
	Detail: "run notes for this request", Expected: true,
}

// sendMail is an irreversible request.
var sendMail = permissions.Request{
	Kind: permissions.KindIrreversible, Subject: "mail", Object: "mail", Function: "send",
	Args:    []byte(`{"to":"bob@example.com","body":"hi"}`),
	Detail:  "send an email to bob@example.com",
	Warning: "expected by the plan; sends data outside",
}

func mustRequest(t *testing.T, b *permissions.Broker, r permissions.Request) permissions.Decision {
	t.Helper()
	d, err := b.Request(context.Background(), r)
	if err != nil {
		t.Fatalf("Request(%s %s→%s): %v", r.Kind, r.Subject, r.Object, err)
	}
	return d
}

// waitFor polls cond until it holds, failing after a few seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
