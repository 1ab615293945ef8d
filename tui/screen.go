package tui

import (
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// The permission manager (manager.go), the apps screen (appsview.go) and
// the memory screen (memoryview.go) are full screens: they replace the
// chat above the status bar, and a permission dialog still opens over
// them. Each is a title line, a line under it (filter or description), a
// table with a cursor, a detail pane for the selected row and a footer of
// keys; this file lays them out.

// column is one column of a screen's table.
type column struct {
	title    string
	min, max int // cells; max 0: whatever is left
	drop     int // when the width runs out, the highest goes first; 0 never
}

// cell is one table cell: plain text (cleaned by the caller) and its style.
type cell struct {
	text string
	st   lipgloss.Style
}

func plainCell(s string) cell { return cell{text: s} }

// colGap is the space between two columns.
const colGap = 2

// fitColumns gives each column a width for a table width cells wide, for
// rows: 0 for a column dropped. Columns get their minimum (dropping the
// most droppable until they fit); what is left widens them evenly, each up
// to its maximum and to the widest of its cells and title.
func fitColumns(cols []column, width int, rows [][]cell) []int {
	out := make([]int, len(cols))
	on := make([]bool, len(cols))
	for i := range cols {
		on[i] = true
	}
	need := func() int {
		n, k := 0, 0
		for i, c := range cols {
			if on[i] {
				n += c.min
				k++
			}
		}
		return n + max(k-1, 0)*colGap
	}
	for need() > width {
		worst := -1
		for i, c := range cols {
			if on[i] && c.drop > 0 && (worst < 0 || c.drop > cols[worst].drop) {
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
		limit[i] = ansi.StringWidth(c.title)
		for _, r := range rows {
			if i < len(r) {
				limit[i] = max(limit[i], ansi.StringWidth(oneLine(r[i].text)))
			}
		}
		if c.max > 0 {
			limit[i] = min(limit[i], c.max)
		}
		if on[i] {
			out[i] = c.min
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

// tableRow draws one row in widths (0: the column is dropped). The selected
// row is marked and drawn in the selection colours, its cells unstyled.
func tableRow(th style.Theme, cells []cell, widths []int, width int, sel bool) string {
	var parts []string
	for i, w := range widths {
		if w <= 0 {
			continue
		}
		c := cell{}
		if i < len(cells) {
			c = cells[i]
		}
		t := ansi.Truncate(oneLine(c.text), w, "…")
		t += strings.Repeat(" ", max(w-ansi.StringWidth(t), 0))
		if !sel {
			t = c.st.Render(t)
		}
		parts = append(parts, t)
	}
	line := strings.Join(parts, strings.Repeat(" ", colGap))
	if sel {
		line = "▸ " + line
		line += strings.Repeat(" ", max(width-ansi.StringWidth(line), 0))
		return th.Selected.Render(ansi.Truncate(line, width, ""))
	}
	return ansi.Truncate("  "+line, width, "…")
}

// tableHead draws the column titles.
func tableHead(th style.Theme, cols []column, widths []int, width int) string {
	cells := make([]cell, len(cols))
	for i, c := range cols {
		cells[i] = cell{text: c.title, st: th.Dim.Bold(true)}
	}
	return tableRow(th, cells, widths, width, false)
}

// screenLayout is how a screen's height is shared: list rows, and detail
// lines under a rule (0: no detail pane).
type screenLayout struct{ list, detail int }

// splitScreen shares h lines: a title, a second line, a table head and a
// footer are fixed; the rest goes to the list and, when there is room, a
// detail pane. full gives the detail pane everything (the pane's rule
// takes the table head's line).
func splitScreen(h int, full bool) screenLayout {
	r := max(h-4, 1)
	switch {
	case full:
		return screenLayout{list: 0, detail: r}
	case r < 10:
		return screenLayout{list: r}
	}
	d := min(r*2/5, 14)
	return screenLayout{list: r - d - 1, detail: d}
}

// window is the first of n lines to show in rows lines so that line cur
// is visible.
func window(n, rows, cur int) int {
	if n <= rows || cur < rows {
		return 0
	}
	return min(cur-rows+1, n-rows)
}

// titleBar is a screen's first line: its name, tabs (the active one
// highlighted) and a badge on the right.
func titleBar(th style.Theme, width int, name string, tabs []string, active int, right string) string {
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

// paneRule is the line between the list and the detail pane.
func paneRule(th style.Theme, width int, label string) string {
	head := "── " + label + " "
	if ansi.StringWidth(head) > width {
		return th.Rule.Render(strings.Repeat("─", max(width, 0)))
	}
	return th.Rule.Render(head + strings.Repeat("─", width-ansi.StringWidth(head)))
}

// wrapLines wraps each line to width, keeping its style: a line's style
// applies to each piece. Lines are clean already.
func wrapLines(lines []styled, width int) []string {
	var out []string
	for _, l := range lines {
		for _, p := range strings.Split(fitWidth(l.text, max(width, 1)), "\n") {
			out = append(out, ansi.Truncate(l.st.Render(p), width, ""))
		}
	}
	return out
}

// styled is a line of a detail pane and its style.
type styled struct {
	text string
	st   lipgloss.Style
}

// filterBox is a screen's filter line: / starts typing; while typing it
// takes the keys (enter, ↑ or ↓ keep the filter, esc clears it); the
// screens read Value.
type filterBox struct {
	input  textinput.Model
	typing bool
}

func newFilterBox(th style.Theme) filterBox { return filterBox{input: newFilter(th)} }

// Value is the filter as typed.
func (f *filterBox) Value() string { return f.input.Value() }

// start hands the keys to the filter.
func (f *filterBox) start() tea.Cmd {
	f.typing = true
	return f.input.Focus()
}

// clear empties the filter.
func (f *filterBox) clear() { f.input.Reset() }

// key takes one key while typing; edited reports whether the text may
// have changed (the screen then moves its cursor to the top).
func (f *filterBox) key(msg tea.KeyPressMsg) (cmd tea.Cmd, edited bool) {
	switch msg.String() {
	case "enter", "down", "up":
		f.typing = false
		f.input.Blur()
	case "esc":
		f.typing = false
		f.input.Reset()
		f.input.Blur()
	default:
		f.input, cmd = f.input.Update(msg)
		return cmd, true
	}
	return nil, false
}

// update passes other input (a paste) to the filter while typing.
func (f *filterBox) update(msg tea.Msg) tea.Cmd {
	var cmd tea.Cmd
	f.input, cmd = f.input.Update(msg)
	return cmd
}

// line is the filter line when there is one to show, else "".
func (f *filterBox) line(w int) string {
	if !f.typing && f.input.Value() == "" {
		return ""
	}
	f.input.SetWidth(max(w-6, 1))
	return " " + f.input.View()
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

// screen joins a screen's parts into exactly h lines of at most w cells.
func screen(w, h int, parts ...[]string) string {
	var lines []string
	for _, p := range parts {
		lines = append(lines, p...)
	}
	return strings.Join(fitLines(lines, w, h), "\n")
}

// footer is a screen's last line: the question or message when there is
// one, else the keys.
func footer(th style.Theme, width int, keys, msg string, msgSt lipgloss.Style) string {
	if msg != "" {
		return msgSt.Render(ansi.Truncate(" "+oneLine(msg), width, "…"))
	}
	return th.Dim.Render(ansi.Truncate(" "+keys, width, "…"))
}

// stamp shows t in now's time zone: the time alone today, else the date.
func stamp(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04:05")
	}
	return t.Format("Jan 02 15:04")
}

// shortStamp is stamp to the minute.
func shortStamp(t, now time.Time) string {
	if t.IsZero() {
		return "—"
	}
	t = t.In(now.Location())
	if y, m, d := t.Date(); y == now.Year() && m == now.Month() && d == now.Day() {
		return t.Format("15:04")
	}
	return t.Format("Jan 02 15:04")
}

// longStamp is t in full, in now's time zone.
func longStamp(t, now time.Time) string {
	if t.IsZero() {
		return "never"
	}
	return t.In(now.Location()).Format("2006-01-02 15:04:05")
}

// matchAll reports whether hay (lower case) holds every word of filter.
func matchAll(hay, filter string) bool {
	for _, w := range strings.Fields(strings.ToLower(filter)) {
		if !strings.Contains(hay, w) {
			return false
		}
	}
	return true
}

// fitLines cuts or pads lines to exactly n, each at most width wide.
func fitLines(lines []string, width, n int) []string {
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

// screenView draws the full screen open, if any — the permission manager,
// the apps or the memory screen — also while a permission dialog covers
// it.
// screenFull reports whether a full screen is up (under a permission
// dialog, too).
func (m Model) screenFull() bool {
	o := m.overlay
	if o == overlayPermission {
		o = m.under
	}
	return o.full()
}

func (m Model) screenView() (string, bool) {
	o := m.overlay
	if o == overlayPermission {
		o = m.under
	}
	h := m.height - 1
	switch {
	case o == overlayManager && m.mgr != nil:
		return m.mgr.view(m.th, m.width, h, m.now(), m.formView(formGrants)), true
	case o == overlayApps && m.appsv != nil:
		return m.appsv.view(m.th, m.width, h, m.bar.working, m.opts.Apps != nil), true
	case o == overlayMemory && m.memv != nil:
		return m.memv.view(m.th, m.width, h, m.now(), m.formView(formMemory)), true
	}
	return "", false
}
