package engine_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/engine"
)

// An edit of the config file — written in place, or replaced by a
// rename as editors do — is noticed once its burst of events is over.
func TestWatchConfigSeesEdits(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(file, []byte("enable: [builtin]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	changed := make(chan struct{}, 10)
	if err := engine.WatchConfig(ctx, file, func() { changed <- struct{}{} }); err != nil {
		t.Fatal(err)
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-changed:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s was not noticed", what)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "other.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte("enable: [calc]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait("a write in place")
	tmp := filepath.Join(dir, ".config.yaml.swp")
	if err := os.WriteFile(tmp, []byte("enable: [notes]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, file); err != nil {
		t.Fatal(err)
	}
	wait("a replacement")
}
