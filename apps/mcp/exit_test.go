package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// A server that exits as it starts — the README's filesystem server
// given a folder that does not exist yet — is reported with its own last
// lines of stderr, its exit status and the likeliest cause in words (the
// missing folder, named, with the mkdir that fixes it), never as a
// network problem; and its stderr is in the log of the path that listed
// it.
func TestAServerThatExitsAtStartSaysWhy(t *testing.T) {
	notes := filepath.Join(t.TempDir(), "notes") // not made
	cfg := Server{Command: TestServer, Args: []string{
		"-stderr", `Error accessing directory ` + notes + `: Error: ENOENT: no such file or directory\nNone of the specified directories are accessible\n`,
		"-exit", "1", notes,
	}, Folders: []string{notes}}
	var log logBuf
	_, err := New("fs", cfg, CatalogForTests(t), slog.New(slog.NewJSONHandler(&log, nil)))
	var ee *ExitError
	if !errors.As(err, &ee) || !errors.Is(err, ErrUnlisted) {
		t.Fatalf("want an ExitError matching ErrUnlisted, got %T %v", err, err)
	}
	if ee.Code != 1 || ee.Status != "exit status 1" {
		t.Errorf("status %q code %d", ee.Status, ee.Code)
	}
	if !slices.Contains(ee.Stderr, "None of the specified directories are accessible") {
		t.Errorf("stderr tail %q", ee.Stderr)
	}
	msg := err.Error()
	for _, want := range []string{"exited as it started", "exit status 1", `"None of the specified directories are accessible"`,
		"the folder " + notes + " that its config names does not exist", "mkdir -p " + notes, "its stderr is in bulkhead.log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the message lacks %q:\n%s", want, msg)
		}
	}
	if strings.Contains(strings.ToLower(msg), "network") {
		t.Errorf("the message blames the network:\n%s", msg)
	}
	if out := log.String(); !strings.Contains(out, "None of the specified directories are accessible") || !strings.Contains(out, `"msg":"server stderr"`) {
		t.Errorf("the listing's stderr is not in the log:\n%s", out)
	}

	// With the folder there, what its stderr says decides: a refusal is
	// the sandbox's, a network error the network's (with no endpoint in
	// the config: that it names none).
	if err := os.Mkdir(notes, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ stderr, want string }{
		{`EACCES: permission denied, open '/etc/x'`, "refused a file or folder"},
		{`npm ERR! network request to https://registry.npmjs.org failed, reason: getaddrinfo EAI_AGAIN`, "could not reach the network, and its config names none"},
		{`panic: something of its own`, "an error of its own"},
		{``, "wrote nothing on stderr"},
	} {
		cfg := Server{Command: TestServer, Args: []string{"-stderr", tc.stderr, "-exit", "3", notes}, Folders: []string{notes}}
		_, err := New("fs", cfg, CatalogForTests(t), nil)
		if !errors.As(err, &ee) || ee.Code != 3 || !strings.Contains(ee.Cause, tc.want) {
			t.Errorf("stderr %q: want the cause %q, got %v", tc.stderr, tc.want, err)
		}
	}
}

// Only the last lines of stderr are kept for the message, cleaned of
// control characters; a private instance keeps none.
func TestTheStderrTailIsBoundedAndClean(t *testing.T) {
	w := &stderrLog{gate: newStderrGate(slog.New(slog.DiscardHandler)), private: new(atomic.Bool)}
	for i := range 20 {
		w.Write([]byte(strings.Repeat("x", i) + "\x1b[31mred\x07\n"))
	}
	w.Write([]byte(strings.Repeat("é", 1000)))
	w.flush()
	tail := w.last()
	if len(tail) != stderrTail {
		t.Fatalf("kept %d lines, want %d", len(tail), stderrTail)
	}
	for _, l := range tail {
		if strings.ContainsAny(l, "\x1b\x07") || len(l) > stderrTailMax+len("…") {
			t.Errorf("kept %q", l)
		}
	}
	if last := tail[len(tail)-1]; !strings.HasPrefix(last, "é") || !strings.HasSuffix(last, "…") {
		t.Errorf("the partial last line: %q", last)
	}
	p := &stderrLog{gate: newStderrGate(slog.New(slog.DiscardHandler)), private: new(atomic.Bool)}
	p.private.Store(true)
	p.Write([]byte("secret\n"))
	if got := p.last(); len(got) != 0 {
		t.Errorf("a private instance kept %q", got)
	}
}

// A tool's progress notifications reach the call's progress function
// while the call runs (apps.WithProgress), attributed to the app and
// function, cleaned; the server's start for the call is told first.
func TestProgressNotificationsReachTheCaller(t *testing.T) {
	a := newApp(t, Server{}, nil)
	in := a.NewInstance()
	defer in.(interface{ Close() error }).Close()
	gate := filepath.Join(t.TempDir(), "gate")
	var mu sync.Mutex
	var got []apps.Progress
	third := make(chan struct{})
	ctx := apps.WithProgress(context.Background(), func(p apps.Progress) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, p)
		if p.Done == 3 {
			close(third)
		}
	})
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		args, _ := json.Marshal(map[string]any{"steps": 3, "gate": gate})
		_, err := in.Call(ctx, apps.Call{Function: "progress", Args: args})
		done <- err
	}()
	// The call is held by its gate until the third notification is in.
	select {
	case <-third:
	case err := <-done:
		t.Fatalf("the call ended before its progress arrived: %v", err)
	case <-ctx.Done():
		t.Fatal("no progress")
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) < 5 || !got[0].Starting || got[1].Starting {
		t.Fatalf("want the start, then it running, then the progress: %+v", got)
	}
	for i, p := range got[2:5] {
		if p.App != "tester" || p.Function != "progress" || p.Done != float64(i+1) || p.Total != 3 || p.Message != "step "+string(rune('1'+i))+" of 3[31m" {
			t.Errorf("progress %d: %+v", i, p)
		}
	}
}
