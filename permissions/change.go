package permissions

import (
	"fmt"
	"strings"
	"unicode/utf8"

	udiff "github.com/aymanbagabas/go-udiff"
)

// Change is what a writing call would do to a file, as the hub computed
// it from the file as it is and the content the call carries: for a file
// that exists, the lines removed and added with a few lines around them
// (a unified diff); for a new file, its first lines; for a delete, the
// lines that go. Lines are bounded (More counts what was left out), and
// what they hold is the file's words: data, shown as such.
type Change struct {
	Path    string       `json:"path"`
	Exists  bool         `json:"exists"`            // false: the call creates it
	Removed int          `json:"removed"`           // lines removed, in all
	Added   int          `json:"added"`             // lines added, in all
	Field   string       `json:"field,omitempty"`   // the argument the change replaces in the dialog's values
	Unshown string       `json:"unshown,omitempty"` // why the lines cannot be shown (not text, too large)
	Lines   []ChangeLine `json:"lines,omitempty"`
	More    int          `json:"more,omitempty"` // lines of the change left out of Lines
}

// ChangeLine is one line of a Change: Op "-" removed, "+" added, " "
// unchanged around them, "@" where a part of the file starts (Text says
// its line numbers).
type ChangeLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// Summary says the change in words: "notes.txt: 3 lines removed, 5
// added", "new file notes.txt, 12 lines".
func (c Change) Summary() string {
	switch {
	case !c.Exists:
		return fmt.Sprintf("new file %s, %s", c.Path, lines(c.Added))
	case c.Removed == 0 && c.Added == 0 && c.Unshown == "":
		return fmt.Sprintf("%s: no line changes", c.Path)
	case c.Unshown != "" && c.Removed == 0 && c.Added == 0:
		return fmt.Sprintf("%s: %s", c.Path, c.Unshown)
	}
	return fmt.Sprintf("%s: %s removed, %d added", c.Path, lines(c.Removed), c.Added)
}

func lines(n int) string {
	if n == 1 {
		return "1 line"
	}
	return fmt.Sprintf("%d lines", n)
}

// What a dialog shows of a change: at most changeLines lines, each at
// most changeLineRunes long, with changeContext unchanged lines around
// each part.
const (
	changeLines     = 400
	changeLineRunes = 300
	changeContext   = 3
)

// Diff is the Change of the file at path from before to after (exists:
// the file is there now; else before is ""): its unified diff, bounded.
func Diff(path string, exists bool, before, after string) *Change {
	c := &Change{Path: path, Exists: exists}
	add := func(op, text string) {
		if len(c.Lines) >= changeLines {
			c.More++
			return
		}
		c.Lines = append(c.Lines, ChangeLine{Op: op, Text: clipRunes(strings.TrimRight(text, "\r\n"), changeLineRunes)})
	}
	u, err := udiff.ToUnifiedDiff("before", "after", before, udiff.Lines(before, after), changeContext)
	if err != nil {
		c.Unshown = "the change could not be computed"
		return c
	}
	for _, h := range u.Hunks {
		if exists && before != "" {
			add("@", fmt.Sprintf("from line %d", h.FromLine))
		}
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				c.Removed++
				add("-", l.Content)
			case udiff.Insert:
				c.Added++
				add("+", l.Content)
			default:
				add(" ", l.Content)
			}
		}
	}
	return c
}

func clipRunes(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	r := []rune(s)
	return string(r[:limit]) + "…"
}
