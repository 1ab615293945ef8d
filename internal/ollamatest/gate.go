package ollamatest

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"
)

// A Gate holds a stream at a point of its script (Reply.Before, a
// handler put in front with OnChat) until it is opened: by the test, by
// another stream, or by what the client has read (Began). Which of two
// streams that run at once reaches the server, or is read, first is then
// the script's, never the scheduler's: a test of an order passes on a
// loaded machine as on an idle one.
type Gate struct {
	mu       sync.Mutex
	ch       chan struct{}
	timedOut atomic.Bool
}

// GateLimit bounds a wait at a gate: only a failure (what opens it never
// happened) waits this long, and then the stream goes on, out of its
// order, for the test to see.
const GateLimit = 10 * time.Second

// NewGate is a shut gate.
func NewGate() *Gate { return &Gate{ch: make(chan struct{})} }

// Open opens g; an open gate stays open.
func (g *Gate) Open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.ch:
	default:
		close(g.ch)
	}
}

// Shut shuts g again (for the next turn).
func (g *Gate) Shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.ch:
		g.ch = make(chan struct{})
	default:
	}
}

// IsOpen reports whether g is open.
func (g *Gate) IsOpen() bool {
	select {
	case <-g.C():
		return true
	default:
		return false
	}
}

// C is closed when g opens (the channel of its current shutting).
func (g *Gate) C() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.ch
}

// Wait waits until g is open, ctx ends or GateLimit passes, and reports
// whether g opened. A wait that ran out is remembered (TimedOut).
func (g *Gate) Wait(ctx context.Context) bool {
	t := time.NewTimer(GateLimit)
	defer t.Stop()
	select {
	case <-g.C():
		return true
	case <-ctx.Done():
		return false
	case <-t.C:
		g.timedOut.Store(true)
		return false
	}
}

// Until waits until known says yes (asked every millisecond), ctx ends
// or GateLimit passes, and reports whether it said yes: a gate the hub's
// own state opens.
func Until(ctx context.Context, known func() bool) bool {
	deadline := time.Now().Add(GateLimit)
	for !known() {
		if time.Now().After(deadline) {
			return false
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return false
		}
	}
	return true
}

// TimedOut reports whether a wait at g ran out (GateLimit): the stream
// went on out of the order the test set.
func (g *Gate) TimedOut() bool { return g.timedOut.Load() }

// Began wraps a model client's transport: began is told each chat
// request once the client has the first byte of its answer — the status
// line is read, and the client's httptrace hooks for that byte
// (GotFirstResponseByte) have run. A gate that began opens orders a
// stream after what the client has seen, not only after what the server
// wrote: two connections are read by two goroutines, in either order.
func Began(base http.RoundTripper, began func(req *api.ChatRequest)) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return beganTransport{base: base, began: began}
}

type beganTransport struct {
	base  http.RoundTripper
	began func(req *api.ChatRequest)
}

func (b beganTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body == nil || !strings.HasSuffix(req.URL.Path, "/api/chat") {
		return b.base.RoundTrip(req)
	}
	body, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, err
	}
	r2 := req.Clone(req.Context())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r2.ContentLength = int64(len(body))
	resp, err := b.base.RoundTrip(r2)
	if err == nil {
		var cr api.ChatRequest
		if json.Unmarshal(body, &cr) == nil {
			b.began(&cr)
		}
	}
	return resp, err
}

// IsPlanner reports whether req is a planner's (its format names the
// plan's "steps"): the hub's planner, its retry or its warm; a
// triage's format names the kind alone, the upkeep's its own fields.
func IsPlanner(req *api.ChatRequest) bool {
	return len(req.Format) > 0 && bytes.Contains(req.Format, []byte(`"steps"`))
}
