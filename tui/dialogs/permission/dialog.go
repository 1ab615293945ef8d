package permission

import (
	"fmt"
	"strings"

	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/request"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Dialog is the permission dialog: one request, its decisive values
// first (in its title and at the top, each with where it came from), the
// other values (scrollable, long ones as head and tail), what the app says
// the call touches, the hub's judgement, and the answers it offers.
//
// It takes answers only once the root has armed it (SetArmed: the user
// has stopped typing for widget.ArmDelay); until then keys go to the
// input box (keys.go). A
// routine request (expected, reversible, no concern) is drawn calm and
// answers with one key; any other is drawn as a warning, rings the bell,
// and an allow needs a choice and then enter.
type Dialog struct {
	c        Config
	id       uint64
	req      perm.Request
	values   []dlgValue
	judged   string      // the hub's warning, what it repeats said once (judgement)
	armed    bool        // takes answers (the root's gate decides, SetArmed)
	chosen   perm.Answer // a risky request's allow, waiting for enter
	picked   []int       // with chosen: the change set's entries picked (a), not nil
	expanded bool        // long values shown whole (x)
	noting   bool        // typing the note of a deny
	caveat   *caveatStep // choosing the limits of a session or permanent grant
	noteForm *huh.Form   // while noting: the huh field of the note
	note     *string     // what it holds
	// choiceForm is the huh select of a request with choices: every
	// candidate listed, the one an allow chooses under the cursor (pick).
	choiceForm *huh.Form
	choice     *string // the candidate it holds
	scroll     int     // the first value line shown
	pick       int     // for a request with choices: the one an allow chooses
	// picksForm is a change set's multi-select of the entries to accept
	// (a), picks what it holds.
	picksForm *huh.Form
	picks     *[]int
	// setLines are a change set's lines as drawn for setWidth cells.
	setLines []string
	setWidth int
}

// dlgValue is one value of a request's arguments, as the dialog shows it.
type dlgValue struct {
	path string
	text string // one line, cleaned; JSON for what is not a string
	prov *perm.Provenance
	key  bool
	top  string // the top-level argument it lies under
}

// routine reports whether the request is drawn calm: the hub found it
// expected, reversible, with no concern.
func (p *Dialog) routine() bool { return p.req.Routine() }

// deliberate reports whether an allow needs a choice and then enter.
func (p *Dialog) deliberate() bool { return !p.routine() }

// dlgLayout is the dialog's lines for one size, and how many value lines
// the window shows.
type dlgLayout struct {
	lines         []string
	window, total int
}

// View draws the dialog no wider than width (widget.DialogWidth) and no
// taller than height.
func (p *Dialog) View(th style.Theme, width, height int) string {
	l, framed := p.fit(th, width, height)
	if framed {
		bx := th.Box
		if !p.routine() {
			bx = bx.BorderForeground(th.WarnColor(request.Dangerous(p.req)))
		}
		return widget.BoxWith(bx, l.lines, widget.DialogWidth(width), height)
	}
	dw := widget.DialogWidth(width)
	for i, line := range l.lines {
		line = ansi.Truncate(line, dw, "")
		l.lines[i] = line + strings.Repeat(" ", max(dw-ansi.StringWidth(line), 0))
	}
	return strings.Join(l.lines[:min(len(l.lines), max(height, 1))], "\n")
}

// fit lays the dialog out for a width by height area: framed when the
// title, the warning and the answers fit inside the frame, else with
// short answers, else without the frame (a tiny terminal).
func (p *Dialog) fit(th style.Theme, width, height int) (dlgLayout, bool) {
	dw := widget.DialogWidth(width)
	iw, room := max(dw-4, 1), max(height-2, 1)
	if l := p.layout(th, iw, room, false); len(l.lines) <= room {
		return l, true
	}
	if l := p.layout(th, iw, room, true); len(l.lines) <= room {
		return l, true
	}
	return p.layout(th, max(dw, 1), max(height, 1), true), false
}

// layout fits the dialog into room lines of iw cells. The title, the
// judgement and the answers always show; the values come next (at least a
// few lines, with a "more" line when they do not fit), then what the app
// says, the apps line and the detail as room allows.
func (p *Dialog) layout(th style.Theme, iw, room int, short bool) dlgLayout {
	wrapWith := func(fit func(string, int) string, s string, st lipgloss.Style, w int) []string {
		var out []string
		for _, l := range strings.Split(fit(s, max(w, 1)), "\n") {
			out = append(out, st.Render(l))
		}
		return out
	}
	wrap := func(s string, st lipgloss.Style, w int) []string { return wrapWith(widget.FitWidth, s, st, w) }
	titleSt := th.BoxTitle
	if !p.routine() {
		titleSt = titleSt.Foreground(th.WarnColor(request.Dangerous(p.req)))
	}
	title := wrap(p.title(iw), titleSt, iw)
	if p.titleHasPath() {
		title = wrapWith(widget.WrapPath, p.title(iw), titleSt, iw)
	}
	warn := p.judgementLines(th, iw)
	answers := p.answerLines(th, iw, short)
	foot := []string{p.footer(th, iw)}
	if len(title)+len(warn)+len(answers)+len(foot) > room && len(title) > 1 {
		title = []string{titleSt.Render(ansi.Truncate(p.title(iw), iw, "…"))}
	}
	free := room - len(title) - len(warn) - len(answers) - len(foot)

	// The values keep at least a few lines; the rest is optional. A
	// write's change keeps room for its first lines too — its summary, the
	// hunk's head and the lines around the first removed and added ones —
	// so the diff is on the first screen, above what the app says.
	vals := p.valueLines(th, iw)
	total := len(vals)
	least := min(total, 4)
	if n := p.changeLineCount(); n > 0 {
		least = min(total, max(least, total-n+1+min(n-1, 1+permChangeContext+2)))
	}
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
	var says []string
	if e := widget.Clean(p.req.Explain); e != "" {
		// The words of the app that said them, never another's.
		by := p.req.ExplainedBy
		if by == "" {
			by = "the app"
		}
		says = take(wrap(widget.OneLine(by)+" says: "+e, th.Thinking, iw))
	}
	detail := take(wrap(widget.Clean(p.req.Detail), lipgloss.NewStyle(), iw))
	who := take(wrap(p.who(), th.Dim, iw))
	gapAnswers := take([]string{""})

	// Never cut silently: what does not fit is counted on a "more" line.
	var shown []string
	window := 0
	if total > 0 && free > 0 {
		window = total
		if total > free {
			window = free - 1
		}
		start := max(min(p.scroll, total-window), 0)
		shown = append(shown, vals[start:start+window]...)
		if window < total {
			var more []string
			if start > 0 {
				more = append(more, fmt.Sprintf("↑ %d above", start))
			}
			if below := total - start - window; below > 0 {
				more = append(more, fmt.Sprintf("↓ %d more", below))
			}
			if p.picksForm != nil {
				more = append(more, "pgup/pgdn scroll") // ↑/↓ move in the picker
			} else {
				more = append(more, "↑/↓ pgup/pgdn scroll")
			}
			shown = append(shown, th.Dim.Render(ansi.Truncate(strings.Join(more, " · "), iw, "…")))
		}
	}

	var lines []string
	for _, block := range [][]string{title, who, detail, shown, says, warn, gapAnswers, answers, foot} {
		lines = append(lines, block...)
	}
	return dlgLayout{lines: lines, window: window, total: total}
}

// footer says whether the dialog takes answers yet.
func (p *Dialog) footer(th style.Theme, iw int) string {
	var s string
	switch {
	case p.picksForm != nil:
		s = "space toggles · enter chooses · pgup/pgdn scroll · esc back"
		return th.Key.Render(ansi.Truncate(s, iw, "…"))
	case p.noting || p.caveat != nil:
		return ""
	case !p.armed:
		s = fmt.Sprintf("typing goes to your message · answers once you stop typing for %.1fs", widget.ArmDelay.Seconds())
		return th.Dim.Render(ansi.Truncate(s, iw, "…"))
	case p.chosen != "":
		s = "enter confirms · any other key takes the choice back"
	case p.deliberate():
		s = "answering now: choose, then enter"
	default:
		s = "answering now"
	}
	hasLong := false
	for _, v := range p.values {
		if ansi.StringWidth(v.text) > iw && !p.shownAsChange(v) {
			hasLong = true
		}
	}
	if hasLong {
		if p.expanded {
			s += " · x shortens long values"
		} else {
			s += " · x shows long values whole"
		}
	}
	return th.Key.Render(ansi.Truncate(s, iw, "…"))
}

// answerLines are the keys the dialog answers to, packed into lines (in
// few words when short); while typing a note, its prompt and input; while
// choosing a grant's limits, the caveat step.
func (p *Dialog) answerLines(th style.Theme, iw int, short bool) []string {
	if p.caveat != nil {
		return p.caveat.lines(th, p.req, iw, short)
	}
	if p.picksForm != nil {
		return p.picksLines(iw)
	}
	if p.noting && p.noteForm != nil {
		return widget.FitLines(strings.Split(p.noteForm.View(), "\n"), iw, 4)
	}
	type item struct {
		k, text string
		a       perm.Answer
	}
	var items []item
	for _, a := range p.req.Options() {
		switch a {
		case perm.AnswerOnce:
			items = append(items, item{"o", p.req.Label(a), a})
		case perm.AnswerSession:
			items = append(items, item{"s", p.req.Label(a), a})
		case perm.AnswerPermanent:
			items = append(items, item{"p", p.req.Label(a), a})
		case perm.AnswerDeny:
			if p.req.Kind == perm.KindChanges {
				items = append(items, item{"a", "accept some…", perm.AnswerOnce}, item{"d", p.req.Label(a), a})
				continue
			}
			items = append(items, item{"d", p.req.Label(a), a}, item{"n", "deny with a note", a})
		}
	}
	if p.req.Kind == perm.KindChanges {
		items = append(items, item{"l", "decide later", ""}, item{"esc", "later", ""})
	} else {
		items = append(items, item{"esc", "deny", perm.AnswerDeny})
	}
	if short {
		words := map[string]string{"o": "once", "s": "session", "p": "always", "d": "deny", "n": "note", "esc": "deny", "a": "some", "l": "later"}
		if p.req.Kind == perm.KindChanges {
			words["o"], words["d"], words["esc"] = "all", "discard", "later"
		}
		for i := range items {
			items[i].text = words[items[i].k]
		}
	}
	keySt, textSt := th.Key, lipgloss.NewStyle()
	if !p.armed {
		keySt, textSt = th.Dim, th.Dim
	}
	var lines []string
	if p.picked != nil {
		lines = append(lines, p.pickedLines(th, iw)...)
	}
	cur, curW := "", 0
	for _, it := range items {
		w := ansi.StringWidth(it.k) + 1 + ansi.StringWidth(it.text)
		s := keySt.Render(it.k) + " " + textSt.Render(it.text)
		if p.chosen != "" && it.a == p.chosen && it.k != "esc" && it.k != "n" && (it.k == "a") == (p.picked != nil) {
			s = th.Selected.Render("▸ " + it.k + " " + it.text)
			w += 2
		}
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
