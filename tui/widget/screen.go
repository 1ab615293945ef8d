// Package widget holds the terminal UI's building blocks that know
// nothing of the hub or of the root model: the layout of a full screen
// (a title, a filter or description line, a table with a cursor, a
// detail pane, a footer of keys — screen.go), its table columns and
// cells, the filter box, time stamps, and the text a pane draws: width
// fitting, Markdown by glamour (markdown.go), and Clean, which makes an
// app's or a model's text safe to draw. The chat, the dialogs and the
// screens (package tui, for now) are built from them; each takes a
// style.Theme.
package widget

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// The full screens (the permission manager, the apps screen, the memory
// screen) replace the chat above the status bar, and a permission dialog
// still opens over them. Each is a title line, a line under it (filter or
// description), a table with a cursor, a detail pane for the selected row
// and a footer of keys; this file lays them out.

// Column is one Column of a screen's table.
type Column struct {
	Title    string
	Min, Max int // cells; max 0: whatever is left
	Drop     int // when the width runs out, the highest goes first; 0 never
}

// Cell is one table Cell: plain text (cleaned by the caller) and its style.
type Cell struct {
	Text string
	St   lipgloss.Style
}

func PlainCell(s string) Cell { return Cell{Text: s} }

// ColGap is the space between two columns.
const ColGap = 2

// FitColumns gives each column a width for a table width cells wide, for
// rows: 0 for a column dropped. Columns get their minimum (dropping the
// most droppable until they fit); what is left widens them evenly, each up
// to its maximum and to the widest of its cells and title.
func FitColumns(cols []Column, width int, rows [][]Cell) []int {
	out := make([]int, len(cols))
	on := make([]bool, len(cols))
	for i := range cols {
		on[i] = true
	}
	need := func() int {
		n, k := 0, 0
		for i, c := range cols {
			if on[i] {
				n += c.Min
				k++
			}
		}
		return n + max(k-1, 0)*ColGap
	}
	for need() > width {
		worst := -1
		for i, c := range cols {
			if on[i] && c.Drop > 0 && (worst < 0 || c.Drop > cols[worst].Drop) {
				worst = i
			}
		}
		if worst < 0 {
			break
		}
		on[worst] = false
	}
	limit := make([]int, len(cols))
	for i, c := range cols {
		limit[i] = ansi.StringWidth(c.Title)
		for _, r := range rows {
			if i < len(r) {
				limit[i] = max(limit[i], ansi.StringWidth(OneLine(r[i].Text)))
			}
		}
		if c.Max > 0 {
			limit[i] = min(limit[i], c.Max)
		}
		if on[i] {
			out[i] = c.Min
		}
	}
	for extra := width - need(); extra > 0; {
		grew := false
		for i := range cols {
			if extra > 0 && on[i] && out[i] < limit[i] {
				out[i]++
				extra--
				grew = true
			}
		}
		if !grew {
			break
		}
	}
	return out
}

// TableRow draws one row in widths (0: the column is dropped). The selected
// row is marked and drawn in the selection colours, its cells unstyled.
func TableRow(th style.Theme, cells []Cell, widths []int, width int, sel bool) string {
	var parts []string
	for i, w := range widths {
		if w <= 0 {
			continue
		}
		c := Cell{}
		if i < len(cells) {
			c = cells[i]
		}
		t := ansi.Truncate(OneLine(c.Text), w, "…")
		t += strings.Repeat(" ", max(w-ansi.StringWidth(t), 0))
		if !sel {
			t = c.St.Render(t)
		}
		parts = append(parts, t)
	}
	line := strings.Join(parts, strings.Repeat(" ", ColGap))
	if sel {
		line = "▸ " + line
		line += strings.Repeat(" ", max(width-ansi.StringWidth(line), 0))
		return th.Selected.Render(ansi.Truncate(line, width, ""))
	}
	return ansi.Truncate("  "+line, width, "…")
}

// TableHead draws the column titles.
func TableHead(th style.Theme, cols []Column, widths []int, width int) string {
	cells := make([]Cell, len(cols))
	for i, c := range cols {
		cells[i] = Cell{Text: c.Title, St: th.Dim.Bold(true)}
	}
	return TableRow(th, cells, widths, width, false)
}

