package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// TestAskDoesNotWaitForTheUpkeep: the memory upkeep a turn brings due
// runs in the serving process after the answer — `ask` exits while its
// model calls are still held — and a reader of memory (`memory show`)
// waits for it, so what it shows includes the summary.
func TestAskDoesNotWaitForTheUpkeep(t *testing.T) {
	release := make(chan struct{})
	var started, finished atomic.Int32
	gullible := ollamatest.Gullible()
	srv := ollamatest.NewScripted(t, func(req *api.ChatRequest) ollamatest.Reply {
		if hub.UpkeepTask(req) != "" {
			started.Add(1)
			<-release
			defer finished.Add(1)
		}
		return gullible(req)
	}, "m")
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("memory:\n  every: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	released := false
	free := func() {
		if !released {
			released = true
			close(release)
		}
	}
	done := make(chan int, 1)
	go func() {
		_, _, code := run(t, "ask", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "My name is Ada and I travel from May 3 to May 7")
		done <- code
	}()
	// Registered after run's own clean-up (which stops the serving
	// process): it runs first, so the held calls end.
	t.Cleanup(free)
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("ask: exit %d", code)
		}
	case <-time.After(20 * time.Second):
		free()
		t.Fatal("ask waited for the memory upkeep's model calls")
	}
	if finished.Load() != 0 {
		t.Fatal("the held upkeep calls finished before ask returned: the test does not bite")
	}
	for deadline := time.Now().Add(10 * time.Second); started.Load() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the turn brought no upkeep due: the test does not bite")
		}
	}
	free()
	out, errOut, code := run(t, "memory", "show", "--config", cfg, "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "user.name = Ada") || !strings.Contains(out, "summary of chat") {
		t.Fatalf("memory show must wait for the upkeep that was due: exit %d %s\n%s", code, errOut, out)
	}
}
