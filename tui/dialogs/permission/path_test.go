package permission

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// deleteOf is files' delete of path, as the hub asks it.
func deleteOf(path string) perm.Request {
	args, _ := json.Marshal(map[string]string{"path": path})
	return perm.Request{Kind: perm.KindIrreversible, Subject: "files", Object: "files", Function: "delete", Irreversible: true,
		Args: args, Detail: "files wants to delete", Warning: "NOT expected by the plan: path came from files.list; cannot be undone",
		Concerns:   []perm.Concern{perm.ConcernUnexpected, perm.ConcernIrreversible, perm.ConcernForeign},
		Provenance: []perm.Provenance{{Path: "path", Source: "files.list", Key: true}}}
}

// A path too long for the dialog's title is shortened by whole folders
// from after its first: the folder in its middle that tells two requests
// apart (whose account this is) shows at 80×24 with the file name, where
// the text's head and tail hid it and showed both alike.
func TestTheDialogKeepsAPathsMiddle(t *testing.T) {
	t.Parallel()
	th := style.New(true)
	const (
		head = "/home/alice/work/shared/projects/2024/clients/north-america/accounts/"
		tail = "/legal/contracts/signed/master-services-agreement.txt"
	)
	a, b := head+"initech"+tail, head+"soylent"+tail
	// What the title showed before: the same for both.
	if n := 112; headTail(a, n) != headTail(b, n) {
		t.Fatalf("the fixture does not part where head and tail hide: %q", headTail(a, n))
	}
	for _, who := range []string{"initech", "soylent"} {
		p, _ := New(Ask{ID: 1, Req: deleteOf(head + who + tail)}, Config{Theme: th})
		out := ansi.Strip(p.View(th, 80, 24))
		// the title, up to the line of who asks whom, its lines joined
		before, _, _ := strings.Cut(out, "irreversible · files · delete")
		var title string
		for _, l := range strings.Split(before, "\n") {
			title += strings.TrimSpace(strings.Trim(strings.TrimSpace(l), "│╭─╮"))
		}
		if !strings.Contains(title, "/"+who+"/legal/") || !strings.Contains(title, "master-services-agreement.txt") || !strings.Contains(title, "/home/…/") {
			t.Errorf("the title must name the folder %s and the file, by whole folders:\n%s", who, out)
		}
		if strings.Contains(out, "hidden…") {
			t.Errorf("a path is shown as head and tail:\n%s", out)
		}
	}
	// A value too long for its lines is shortened the same way.
	deep := head + "initech" + strings.Repeat("/archive", 12) + tail
	p, _ := New(Ask{ID: 1, Req: deleteOf(deep)}, Config{Theme: th})
	out := ansi.Strip(p.View(th, 80, 24))
	if flat := strings.Join(strings.Fields(strings.ReplaceAll(out, "│", " ")), ""); !strings.Contains(flat, "▸path/home/…/") || !strings.Contains(flat, "/signed/master-services-agreement.txt←fromfiles.list") || strings.Contains(out, "hidden…") {
		t.Errorf("a long path value keeps its first folder and its end, by whole folders:\n%s", out)
	}
}

// A write's change line and a change set's entries keep what follows a
// long path — the counts, the size — and its file name: the path gives
// way by whole folders.
func TestChangeLinesShortenTheirPaths(t *testing.T) {
	t.Parallel()
	th := style.New(true)
	long := "clients/north-america/accounts/initech/legal/contracts/2024/q3/negotiation/drafts/agreement.txt"
	r := deleteOf(long)
	r.Kind, r.Function, r.Detail = perm.KindIrreversible, "write", "files wants to write"
	r.Change = &perm.Change{Path: long, Exists: true, Removed: 1, Added: 2, Field: "content", Lines: []perm.ChangeLine{{Op: "-", Text: "a"}, {Op: "+", Text: "b"}, {Op: "+", Text: "c"}}}
	p, _ := New(Ask{ID: 1, Req: r}, Config{Theme: th})
	out := ansi.Strip(p.View(th, 80, 24))
	if !strings.Contains(out, "change · clients/…/drafts/agreement.txt: 1 line removed, 2 added") && !strings.Contains(out, "/q3/negotiation/drafts/agreement.txt: 1 line removed, 2 added") {
		t.Errorf("the change's line must keep the file name and its counts:\n%s", out)
	}
	set := &perm.ChangeSet{ID: "20261207T101010-abcd", Folder: "/home/u/proj", Entries: []perm.ChangeEntry{
		{Path: long, Op: "added", Type: "file", Mode: "-rw-r--r--", Size: 4096},
		{Path: "archive/" + long, From: long, Op: "renamed", Type: "file"},
	}}
	lines := strings.Join(changeSetLines(th, set, 68), "\n")
	lines = ansi.Strip(lines)
	// a rename's two paths, told apart by their first folder
	for _, want := range []string{"/drafts/agreement.txt (4.1 kB, -rw-r--r--)", "renamed clients/…/agreement.txt → archive/…/agreement.txt"} {
		if !strings.Contains(lines, want) {
			t.Errorf("the entries lack %q:\n%s", want, lines)
		}
	}
	for _, l := range strings.Split(lines, "\n") {
		if ansi.StringWidth(l) > 68 {
			t.Errorf("%q is wider than 68 cells", l)
		}
	}
}
