package serve

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// A client of another protocol is told which bulkhead serves the
// directory and what it speaks, while that one is busy; an idle one is
// replaced.
func TestAnotherProtocol(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Ollama: config.Ollama{Host: srv.Host()}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	done := make(chan error, 1)
	go func() {
		done <- Serve(context.Background(), eng, Options{Fingerprint: "fp", Version: "old", protocol: Protocol + 1})
	}()
	for i := 0; ; i++ {
		if _, err := Query(cfg.DataDir); err == nil {
			break
		} else if i > 500 {
			t.Fatal(err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// A busy one: a client of its own protocol is connected (raw, as an
	// old client would be).
	old := &Client{opts: ConnectOptions{DataDir: cfg.DataDir, Kind: "old"}}
	conn, _, err := old.hello(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	_, err = Connect(context.Background(), ConnectOptions{DataDir: cfg.DataDir, Fingerprint: "fp", Version: "new"})
	if err == nil || !strings.Contains(err.Error(), "bulkhead old, speaking protocol") || !strings.Contains(err.Error(), "in use") {
		t.Fatalf("a busy process of another protocol: %v", err)
	}
	conn.Close()
	started := false
	_, err = Connect(context.Background(), ConnectOptions{DataDir: cfg.DataDir, Fingerprint: "fp", Version: "new",
		Start: func() (<-chan error, error) { started = true; return nil, errors.New("not in this test") }})
	if !started || err == nil {
		t.Fatalf("an idle process of another protocol is replaced: started %v, %v", started, err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the replaced process still serves")
	}
}
