package permission

import (
	"fmt"
	"testing"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// BenchmarkChangeSetDialog draws the dialog of a set of 10,000 entries,
// each a text file with its diff: its first frame (every entry drawn)
// and a frame after (scrolled).
//
//	go test -run XXX -bench ChangeSetDialog ./tui/dialogs/permission
func BenchmarkChangeSetDialog(b *testing.B) {
	set := &perm.ChangeSet{ID: "x", Folder: "/home/u/p"}
	for i := range 10_000 {
		set.Entries = append(set.Entries, perm.ChangeEntry{Path: fmt.Sprintf("d%d/file%d.txt", i%100, i), Op: "added", Type: "file", Mode: "-rw-r--r--", Size: 24,
			Diff: &perm.Change{Path: "f", Added: 2, Lines: []perm.ChangeLine{{Op: "+", Text: "line one"}, {Op: "+", Text: "line two"}}}})
	}
	r := perm.Request{Kind: perm.KindChanges, Subject: "shell", Object: "/home/u/p", Changes: set, Warning: "expected by the plan"}
	th := style.New(true)
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			p, _ := New(Ask{ID: 1, Req: r}, Config{Theme: th, Width: 100, Height: 40})
			_ = p.View(th, 100, 40)
		}
	})
	b.Run("next", func(b *testing.B) {
		p, _ := New(Ask{ID: 1, Req: r}, Config{Theme: th, Width: 100, Height: 40})
		_ = p.View(th, 100, 40)
		for b.Loop() {
			p.scrollBy(1)
			_ = p.View(th, 100, 40)
		}
	})
}
