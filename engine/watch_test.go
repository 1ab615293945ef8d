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

// A config file that is a link (as dotfile managers make it) is watched
// through it: an edit of the file it points to, in place or by a
// rename, in a folder of its own, is noticed; so is the link pointed
// elsewhere, and then an edit of its new file.
func TestWatchConfigFollowsALink(t *testing.T) {
	t.Parallel()
	dotfiles, confDir := t.TempDir(), t.TempDir()
	target := filepath.Join(dotfiles, "config.yaml")
	if err := os.WriteFile(target, []byte("v1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(confDir, "config.yaml")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Each call says what the config reads then: a wait is for the
	// call that reads the edit.
	changed := make(chan string, 1000)
	if err := engine.WatchConfig(ctx, link, func() {
		b, _ := os.ReadFile(link)
		changed <- string(b)
	}); err != nil {
		t.Fatal(err)
	}
	wait := func(what, want string) {
		t.Helper()
		deadline := time.After(20 * time.Second)
		for {
			select {
			case got := <-changed:
				if got == want {
					return
				}
			case <-deadline:
				t.Fatalf("%s was not noticed", what)
			}
		}
	}
	if err := os.WriteFile(target, []byte("v2\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait("a write in place of the link's file", "v2\n")
	tmp := filepath.Join(dotfiles, ".config.yaml.swp")
	if err := os.WriteFile(tmp, []byte("v3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, target); err != nil {
		t.Fatal(err)
	}
	wait("a replacement of the link's file", "v3\n")

	moved := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(moved, []byte("v4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, link+".new"); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(link+".new", link); err != nil {
		t.Fatal(err)
	}
	wait("the link pointed elsewhere", "v4\n")
	if err := os.WriteFile(moved, []byte("v5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wait("a write in place of the link's new file", "v5\n")
}
