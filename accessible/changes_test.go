package accessible

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// changesAsk is a change set with a warned hook, an ordinary file with
// its diff and a removal.
func changesAsk(warned bool) permissions.Request {
	set := &permissions.ChangeSet{ID: "20261207T101010-abcd", Folder: "/home/u/proj", Entries: []permissions.ChangeEntry{
		{Path: "notes.txt", Op: "changed", Type: "file", Size: 9, Diff: &permissions.Change{Path: "notes.txt", Exists: true, Removed: 1, Added: 1,
			Lines: []permissions.ChangeLine{{Op: "-", Text: "old line"}, {Op: "+", Text: "new line"}}}},
		{Path: "gone.txt", Op: "removed", Type: "file"},
	}}
	r := permissions.Request{Kind: permissions.KindChanges, Subject: "shell", Object: set.Folder, Function: "write", Changes: set, Expected: true,
		Warning: "expected by the plan: the app's step writes here"}
	if warned {
		set.Entries = append(set.Entries, permissions.ChangeEntry{Path: ".githooks/pre-commit", Op: "added", Type: "file", Size: 20,
			Warnings: []string{"git runs the files in .githooks/ as hooks"}})
		r.Concerns = []permissions.Concern{permissions.ConcernRunsLater}
	}
	return r
}

// In accessible mode a change set is said entry by entry, numbered, with
// the hub's warnings and each diff line in words; an empty answer
// decides later (nothing lost); "accept some" takes the entries' numbers;
// a discard is confirmed; an accept of a set that is not routine is too.
func TestAChangeSetIsSaidAndAnswered(t *testing.T) {
	t.Parallel()
	// the answers: 0 accept all, 1 accept some, 2 discard, 3 later (a
	// warned set offers no grant)
	d, out, _ := ask(t, changesAsk(true), "\n")
	for _, want := range []string{"1. changed notes.txt", "removed: old line", "added: new line", "2. removed gone.txt",
		"3. added .githooks/pre-commit", "warning: git runs the files in .githooks/ as hooks", "decide later"} {
		if !strings.Contains(out, want) {
			t.Errorf("not said: %q\n%s", want, out)
		}
	}
	if d.Answer != permissions.AnswerDeny || !d.Later {
		t.Errorf("an empty answer decides later: %+v", d)
	}
	if d, _, _ := ask(t, changesAsk(true), "2\n1 3\n"); d.Answer != permissions.AnswerOnce || len(d.Picks) != 2 || d.Picks[0] != 0 || d.Picks[1] != 2 {
		t.Errorf("accept some, 1 and 3: %+v", d)
	}
	if d, _, _ := ask(t, changesAsk(true), "2\n9\n"); !d.Later {
		t.Errorf("a number that is no entry's leaves it pending: %+v", d)
	}
	if d, _, _ := ask(t, changesAsk(true), "3\ny\n"); d.Answer != permissions.AnswerDeny || d.Later {
		t.Errorf("discard, confirmed: %+v", d)
	}
	if d, _, _ := ask(t, changesAsk(true), "3\nn\n"); !d.Later {
		t.Errorf("discard, not confirmed, leaves it pending: %+v", d)
	}
	if d, _, _ := ask(t, changesAsk(true), "1\ny\n"); d.Answer != permissions.AnswerOnce || d.Picks != nil {
		t.Errorf("accept all of a warned set, confirmed: %+v", d)
	}
	if d, out, _ := ask(t, changesAsk(false), "2\n"); d.Answer != permissions.AnswerSession || !strings.Contains(out, "accept its changes here for this session") {
		t.Errorf("an unwarned set offers this session's grant: %+v\n%s", d, out)
	}
}
