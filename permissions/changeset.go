package permissions

import (
	"fmt"
	"strings"
)

// ChangeSet is what an app's process wrote into a folder it shares with
// the user, as the hub read it from the app's layer (package changes):
// a KindChanges request carries it, and nothing of it reaches the folder
// until the person — or a grant they gave — accepts it. Every entry is
// listed; the hub's Warnings mark those something else may run or trust;
// the list of what is warned decides only the warning, never what is
// shown.
type ChangeSet struct {
	// ID names the set (its layer) for `bulkhead changes`.
	ID string `json:"id"`
	// Folder is the real folder the changes are for.
	Folder  string        `json:"folder"`
	Entries []ChangeEntry `json:"entries"`
	// More counts the entries past the bound, not listed: an accept
	// leaves them pending, to be shown next.
	More int `json:"more,omitempty"`
	// Running: the process that wrote them still runs (a server), and
	// may write more.
	Running bool `json:"running,omitempty"`
}

// ChangeEntry is one change of a set.
type ChangeEntry struct {
	// Path is relative to the set's folder, slash-separated.
	Path string `json:"path"`
	// Op is what happened to it: added, changed, removed, renamed (from
	// From), mode (its mode alone), replaced (by another type: a file by
	// a link or a folder), commits (git's own data under a .git folder:
	// Summary says the commits).
	Op   string `json:"op"`
	From string `json:"from,omitempty"`
	// Type is file, folder, link, fifo, socket or device.
	Type string `json:"type"`
	// Mode and OldMode as ls shows them ("-rwxr-xr-x"); Size and
	// OldSize in bytes.
	Mode    string `json:"mode,omitempty"`
	OldMode string `json:"old_mode,omitempty"`
	Size    int64  `json:"size,omitempty"`
	OldSize int64  `json:"old_size,omitempty"`
	// Target is where a link leads (its text; applying it never
	// follows it).
	Target string `json:"target,omitempty"`
	// Files counts the paths an entry stands for (a folder removed with
	// what it held, a group of git's data).
	Files int `json:"files,omitempty"`
	// Summary says a group in words: "1 commit on main: Fix the parser,
	// 3 files". Its words that come from the app (a commit's subject)
	// are data, cleaned and bounded.
	Summary string `json:"summary,omitempty"`
	// Diff is a text file's change, as the write dialog shows it.
	Diff *Change `json:"diff,omitempty"`
	// Warnings are the hub's words on why something else may run or
	// trust it ("git runs this file before every commit", "executable",
	// "set-id bit: stripped when applied").
	Warnings []string `json:"warnings,omitempty"`
	// Conflict says why applying it would replace something of the
	// user's that changed underneath (it is then warned too).
	Conflict string `json:"conflict,omitempty"`
	// Never says why the entry is never applied (a fifo, a device, a
	// socket): shown, not applied.
	Never string `json:"never,omitempty"`
}

// Warned reports whether any entry carries a warning: such a set asks
// every time, and no policy accepts it.
func (c ChangeSet) Warned() bool {
	for _, e := range c.Entries {
		if len(e.Warnings) > 0 || e.Conflict != "" {
			return true
		}
	}
	return c.More > 0
}

// Count says the set in words: "3 added, 1 changed, 1 removed".
func (c ChangeSet) Count() string {
	order := []string{"added", "changed", "removed", "renamed", "mode", "replaced", "commits"}
	n := map[string]int{}
	for _, e := range c.Entries {
		n[e.Op]++
	}
	var parts []string
	for _, op := range order {
		if n[op] == 0 {
			continue
		}
		w := op
		switch op {
		case "mode":
			w = "modes changed"
			if n[op] == 1 {
				w = "mode changed"
			}
		case "commits":
			w = "git data"
		}
		parts = append(parts, fmt.Sprintf("%d %s", n[op], w))
	}
	if c.More > 0 {
		parts = append(parts, fmt.Sprintf("%d more not listed", c.More))
	}
	if len(parts) == 0 {
		return "no changes"
	}
	return strings.Join(parts, ", ")
}

// Words says the entry in one line, as every client lists it: "added
// notes/todo.md (1.2 kB, -rw-r--r--)", "removed old/ (12 files)".
func (e ChangeEntry) Words() string {
	path := e.Path
	if e.Type == "folder" {
		path += "/"
	}
	var b strings.Builder
	switch e.Op {
	case "renamed":
		fmt.Fprintf(&b, "renamed %s → %s", e.From, path)
	case "mode":
		fmt.Fprintf(&b, "mode of %s: %s → %s", path, e.OldMode, e.Mode)
	case "replaced":
		fmt.Fprintf(&b, "replaced %s by a %s", path, e.Type)
	case "commits":
		fmt.Fprintf(&b, "git: %s", path)
	default:
		fmt.Fprintf(&b, "%s %s", e.Op, path)
	}
	var info []string
	switch {
	case e.Summary != "":
		info = append(info, e.Summary)
	case e.Type == "link":
		info = append(info, "a link to "+e.Target)
	case e.Type == "file" && e.Op != "removed":
		info = append(info, Size(e.Size))
	case e.Type != "file" && e.Type != "folder":
		info = append(info, "a "+e.Type)
	}
	if e.Files > 1 && e.Op != "commits" {
		info = append(info, fmt.Sprintf("%d files", e.Files))
	}
	if e.Mode != "" && e.Op != "removed" && e.Op != "mode" && e.Type != "link" {
		info = append(info, e.Mode)
	}
	if len(info) > 0 {
		b.WriteString(" (" + strings.Join(info, ", ") + ")")
	}
	return b.String()
}

// Size says n bytes as a person reads it: "812 B", "1.2 kB", "100 MB".
func Size(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1000)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	}
	return fmt.Sprintf("%.1f GB", float64(n)/1e9)
}

// Brief is the set as a log keeps it: at most n entries, no diff lines
// (their counts kept), the rest counted in More.
func (c ChangeSet) Brief(n int) *ChangeSet {
	out := c
	out.Entries = nil
	for i, e := range c.Entries {
		if i >= n {
			out.More += len(c.Entries) - n
			break
		}
		if e.Diff != nil {
			d := *e.Diff
			d.More += len(d.Lines)
			d.Lines = nil
			e.Diff = &d
		}
		out.Entries = append(out.Entries, e)
	}
	return &out
}

// ChangesWords say what d did with a change set: "accepted all",
// "accepted 2 of 5", "discarded", "left pending".
func (d Decision) ChangesWords(set *ChangeSet) string {
	n := 0
	if set != nil {
		n = len(set.Entries)
	}
	switch {
	case d.Allowed && d.Picks == nil:
		return "accepted all"
	case d.Allowed && len(d.Picks) == 0:
		return "accepted none (discarded)"
	case d.Allowed:
		return fmt.Sprintf("accepted %d of %d", len(d.Picks), n)
	case d.Pending():
		return "left pending"
	}
	return "discarded"
}
