package widget

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
)

// A long path is shortened by whole folders from after its first one:
// the file name and the folders nearest it stay, and nothing is cut
// inside a name.
func TestShortPath(t *testing.T) {
	const p = "/home/alice/work/clients/acme-corp/contracts/2024/final/report.pdf"
	for _, c := range []struct {
		p    string
		n    int
		want string
	}{
		{p, 80, p},
		{p, 50, "/home/…/acme-corp/contracts/2024/final/report.pdf"},
		{p, 40, "/home/…/contracts/2024/final/report.pdf"},
		{p, 20, "/home/…/report.pdf"}, // the root it starts from, and the file
		{p, 12, "…/report.pdf"},
		{p, 6, "…t.pdf"}, // the name's end: its extension
		{`C:\Users\alice\Documents\clients\acme\report.docx`, 30, `C:\…\clients\acme\report.docx`},
		{"docs/drafts/2024/q3/clients/acme/", 20, "docs/…/clients/acme/"},
		{"~/a/b/c/d/e/f/g.txt", 12, "~/…/f/g.txt"},
		{"a-very-long-file-name-without-folders.txt", 20, "…without-folders.txt"},
	} {
		got := ShortPath(c.p, c.n)
		if got != c.want {
			t.Errorf("ShortPath(%q, %d) = %q, want %q", c.p, c.n, got, c.want)
		}
		if w := ansi.StringWidth(got); w > c.n {
			t.Errorf("ShortPath(%q, %d) is %d cells wide", c.p, c.n, w)
		}
	}
}

// Two paths that part only in a folder in their middle — the one that
// says whose contracts these are — stay told apart at every width that
// keeps a folder: what is dropped is whole folders after the first, and
// the distinguishing one goes only with all those before it. A text's
// head and tail at the same width would show both alike.
func TestShortPathKeepsTheMiddleThatSaysWhere(t *testing.T) {
	a := "/home/alice/work/shared/clients/initech/legal/contracts/2024/q3/drafts/agreement.txt"
	b := "/home/alice/work/shared/clients/umbrella/legal/contracts/2024/q3/drafts/agreement.txt"
	for n := len("/home/…/initech/legal/contracts/2024/q3/drafts/agreement.txt"); n < len(a); n++ {
		sa, sb := ShortPath(a, n), ShortPath(b, n)
		if !strings.Contains(sa, "/initech/") || !strings.Contains(sb, "/umbrella/") || !strings.HasSuffix(sa, "/drafts/agreement.txt") {
			t.Errorf("at %d cells the folder that tells them apart is hidden: %q, %q", n, sa, sb)
		}
		// Only whole folders are kept, in their order, behind the first.
		if !strings.HasPrefix(sa, "/home/…/") || !strings.HasSuffix(a, strings.TrimPrefix(sa, "/home/…")) {
			t.Errorf("at %d cells %q is not the first folder and a whole tail of %q", n, sa, a)
		}
		if ansi.StringWidth(sa) > n {
			t.Errorf("at %d cells %q is too wide", n, sa)
		}
	}
	// Narrower still, the folders nearest the file go last.
	for n := len("…/agreement.txt"); n < 60; n++ {
		sa := ShortPath(a, n)
		if !strings.HasSuffix(sa, "agreement.txt") || ansi.StringWidth(sa) > n {
			t.Errorf("at %d cells: %q", n, sa)
		}
	}
}

// What reads as a path: named as one or written as one, one line, not a
// URL.
func TestLooksLikePath(t *testing.T) {
	for _, c := range []struct {
		name, value string
		want        bool
	}{
		{"path", "docs/q3/report.txt", true},
		{"files[0].dest_path", "out/report.txt", true},
		{"folder", `C:\Users\alice`, true},
		{"filePath", "out/report.txt", true},
		{"body", "~/notes/today.md", true}, // written as one
		{"command", "/bin/sh -c 'rm -rf /tmp/x'", false},
		{"profile", "a/b", false},
		{"path", "notes.txt", false}, // nothing to shorten by folders
		{"url", "https://example.com/a/b", false},
		{"path", "https://example.com/a/b", false},
		{"body", "and/or so on", false},
		{"path", "a/b\nc/d", false},
	} {
		if got := LooksLikePath(c.name, c.value); got != c.want {
			t.Errorf("LooksLikePath(%q, %q) = %v, want %v", c.name, c.value, got, c.want)
		}
	}
}

// A line that names a path keeps what follows it: the path gives way,
// by whole folders, each of two in proportion to its length.
func TestFitPathIn(t *testing.T) {
	p := "/home/alice/work/clients/acme-corp/contracts/2024/final/report.pdf"
	line := "change · " + p + ": 1 line removed, 2 added"
	got := FitPathIn(line, 60, p)
	if got != "change · /home/…/final/report.pdf: 1 line removed, 2 added" || ansi.StringWidth(got) > 60 {
		t.Errorf("FitPathIn: %q", got)
	}
	if got := FitPathIn("short", 60, p); got != "short" {
		t.Errorf("a line that fits changed: %q", got)
	}
	from, to := "/srv/data/clients/acme/inbox/2024/old-name.txt", "/srv/data/clients/acme/archive/2024/new-name.txt"
	got = FitPathIn("· renamed "+from+" → "+to+", 4 KiB", 60, from, to)
	if !strings.Contains(got, "old-name.txt → ") || !strings.HasSuffix(got, "new-name.txt, 4 KiB") || ansi.StringWidth(got) > 60 {
		t.Errorf("a rename keeps both names and its size: %q", got)
	}
}
