package tui

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/hub"
)

// listingOp is the rig's operator, with MCP servers being listed or
// failed as a serving process's session says (*serve.Client).
type listingOp struct {
	*hub.Operator
	mu     sync.Mutex
	since  map[string]time.Time
	failed []string
}

func (l *listingOp) ListingState() (map[string]time.Time, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.since, l.failed
}

func (l *listingOp) set(since map[string]time.Time, failed []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.since, l.failed = since, failed
}

// TestStatusLineSaysAStartFailed: the status line's "⟳ starting bad"
// turns, once bad's start failed, into a note that it failed and where
// to see why — it does not just disappear.
func TestStatusLineSaysAStartFailed(t *testing.T) {
	t.Parallel()
	r := newRig(t, replies())
	b := &listingOp{Operator: r.op}
	b.set(map[string]time.Time{"bad": time.Now()}, nil)
	opts := r.options()
	opts.Backend = b
	d := newDriver(t, opts, 140, 24)
	d.exec(checkHealth(context.Background(), nil, b))
	d.idle()
	if v := d.view(); !strings.Contains(v, "⟳ starting bad") {
		t.Fatalf("while bad starts, the status line:\n%s", v)
	}
	b.set(nil, []string{"bad"})
	d.exec(checkHealth(context.Background(), nil, b))
	d.idle()
	v := d.view()
	if strings.Contains(v, "⟳ starting bad") || !strings.Contains(v, "✗ bad failed to start — apps screen (ctrl+a) for why") {
		t.Fatalf("once bad failed, the status line:\n%s", v)
	}
}
