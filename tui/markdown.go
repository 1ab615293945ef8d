package tui

import (
	"strings"

	"charm.land/glamour/v2"
	"charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/termtext"
)

// markdown renders answers with glamour for one background. Building a
// glamour renderer costs more than rendering, so one is kept per width
// (a handful: a resize drag would otherwise build one per event). A
// glamour renderer is not safe for concurrent use; these are only used
// from the UI loop (Update), never from a Cmd.
type markdown struct {
	dark bool
	byW  map[int]*glamour.TermRenderer
}

// maxRenderers bounds the renderers kept; past it they are all dropped.
const maxRenderers = 8

// render turns Markdown into styled lines no wider than width. A renderer
// failure falls back to the plain text, wrapped. src is a model's answer:
// its control characters and escape sequences are made visible escapes
// (internal/termtext) before glamour reads it, so the only escape
// sequences in the output are glamour's own styling. An escape starts
// with a backslash and a letter, which Markdown leaves as it is.
func (md *markdown) render(src string, width int, dark bool) string {
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
		var err error
		if r, err = glamour.NewTermRenderer(glamour.WithStyles(cfg), glamour.WithWordWrap(width)); err != nil {
			return fitWidth(src, width)
		}
		md.byW[width] = r
	}
	out, err := r.Render(src)
	if err != nil {
		return fitWidth(src, width)
	}
	return fitWidth(trimBlankLines(out), width)
}

// fitWidth makes every line of s at most width cells wide: long lines are
// wrapped (at spaces where possible), trailing blanks dropped.
func fitWidth(s string, width int) string {
	if width < 1 {
		width = 1
	}
	lines := strings.Split(s, "\n")
	out := make([]string, 0, len(lines))
	for _, l := range lines {
		l = trimRightSpace(l)
		if ansi.StringWidth(l) <= width {
			out = append(out, l)
			continue
		}
		for _, w := range strings.Split(ansi.Wrap(l, width, ""), "\n") {
			out = append(out, trimRightSpace(w)+resetIfStyled(w))
		}
	}
	return strings.Join(out, "\n")
}

// trimRightSpace drops trailing spaces, keeping any escape sequences that
// follow them (glamour pads lines, then resets the style).
func trimRightSpace(l string) string {
	if !strings.Contains(l, " ") {
		return l
	}
	if strings.TrimRight(ansi.Strip(l), " ") == ansi.Strip(l) {
		return l
	}
	// Keep the styled prefix up to the last visible non-space cell.
	keep := ansi.StringWidth(strings.TrimRight(ansi.Strip(l), " "))
	return ansi.Truncate(l, keep, "") + resetIfStyled(l)
}

// trimBlankLines drops leading and trailing lines that are blank once
// escape sequences are removed.
func trimBlankLines(s string) string {
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

// resetIfStyled returns a style reset when l carries escape sequences, so
// a cut line never lends its colour to the next.
func resetIfStyled(l string) string {
	if strings.Contains(l, "\x1b[") {
		return ansi.ResetStyle
	}
	return ""
}
