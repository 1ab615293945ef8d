package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"charm.land/bubbles/v2/textinput"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// permDialog is the permission dialog: one request, its exact arguments
// (scrollable), the hub's assessment and the answers it offers. Its keys
// do nothing until the grace period has passed (armed).
type permDialog struct {
	id     uint64
	req    permissions.Request
	args   []string // the arguments, pretty-printed, one JSON line each
	armed  bool
	noting bool        // typing the note of a deny
	caveat *caveatStep // choosing the limits of a session or permanent grant
	note   textinput.Model
	scroll int // the first argument line shown
}

func newPermDialog(a pendingAsk, th theme) *permDialog {
	ti := textinput.New()
	ti.Prompt = "› "
	ti.Placeholder = "why not (reaches the app's model)"
	ti.CharLimit = 500
	st := textinput.DefaultStyles(th.dark)
	st.Cursor.Blink = false
	st.Focused.Placeholder, st.Blurred.Placeholder = th.dim, th.dim
	st.Focused.Prompt = th.key
	ti.SetStyles(st)
	return &permDialog{id: a.id, req: a.req, args: prettyArgs(a.req.Args), note: ti}
}

// prettyArgs indents the arguments; text that is not JSON is shown as it
// is, cleaned of control characters.
func prettyArgs(raw json.RawMessage) []string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return strings.Split(clean(string(raw)), "\n")
	}
	return strings.Split(clean(buf.String()), "\n")
}

// title says what is asked, by kind.
func (p *permDialog) title() string {
	r := p.req
	var t string
	switch r.Kind {
	case permissions.KindExec:
		t = fmt.Sprintf("Run %s?", r.Object)
	case permissions.KindSelect:
		t = fmt.Sprintf("Use %s for %s?", r.Object, r.Function)
	case permissions.KindData:
		t = fmt.Sprintf("Share data with %s?", r.Object)
	case permissions.KindCollab:
		t = fmt.Sprintf("%s asks %s for %s", r.Subject, r.Object, r.Function)
	case permissions.KindIrreversible:
		t = fmt.Sprintf("%s wants to %s — cannot be undone", r.Subject, r.Function)
	case permissions.KindNetwork:
		t = fmt.Sprintf("%s wants to send data to %s", r.Subject, r.Object)
	default:
		t = fmt.Sprintf("%s asks: %s %s", r.Subject, r.Kind, r.Object)
	}
	if r.IsIrreversible() && r.Kind != permissions.KindIrreversible {
		t += " — cannot be undone"
	}
	return clean(t)
}

// who names the kind and the apps involved: subject → object, function.
func (p *permDialog) who() string {
	r := p.req
	parts := []string{string(r.Kind)}
	if r.Object == "" || r.Object == r.Subject {
		parts = append(parts, r.Subject)
	} else {
		parts = append(parts, r.Subject+" → "+r.Object)
	}
	if r.Function != "" {
		parts = append(parts, r.Function)
	}
	return clean(strings.Join(parts, " · "))
}

// offered reports whether the request offers answer a.
func (p *permDialog) offered(a permissions.Answer) bool {
	for _, o := range p.req.Options() {
		if o == a {
			return true
		}
	}
	return false
}

// dangerous is a warning drawn in red rather than amber.
func dangerous(w string) bool {
	return strings.Contains(w, "NOT expected") || strings.Contains(w, "cannot be undone")
}

// dlgLayout is the dialog's lines for one size, and how many argument
// lines the window shows.
type dlgLayout struct {
	lines         []string
	window, total int
}

// view draws the dialog no wider than width (dialogWidth) and no taller
// than height.
func (p *permDialog) view(th theme, width, height int) string {
	l, framed := p.fit(th, width, height)
	if framed {
		return box(th, l.lines, dialogWidth(width), height)
	}
	dw := dialogWidth(width)
	for i, line := range l.lines {
		line = ansi.Truncate(line, dw, "")
		l.lines[i] = line + strings.Repeat(" ", max(dw-ansi.StringWidth(line), 0))
	}
	return strings.Join(l.lines[:min(len(l.lines), max(height, 1))], "\n")
}

// fit lays the dialog out for a width by height area: framed when the
// title, the warning and the answers fit inside the frame, else with
// short answers, else without the frame (a tiny terminal).
func (p *permDialog) fit(th theme, width, height int) (dlgLayout, bool) {
	dw := dialogWidth(width)
	iw, room := max(dw-4, 1), max(height-2, 1)
	if l := p.layout(th, iw, room, false); len(l.lines) <= room {
		return l, true
	}
	if l := p.layout(th, iw, room, true); len(l.lines) <= room {
		return l, true
	}
	return p.layout(th, max(dw, 1), max(height, 1), true), false
}

// scrollBy moves the arguments by delta lines (a dialog of width by
// height), keeping the window full.
func (p *permDialog) scrollBy(th theme, delta, width, height int) {
	l, _ := p.fit(th, width, height)
	p.scroll = max(min(p.scroll+delta, l.total-l.window), 0)
}

// page is how many lines pgup and pgdn move.
func (p *permDialog) page(th theme, width, height int) int {
	l, _ := p.fit(th, width, height)
	return max(l.window-1, 1)
}

