package widget

import (
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// A path too long for its room is shortened by whole folders, never by
// characters inside a name, and never by its end: the file name and the
// folders that hold it say where a write lands, and two paths that part
// in the middle (clients/acme/… and clients/evil/…) must not show alike.
// A text's head and tail (the permission dialog's values) would hide
// exactly those folders.
//
// The rule: the path whole when it fits; else its first element (the
// root it starts from: /etc or /home, ~, C:, a workspace's top folder
// such as .githooks or archive), "…" for the folders dropped after it,
// and as many of the folders before the file name as fit, nearest
// first; else "…/" and the nearest folders that fit and the file name;
// else the file name's end (its extension stays).

// ShortPath fits the path p into n cells by the rule above.
func ShortPath(p string, n int) string {
	n = max(n, 1)
	if ansi.StringWidth(p) <= n {
		return p
	}
	sep := "/"
	if !strings.Contains(p, "/") && strings.Contains(p, `\`) {
		sep = `\`
	}
	lead := ""
	rest := p
	for strings.HasPrefix(rest, sep) {
		lead += sep
		rest = rest[len(sep):]
	}
	trail := ""
	for strings.HasSuffix(rest, sep) && rest != "" {
		trail += sep
		rest = rest[:len(rest)-len(sep)]
	}
	parts := strings.Split(rest, sep)
	name := parts[len(parts)-1] + trail
	if len(parts) >= 3 {
		// first/…/the nearest folders/name
		first := lead + parts[0] + sep + "…"
		kept := sep + name
		for i := len(parts) - 2; i >= 1; i-- {
			more := sep + parts[i] + kept
			if ansi.StringWidth(first+more) > n {
				break
			}
			kept = more
		}
		if ansi.StringWidth(first+kept) <= n {
			return first + kept
		}
	}
	if len(parts) >= 2 || lead != "" {
		// …/the nearest folders/name
		kept := sep + name
		for i := len(parts) - 2; i >= 0; i-- {
			more := sep + parts[i] + kept
			if ansi.StringWidth("…"+more) > n {
				break
			}
			kept = more
		}
		if ansi.StringWidth("…"+kept) <= n {
			return "…" + kept
		}
	}
	return "…" + ansi.TruncateLeft(name, ansi.StringWidth(name)-(n-1), "")
}

// pathWords are the words of an argument's name that say its value is a
// path ("path", "dest_path", "filePath", "files[0].dir").
var pathWords = map[string]bool{
	"path": true, "paths": true, "filepath": true, "file": true, "filename": true, "files": true,
	"dir": true, "dirname": true, "directory": true, "folder": true, "cwd": true, "root": true,
	"src": true, "dst": true, "dest": true, "destination": true, "source": true, "target": true,
}

// LooksLikePath reports whether the value of the argument name reads as
// a file path: one line, not a URL, with a folder separator, and either
// named as a path (path, file, folder, dest…, a word of the name's last
// part) or written as one, with no blank (/…, ~/…, ./…, ../…): a
// command such as "/bin/sh -c …" is not one, its tail is what matters.
func LooksLikePath(name, value string) bool {
	if value == "" || strings.ContainsAny(value, "\n\r") || strings.Contains(value, "://") {
		return false
	}
	if !strings.Contains(value, "/") && !strings.Contains(value, `\`) {
		return false
	}
	if i := strings.LastIndexAny(name, ".]"); i >= 0 {
		name = name[i+1:]
	}
	for _, w := range strings.FieldsFunc(name, func(r rune) bool { return r == '_' || r == '-' || r == ' ' }) {
		if pathWords[strings.ToLower(w)] {
			return true
		}
	}
	if strings.ContainsAny(value, " \t") {
		return false
	}
	for _, p := range []string{"/", "~/", "./", "../"} {
		if strings.HasPrefix(value, p) {
			return true
		}
	}
	return false
}

// FitPathIn fits line into width cells by shortening the paths it names
// (ShortPath), each in proportion to its length, so what lies around
// them — a change's counts, a size, the other path of a rename — stays;
// a line that still does not fit is cut at its end.
func FitPathIn(line string, width int, paths ...string) string {
	if ansi.StringWidth(line) <= width {
		return line
	}
	type at struct {
		i, w int
		p    string
	}
	var found []at
	fixed, total := ansi.StringWidth(line), 0
	for _, p := range paths {
		if p == "" {
			continue
		}
		from := 0
		for _, f := range found { // a second path is looked for after the first
			from = max(from, f.i+len(f.p))
		}
		j := strings.Index(line[from:], p)
		if j < 0 {
			continue
		}
		w := ansi.StringWidth(p)
		found = append(found, at{from + j, w, p})
		fixed -= w
		total += w
	}
	if avail := width - fixed; len(found) > 0 && avail >= 8*len(found) {
		var b strings.Builder
		last := 0
		for _, f := range found {
			b.WriteString(line[last:f.i])
			b.WriteString(ShortPath(f.p, avail*f.w/total))
			last = f.i + len(f.p)
		}
		b.WriteString(line[last:])
		line = b.String()
	}
	return ansi.Truncate(line, width, "…")
}

// WrapPath is FitWidth for a text that holds paths: a line too long
// breaks after a folder separator (or at a blank or a hyphen) where it
// can, so that no folder's name is split across lines.
func WrapPath(s string, width int) string {
	width = max(width, 1)
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = TrimRightSpace(l)
		if ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		for _, w := range strings.Split(ansi.Wrap(l, width, `/\`), "\n") {
			out = append(out, TrimRightSpace(w)+ResetIfStyled(w))
		}
	}
	return strings.Join(out, "\n")
}