// Layout is how a screen's height is shared: list rows, and detail
// lines under a rule (0: no detail pane).
type Layout struct{ List, Detail int }

// SplitScreen shares h lines: a title, a second line, a table head and a
// footer are fixed; the rest goes to the list and, when there is room, a
// detail pane. full gives the detail pane everything (the pane's rule
// takes the table head's line).
func SplitScreen(h int, full bool) Layout {
	r := max(h-4, 1)
	switch {
	case full:
		return Layout{List: 0, Detail: r}
	case r < 10:
		return Layout{List: r}
	}
	d := min(r*2/5, 14)
	return Layout{List: r - d - 1, Detail: d}
}

// Window is the first of n lines to show in rows lines so that line cur
// is visible.
func Window(n, rows, cur int) int {
	if n <= rows || cur < rows {
		return 0
	}
	return min(cur-rows+1, n-rows)
}

// TitleBar is a screen's first line: its name, tabs (the active one
// highlighted) and a badge on the right.
func TitleBar(th style.Theme, width int, name string, tabs []string, active int, right string) string {
	left := th.Brand.Render(" " + name + " ")
	for i, t := range tabs {
		st := th.Header
		if i == active {
			st = th.Selected
		}
		left += th.Header.Render(" ") + st.Render(" "+t+" ")
	}
	room := width - ansi.StringWidth(right)
	if ansi.StringWidth(left) > room {
		left = ansi.Truncate(left, max(room, 0), "")
	}
	pad := max(width-ansi.StringWidth(left)-ansi.StringWidth(right), 0)
	return ansi.Truncate(left+th.Header.Render(strings.Repeat(" ", pad))+right, width, "")
}

// PaneRule is the line between the list and the detail pane.
func PaneRule(th style.Theme, width int, label string) string {
	head := "── " + label + " "
	if ansi.StringWidth(head) > width {
		return th.Rule.Render(strings.Repeat("─", max(width, 0)))
	}
	return th.Rule.Render(head + strings.Repeat("─", width-ansi.StringWidth(head)))
}

// WrapLines wraps each line to width, keeping its style: a line's style
// applies to each piece. Lines are clean already.
func WrapLines(lines []Styled, width int) []string {
	var out []string
	for _, l := range lines {
		for _, p := range strings.Split(FitWidth(l.Text, max(width, 1)), "\n") {
			out = append(out, ansi.Truncate(l.St.Render(p), width, ""))
		}
	}
	return out
}

// Styled is a line of a detail pane and its style.
type Styled struct {
	Text string
	St   lipgloss.Style
}

// FilterBox is a screen's filter line: / starts typing; while typing it
// takes the keys (enter, ↑ or ↓ keep the filter, esc clears it); the
// screens read Value.
type FilterBox struct {
	Input  textinput.Model
	Typing bool
}

func NewFilterBox(th style.Theme) FilterBox { return FilterBox{Input: newFilter(th)} }

// Value is the filter as typed.
func (f *FilterBox) Value() string { return f.Input.Value() }

// Start hands the keys to the filter.
func (f *FilterBox) Start() tea.Cmd {
	f.Typing = true
	return f.Input.Focus()
}

// Clear empties the filter.
func (f *FilterBox) Clear() { f.Input.Reset() }

// Key takes one Key while typing; edited reports whether the text may
// have changed (the screen then moves its cursor to the top).
func (f *FilterBox) Key(msg tea.KeyPressMsg) (cmd tea.Cmd, edited bool) {
	switch msg.String() {
	case "enter", "down", "up":
		f.Typing = false
		f.Input.Blur()
	case "esc":
		f.Typing = false
		f.Input.Reset()
		f.Input.Blur()
	default:
		f.Input, cmd = f.Input.Update(msg)
		return cmd, true
	}
	return nil, false
}

// Update passes other input (a paste) to the filter while typing.
func (f *FilterBox) Update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	f.Input, cmd = f.Input.Update(msg)
	return cmd
}

