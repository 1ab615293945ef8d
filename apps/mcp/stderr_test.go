package mcp

import (
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A server that floods its stderr gets a burst of lines into the log and
// then a trickle; the rest is dropped and counted, once per window.
func TestStderrIsRateLimited(t *testing.T) {
	var log logBuf
	g := newStderrGate(slog.New(slog.NewTextHandler(&log, nil)))
	now := time.Unix(1_000_000, 0)
	g.now = func() time.Time { return now }
	w := &stderrLog{gate: g, private: new(atomic.Bool)}
	flood := []byte(strings.Repeat("flood flood flood\n", 1000))
	for range 100 { // 100,000 lines, 1.8 MB, in one instant
		w.Write(flood)
	}
	w.flush()
	out := log.String()
	if n := strings.Count(out, "server stderr"); n > stderrLineBurst || n == 0 {
		t.Fatalf("%d lines logged in a burst, want 1..%d", n, stderrLineBurst)
	}
	if want := fmt.Sprintf("%d lines of stderr dropped", 100_000-stderrLineBurst); !strings.Contains(out, want) {
		t.Fatalf("want %q in the log:\n%.2000s", want, out)
	}
	if len(out) > 64<<10 {
		t.Fatalf("the log grew by %d bytes", len(out))
	}
	// Later, the bucket has refilled: lines are logged again.
	now = now.Add(time.Minute)
	w.Write([]byte("a line after the flood\n"))
	if !strings.Contains(log.String(), "a line after the flood") {
		t.Fatal("a line after the flood was dropped")
	}
}

// While the instance serves a private turn, its stderr is withheld from
// the log and counted.
func TestStderrWithheldWhilePrivate(t *testing.T) {
	var log logBuf
	g := newStderrGate(slog.New(slog.NewTextHandler(&log, nil)))
	private := new(atomic.Bool)
	w := &stderrLog{gate: g, private: private}
	w.Write([]byte("public words\n"))
	private.Store(true)
	w.Write([]byte("secret words\nmore secret words\npartial secret"))
	w.flush()
	out := log.String()
	if !strings.Contains(out, "public words") || strings.Contains(out, "secret") {
		t.Fatalf("log:\n%s", out)
	}
	if !strings.Contains(out, "3 lines withheld during a private turn") {
		t.Fatalf("want the count of withheld lines:\n%s", out)
	}
}

// What a message says of a process's stderr is true: "in bulkhead.log"
// only when a line of it reached the log; withheld or dropped lines are
// named as such; silence as silence.
func TestStderrWordsAreTrue(t *testing.T) {
	var log logBuf
	g := newStderrGate(slog.New(slog.NewTextHandler(&log, nil)))
	private := new(atomic.Bool)
	w := &stderrLog{gate: g, private: private}
	if got := w.words(); !strings.Contains(got, "nothing") {
		t.Fatalf("silent process: %q", got)
	}
	private.Store(true)
	w.Write([]byte("secret words\n"))
	if got := w.words(); strings.Contains(got, "bulkhead.log") || !strings.Contains(got, "not logged") {
		t.Fatalf("withheld stderr: %q", got)
	}
	private.Store(false)
	w.Write([]byte("public words\n"))
	if got := w.words(); !strings.Contains(got, "in bulkhead.log") {
		t.Fatalf("logged stderr: %q", got)
	}
	// A flood past the burst is dropped: a process whose every line was
	// dropped is not said to be in the log.
	now := time.Unix(2_000_000, 0)
	g.now = func() time.Time { return now }
	flooded := &stderrLog{gate: g, private: new(atomic.Bool)}
	w2 := &stderrLog{gate: g, private: new(atomic.Bool)}
	w2.Write([]byte(strings.Repeat("x\n", 10*stderrLineBurst)))
	flooded.Write([]byte("late line\n"))
	if got := flooded.words(); strings.Contains(got, "bulkhead.log") {
		t.Fatalf("dropped stderr: %q", got)
	}
}
