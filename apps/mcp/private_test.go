package mcp_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
)

type syncBuf struct {
	mu sync.Mutex
	sb strings.Builder
}

func (b *syncBuf) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.Write(p)
}

func (b *syncBuf) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sb.String()
}

// A private query's words reach the server (it echoes them to its stderr)
// but not bulkhead's log: the lines are withheld and counted. The same
// query asked in public is logged, so the test can fail.
func TestPrivateQueryLeavesNoStderrInTheLog(t *testing.T) {
	t.Parallel()
	const secret = "zanzibar-marmalade"
	script := gullibleFor(map[string]string{"echo": "test.echo"}, map[string][]step{"echo": {{"echo", map[string]any{"text": secret}}}})
	run := func(private bool) string {
		var log syncBuf
		a, err := mcp.New("alpha", alpha(), mcp.CatalogForTests(t), slog.New(slog.NewTextHandler(&log, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		r := hubtest.New(t, hubtest.Config{Script: script, Rules: allowExec, Apps: []apps.App{a}, Catalog: mcp.CatalogForTests(t)})
		chat, _ := r.Op.NewChat(false)
		turn, err := r.Op.AskWith(context.Background(), chat.ID, "echo "+secret, hub.AskOptions{Private: private}, nil)
		if err != nil || !strings.Contains(turn.Answer, "echo: "+secret) {
			t.Fatalf("private %v: %v, answer %q", private, err, turn.Answer)
		}
		r.Close() // the chat's spokes stop, and their servers
		deadline := time.Now().Add(5 * time.Second)
		for !strings.Contains(log.String(), "echo called with") && !strings.Contains(log.String(), "withheld") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		return log.String()
	}
	if out := run(true); strings.Contains(out, secret) || !strings.Contains(out, "1 line withheld during a private turn") {
		t.Fatalf("a private query's stderr must not reach the log, only its count:\n%s", out)
	}
	if out := run(false); !strings.Contains(out, secret) {
		t.Fatalf("in public, the server's stderr is logged (or the test proves nothing):\n%s", out)
	}
}