// layout fits the dialog into room lines of iw cells. The title, the
// warning and the answers always show; the arguments come next (at least
// a few lines, with a "more" line when they do not fit), then the apps
// line, the detail and blank lines as room allows.
func (p *permDialog) layout(th theme, iw, room int, short bool) dlgLayout {
	wrap := func(s string, st lipgloss.Style, w int) []string {
		var out []string
		for _, l := range strings.Split(fitWidth(s, max(w, 1)), "\n") {
			out = append(out, st.Render(l))
		}
		return out
	}
	title := wrap(p.title(), th.boxTitle, iw)
	var warn []string
	if w := clean(p.req.Warning); w != "" {
		st := th.warn
		if dangerous(w) {
			st = th.err
		}
		for i, l := range strings.Split(fitWidth(w, max(iw-2, 1)), "\n") {
			lead := "  "
			if i == 0 {
				lead = "⚠ "
			}
			warn = append(warn, st.Render(lead+l))
		}
	}
	answers := p.answerLines(th, iw, short)
	var foot []string
	if !p.armed {
		foot = []string{th.dim.Render("keys in 0.6s…")}
	}
	if len(title)+len(warn)+len(answers)+len(foot) > room && len(title) > 1 {
		title = []string{th.boxTitle.Render(ansi.Truncate(p.title(), iw, "…"))}
	}
	free := room - len(title) - len(warn) - len(answers) - len(foot)

	// The arguments keep at least a few lines; the rest is optional.
	wrapped := argLines(p.args, iw)
	total := len(wrapped)
	least := min(total, 3)
	if total > least {
		least++ // the "more" line
	}
	take := func(block []string) []string {
		if len(block) > 0 && free-len(block) >= least {
			free -= len(block)
			return block
		}
		return nil
	}
	who := take(wrap(p.who(), th.dim, iw))
	detail := take(wrap(clean(p.req.Detail), lipgloss.NewStyle(), iw))
	gapArgs := take([]string{""})
	gapAnswers := take([]string{""})

	// Never cut silently: what does not fit is counted on a "more" line.
	var args []string
	window := 0
	if total > 0 && free > 0 {
		window = total
		if total > free {
			window = free - 1
		}
		start := max(min(p.scroll, total-window), 0)
		args = append(args, wrapped[start:start+window]...)
		if window < total {
			var more []string
			if start > 0 {
				more = append(more, fmt.Sprintf("↑ %d above", start))
			}
			if below := total - start - window; below > 0 {
				more = append(more, fmt.Sprintf("↓ more: %d lines", below))
			}
			more = append(more, "↑/↓ pgup/pgdn scroll")
			args = append(args, th.dim.Render(ansi.Truncate(strings.Join(more, " · "), iw, "…")))
		}
	}

	var lines []string
	for _, block := range [][]string{title, who, detail, gapArgs, args, warn, gapAnswers, answers, foot} {
		lines = append(lines, block...)
	}
	return dlgLayout{lines: lines, window: window, total: total}
}

// argLines wraps the pretty-printed arguments to w cells.
func argLines(pretty []string, w int) []string {
	var out []string
	for _, l := range pretty {
		out = append(out, strings.Split(fitWidth(l, max(w, 1)), "\n")...)
	}
	return out
}

// answerLines are the keys the dialog answers to, packed into lines (in
// few words when short); while typing a note, its prompt and input; while
// choosing a grant's limits, the caveat step.
func (p *permDialog) answerLines(th theme, iw int, short bool) []string {
	if p.caveat != nil {
		return p.caveat.lines(th, p.req, iw, short)
	}
	if p.noting {
		head := fmt.Sprintf("note to %s — enter denies with it · esc back", clean(p.req.Subject))
		return append(strings.Split(fitWidth(head, iw), "\n"), ansi.Truncate(p.note.View(), iw, ""))
	}
	type item struct{ k, text string }
	var items []item
	for _, a := range p.req.Options() {
		switch a {
		case permissions.AnswerOnce:
			items = append(items, item{"o", "allow once"})
		case permissions.AnswerSession:
			items = append(items, item{"s", "allow for this session"})
		case permissions.AnswerPermanent:
			items = append(items, item{"p", "allow permanently"})
		case permissions.AnswerDeny:
			items = append(items, item{"d", "deny"}, item{"n", "deny with a note"})
		}
	}
	items = append(items, item{"esc", "deny"})
	if short {
		words := map[string]string{"o": "once", "s": "session", "p": "always", "d": "deny", "n": "note", "esc": "deny"}
		for i := range items {
			items[i].text = words[items[i].k]
		}
	}
	keySt, textSt := th.key, lipgloss.NewStyle()
	if !p.armed {
		keySt, textSt = th.dim, th.dim
	}
	var lines []string
	cur, curW := "", 0
	for _, it := range items {
		w := ansi.StringWidth(it.k) + 1 + ansi.StringWidth(it.text)
		s := keySt.Render(it.k) + " " + textSt.Render(it.text)
		if w > iw {
			s = ansi.Truncate(s, iw, "…")
			w = iw
		}
		switch {
		case curW == 0:
			cur, curW = s, w
		case curW+3+w <= iw:
			cur += "   " + s
			curW += 3 + w
		default:
			lines = append(lines, cur)
			cur, curW = s, w
		}
	}
	return append(lines, cur)
}
