//go:build linux

package files

import (
	"os"
	"path/filepath"
	"testing"
)

// The open that writes follows no link, whatever was checked before it:
// a link swapped in under a folder of the path after the check (another
// app, a command) makes the write fail rather than land elsewhere.
func TestTheWriteItselfFollowsNoLink(t *testing.T) {
	t.Parallel()
	ws := t.TempDir()
	hooks := filepath.Join(ws, ".git", "hooks")
	if err := os.MkdirAll(hooks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(".git/hooks", filepath.Join(ws, "docs")); err != nil { // swapped in after noLinks
		t.Fatal(err)
	}
	a := New(ws, Options{})
	if err := a.writeFile("docs/pre-commit", []byte("planted")); err == nil {
		t.Fatal("the write went through a link")
	}
	if err := os.Symlink(filepath.Join(hooks, "post-checkout"), filepath.Join(ws, "last")); err != nil {
		t.Fatal(err)
	}
	if err := a.writeFile("last", []byte("planted")); err == nil {
		t.Fatal("the write followed its last element, a link")
	}
	if err := a.removeFile("docs/x"); err == nil {
		t.Fatal("the delete went through a link")
	}
	ents, _ := os.ReadDir(hooks)
	if len(ents) != 0 {
		t.Fatalf("the hooks folder holds %v", ents)
	}
	if err := a.writeFile("ok/plain.txt", []byte("fine")); err != nil {
		t.Fatalf("an ordinary file: %v", err)
	}
}
