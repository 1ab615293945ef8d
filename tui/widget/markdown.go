package widget

import (
	"strings"
	"unicode/utf8"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// Markdown renders answers with glamour for one background. Building a
// glamour renderer costs more than rendering, so one is kept per width
// (a handful: a resize drag would otherwise build one per event). A
// glamour renderer is not safe for concurrent use; these are only used
// from the UI loop (Update), never from a Cmd.
type Markdown struct {
	dark bool
	byW  map[int]*glamour.TermRenderer
}

// maxRenderers bounds the renderers kept; past it they are all dropped.
const maxRenderers = 8

// Render turns Markdown into styled lines no wider than width. A renderer
// failure falls back to the plain text, wrapped. src is a model's answer:
// its control characters and escape sequences are made visible escapes
// (internal/termtext) before glamour reads it, so the only escape
// sequences in the output are glamour's own styling. An escape starts
// with a backslash and a letter, which Markdown leaves as it is.
func (md *Markdown) Render(src string, width int, dark bool) string {
	src = termtext.Sanitize(src)
	width = max(width, 1)
	if md.byW == nil || md.dark != dark || len(md.byW) >= maxRenderers && md.byW[width] == nil {
		md.byW, md.dark = map[int]*glamour.TermRenderer{}, dark
	}
	r := md.byW[width]
	if r == nil {
		cfg := styles.LightStyleConfig
		if dark {
			cfg = styles.DarkStyleConfig
		}
		// Spacing between blocks is ours to decide.
		cfg.Document.BlockPrefix, cfg.Document.BlockSuffix = "", ""
		// Inline code is marked by its colours; glamour's padding is a
		// no-break space, which a copy would carry into a command line.
		cfg.Code.Prefix, cfg.Code.Suffix = "", ""
		var err error
		if r, err = glamour.NewTermRenderer(glamour.WithStyles(cfg), glamour.WithWordWrap(width)); err != nil {
			return FitWidth(src, width)
		}
		md.byW[width] = r
	}
	out, err := r.Render(WrapCode(src, width-2*codeIndent))
	if err != nil {
		return FitWidth(src, width)
	}
	// No no-break space from the styles reaches a copy either.
	out = strings.ReplaceAll(out, "\u00a0", " ")
	return FitWidth(TrimBlankLines(out), width)
}

// codeIndent is where a fenced code block's lines start — the document's
// margin and the block's own (glamour's default styles) — and the room
// glamour keeps on their right as well.
const codeIndent = 4

// contMark begins the continuation of a code line too long for the pane.
const contMark = "↪ "

// Cut is the head of s that fits in room cells, without the blanks it
// would end with (a piece's trailing blanks would not show: they begin
// the next piece instead), and at least one character.
func Cut(s string, room int) string {
	if ansi.StringWidth(s) <= room {
		return s
	}
	head := ansi.Truncate(s, room, "")
	if t := strings.TrimRight(head, " "); t != "" {
		head = t
	}
	if head == "" {
		_, size := utf8.DecodeRuneInString(s)
		head = s[:size]
	}
	return head
}

// WrapCode cuts the lines of fenced code blocks that are wider than
// width cells into pieces that fit, each continuation at the line's own
// indentation behind contMark. glamour would wrap them at words, the
// continuation flush with the margin, so that wrapped code could not be
// told from the next line of code.
func WrapCode(src string, width int) string {
	if width < 16 || !strings.Contains(src, "```") && !strings.Contains(src, "~~~") {
		return src
	}
	lines := strings.Split(src, "\n")
	out := make([]string, 0, len(lines))
	fence := ""
	for _, l := range lines {
		t := strings.TrimLeft(l, " ")
		switch {
		case fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence = t[:3]
		case fence != "" && strings.HasPrefix(t, fence):
			fence = ""
		case fence != "" && ansi.StringWidth(l) > width:
			indent := l[:len(l)-len(t)]
			if ansi.StringWidth(indent) > width/2 {
				indent = ""
			}
			room, rest := width, l
			for first := true; rest != ""; first = false {
				piece := Cut(rest, room)
				if first {
					out = append(out, piece)
					room = width - ansi.StringWidth(indent+contMark)
				} else {
					out = append(out, indent+contMark+piece)
				}
				rest = rest[len(piece):]
			}
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// FitWidth makes every line of s at most width cells wide: long lines are
// wrapped (at spaces where possible), trailing blanks dropped.
func FitWidth(s string, width int) string {
	if width < 1 {
		width = 1
	}
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = TrimRightSpace(l)
		if ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		for _, w := range strings.Split(ansi.Wrap(l, width, ""), "\n") {
			out = append(out, TrimRightSpace(w)+ResetIfStyled(w))
		}
	}
	return strings.Join(out, "\n")
}

// TrimRightSpace drops trailing spaces, keeping any escape sequences that
// follow them (glamour pads lines, then resets the style).
func TrimRightSpace(l string) string {
	if !strings.Contains(l, " ") {
		return l
	}
	if strings.TrimRight(ansi.Strip(l), " ") == ansi.Strip(l) {
		return l
	}
	// Keep the styled prefix up to the last visible non-space cell.
	keep := ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " "))
	return ansi.Truncate(l, keep, "") + ResetIfStyled(l)
}

// TrimBlankLines drops leading and trailing lines that are blank once
// escape sequences are removed.
func TrimBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	start, end := 0, len(lines)
	for start < end && strings.TrimSpace(ansi.Strip(lines[start])) == "" {
		start++
	}
	for end > start && strings.TrimSpace(ansi.Strip(lines[end-1])) == "" {
		end--
	}
	return strings.Join(lines[start:end], "\n")
}

// ResetIfStyled returns a style reset when l carries escape sequences, so
// a cut line never lends its colour to the next.
func ResetIfStyled(l string) string {
	if strings.Contains(l, "\x1b[") {
		return ansi.ResetStyle
	}
	return ""
}