// Line is the filter Line when there is one to show, else "".
func (f *FilterBox) Line(w int) string {
	if !f.Typing && f.Input.Value() == "" {
		return ""
	}
	f.Input.SetWidth(max(w-6, 1))
	return " " + f.Input.View()
}

// newFilter is a screen's filter input, typed after /.
func newFilter(th style.Theme) textinput.Model {
	ti := textinput.New()
	ti.Prompt = "/ "
	ti.Placeholder = "type to filter"
	ti.CharLimit = 200
	st := textinput.DefaultStyles(th.Dark)
	st.Cursor.Blink = false
	st.Focused.Placeholder, st.Blurred.Placeholder = th.Dim, th.Dim
	st.Focused.Prompt, st.Blurred.Prompt = th.Key, th.Key
	ti.SetStyles(st)
	return ti
}

// Screen joins a Screen's parts into exactly h lines of at most w cells.
func Screen(w, h int, parts ...[]string) string {
	var lines []string
	for _, p := range parts {
		lines = append(lines, p...)
	}
	return strings.Join(FitLines(lines, w, h), "\n")
}

// Footer is a screen's last line: the question or message when there is
// one, else the keys.
func Footer(th style.Theme, width int, keys, msg string, msgSt lipgloss.Style) string {
	if msg != "" {
		return msgSt.Render(ansi.Truncate(" "+OneLine(msg), width, "…"))
	}
	return th.Dim.Render(ansi.Truncate(" "+keys, width, "…"))
}

// Stamp shows t in now's time zone: the time alone today, else the date.
func Stamp(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("Jan 02 15:04")
}

// ShortStamp is stamp to the minute.
func ShortStamp(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04")
	}
	return t.Format("Jan 02 15:04")
}

// LongStamp is t in full, in now's time zone.
func LongStamp(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.In(now.Location()).Format("2006-01-02 15:04:05")
}

// MatchAll reports whether hay (lower case) holds every word of filter.
func MatchAll(hay, filter string) bool {
	for _, w := range strings.Fields(strings.ToLower(filter)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// FitLines cuts or pads lines to exactly n, each at most width wide.
func FitLines(lines []string, width, n int) []string {
	n = max(n, 0)
	if len(lines) > n {
		lines = lines[:n]
	}
	for len(lines) < n {
		lines = append(lines, "")
	}
	for i, l := range lines {
		if ansi.StringWidth(l) > width {
			lines[i] = ansi.Truncate(l, width, "")
		}
	}
	return lines
}

// Clean makes text from an app or a model safe to draw, as the CLI prints
// it (internal/termtext): control characters, escape sequences and
// invisible formatting characters (bidi overrides, zero-width characters)
// are shown as visible escapes such as \x1b and \u202e, so what the
// screen shows is what the app or model wrote and nothing of it acts on
// the terminal. Newlines stay; tabs become four spaces.
func Clean(s string) string {
	return strings.ReplaceAll(termtext.Sanitize(s), "\t", "    ")
}

// OneLine is Clean text on one line.
func OneLine(s string) string {
	return strings.ReplaceAll(Clean(s), "\n", " ⏎ ")
}

// PadFrame pads the frame's lines to w cells and h lines, a pane
// exactly its size.
func PadFrame(frame []string, w, h int) string {
	if w <= 0 || h <= 0 {
		return ""
	}
	return lipgloss.NewStyle().Width(w).Height(h).Render(strings.Join(frame, "\n"))
}

// DetailKey moves a detail pane that has the whole screen: ↑/↓ (k/j) a
// line, pgup/pgdn (space) ten lines; enter, esc or q give the screen
// back (true). The view clamps scroll to what the pane holds.
func DetailKey(key string, scroll *int) (back bool) {
	switch key {
	case "enter", "esc", "q":
		return true
	case "up", "k":
		*scroll = max(*scroll-1, 0)
	case "down", "j":
		*scroll++
	case "pgup":
		*scroll = max(*scroll-10, 0)
	case "pgdown", "space":
		*scroll += 10
	}
	return false
}
