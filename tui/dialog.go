package tui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"slices"
	"sort"
	"strconv"
	"strings"

	"charm.land/huh/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// permDialog is the permission dialog: one request, its decisive values
// first (in its title and at the top, each with where it came from), the
// other values (scrollable, long ones as head and tail), what the app says
// the call touches, the hub's judgement, and the answers it offers.
//
// It takes answers only once the user has stopped typing for the grace
// period (armed); until then keys go to the input box (permit.go). A
// routine request (expected, reversible, no concern) is drawn calm and
// answers with one key; any other is drawn as a warning, rings the bell,
// and an allow needs a choice and then enter.
type permDialog struct {
	id       uint64
	req      permissions.Request
	values   []dlgValue
	armed    bool
	gen      int                // the grace wait in force: a keystroke starts a new one
	chosen   permissions.Answer // a risky request's allow, waiting for enter
	expanded bool               // long values shown whole (x)
	noting   bool               // typing the note of a deny
	caveat   *caveatStep        // choosing the limits of a session or permanent grant
	noteForm *huh.Form          // while noting: the huh field of the note (form.go)
	// choiceForm is the huh select of a request with choices: every
	// candidate listed, the one an allow chooses under the cursor (pick).
	choiceForm *huh.Form
	scroll     int // the first value line shown
	pick       int // for a request with choices: the one an allow chooses
}

// dlgValue is one value of a request's arguments, as the dialog shows it.
type dlgValue struct {
	path string
	text string // one line, cleaned; JSON for what is not a string
	prov *permissions.Provenance
	key  bool
	top  string // the top-level argument it lies under
}

func newPermDialog(a pendingAsk, th style.Theme) *permDialog {
	return &permDialog{id: a.id, req: a.req, values: dialogValues(a.req), gen: 1}
}

// routine reports whether the request is drawn calm: the hub found it
// expected, reversible, with no concern.
func (p *permDialog) routine() bool { return p.req.Routine() }

// deliberate reports whether an allow needs a choice and then enter.
func (p *permDialog) deliberate() bool { return !p.routine() }

// dialogValues lists the values of r's arguments: decisive ones first
// (those the provenance marks key, in argument order), then the rest.
func dialogValues(r permissions.Request) []dlgValue {
	raw := bytes.TrimSpace(r.Args)
	if len(raw) == 0 {
		return nil
	}
	prov := map[string]*permissions.Provenance{}
	keyTop := map[string]bool{}
	for i := range r.Provenance {
		p := &r.Provenance[i]
		prov[p.Path] = p
		if p.Key {
			keyTop[topOf(p.Path)] = true
		}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return []dlgValue{{text: widget.Clean(string(raw))}}
	}
	var out []dlgValue
	var walk func(v any, path, top string)
	walk = func(v any, path, top string) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if len(keys) == 0 && path != "" {
				out = append(out, dlgValue{path: path, text: "{}", top: top})
			}
			for _, k := range keys {
				p, tp := k, top
				if path != "" {
					p = path + "." + k
				} else {
					tp = k
				}
				walk(t[k], p, tp)
			}
		case []any:
			if len(t) == 0 {
				out = append(out, dlgValue{path: path, text: "[]", top: top})
			}
			for i, x := range t {
				walk(x, fmt.Sprintf("%s[%d]", path, i), top)
			}
		default:
			text := ""
			if s, ok := t.(string); ok {
				text = s
			} else {
				b, _ := json.Marshal(t)
				text = string(b)
			}
			out = append(out, dlgValue{path: path, text: widget.OneLine(text), prov: prov[path], key: keyTop[top], top: top})
		}
	}
	walk(v, "", "")
	slices.SortStableFunc(out, func(a, b dlgValue) int {
		switch {
		case a.key && !b.key:
			return -1
		case b.key && !a.key:
			return 1
		}
		return 0
	})
	return out
}

func topOf(path string) string {
	if i := strings.IndexAny(path, ".["); i >= 0 {
		return path[:i]
	}
	return path
}

// keySummary names the decisive values for the title, in about width
// cells: "to attacker@evil.example", long ones as head…tail.
func (p *permDialog) keySummary(width int) string {
	var keys []dlgValue
	for _, v := range p.values {
		if v.key && len(keys) < 3 {
			keys = append(keys, v)
		}
	}
	if len(keys) == 0 || width < 12 {
		return ""
	}
	each := max(width/len(keys)-2, 12)
	var parts []string
	for _, v := range keys {
		parts = append(parts, v.path+" "+headTail(v.text, max(each-ansi.StringWidth(v.path)-1, 10)))
	}
	return strings.Join(parts, ", ")
}

// title says what is asked, by kind, naming the decisive values, in about
// width cells.
func (p *permDialog) title(width int) string {
	r := p.req
	var head string
	withKeys := false
	switch r.Kind {
	case permissions.KindExec:
		if r.Subject == "hub" {
			head = fmt.Sprintf("Run %s?", r.Object)
		} else {
			head, withKeys = fmt.Sprintf("%s → %s (writes)", r.Subject, r.Function), true
		}
	case permissions.KindSelect:
		head = fmt.Sprintf("Use %s for %s?", r.Object, r.Function)
		if len(r.Choices) > 0 {
			head = fmt.Sprintf("Which app for %s? %s", r.Function, strings.Join(r.Choices, " or "))
		}
	case permissions.KindData:
		head = fmt.Sprintf("Share data with %s?", r.Object)
		if strings.HasPrefix(r.Detail, "Run ") {
			head = fmt.Sprintf("Run %s, with your data?", r.Object)
		}
	case permissions.KindCollab:
		if fn, ok := strings.CutSuffix(r.Function, " (response)"); ok {
			head, withKeys = fmt.Sprintf("Pass the answer from %s (%s) back to %s?", r.Subject, fn, r.Object), true
		} else {
			head, withKeys = fmt.Sprintf("%s asks %s for %s", r.Subject, r.Object, r.Function), true
		}
	case permissions.KindIrreversible:
		head, withKeys = fmt.Sprintf("%s → %s", r.Subject, r.Function), true
	case permissions.KindNetwork:
		head = fmt.Sprintf("%s wants to reach %s", r.Subject, endpointWords(r.Object))
	default:
		head = fmt.Sprintf("%s asks: %s %s", r.Subject, r.Kind, r.Object)
	}
	tail := ""
	if r.IsIrreversible() {
		tail = " · cannot be undone"
	}
	if withKeys {
		room := width*2 - ansi.StringWidth(head) - ansi.StringWidth(tail) - 3 // the title may take two lines
		if keys := p.keySummary(room); keys != "" {
			head += " · " + keys
		}
	}
	return widget.Clean(head + tail)
}

// endpointWords says "host:port" as "host, port N".
func endpointWords(ep string) string {
	if host, port, err := net.SplitHostPort(ep); err == nil {
		return host + ", port " + port
	}
	return ep
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
	return widget.Clean(strings.Join(parts, " · "))
}

// offered reports whether the request offers answer a.
func (p *permDialog) offered(a permissions.Answer) bool {
	return slices.Contains(p.req.Options(), a)
}

// headTail shortens s to about n cells: its head and tail with a count of
// what is hidden between.
func headTail(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	mark := fmt.Sprintf(" …%d hidden… ", len(r)-n+12)
	keep := max(n-len([]rune(mark)), 8)
	head := keep * 2 / 3
	tail := keep - head
	return string(r[:head]) + mark + string(r[len(r)-tail:])
}

// dlgLayout is the dialog's lines for one size, and how many value lines
// the window shows.
type dlgLayout struct {
	lines         []string
	window, total int
}

// view draws the dialog no wider than width (dialogWidth) and no taller
// than height.
func (p *permDialog) view(th style.Theme, width, height int) string {
	l, framed := p.fit(th, width, height)
	if framed {
		bx := th.Box
		if !p.routine() {
			bx = bx.BorderForeground(th.WarnColor(dangerous(p.req)))
		}
		return boxWith(bx, l.lines, dialogWidth(width), height)
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
func (p *permDialog) fit(th style.Theme, width, height int) (dlgLayout, bool) {
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

// scrollBy moves the values by delta lines (a dialog of width by height),
// keeping the window full.
func (p *permDialog) scrollBy(th style.Theme, delta, width, height int) {
	l, _ := p.fit(th, width, height)
	p.scroll = max(min(p.scroll+delta, l.total-l.window), 0)
}

// page is how many lines pgup and pgdn move.
func (p *permDialog) page(th style.Theme, width, height int) int {
	l, _ := p.fit(th, width, height)
	return max(l.window-1, 1)
}

// valueLines draws the values in iw cells: "path  value  ← where from",
// a decisive value whose source is not the user highlighted; long values
// as head and tail unless expanded.
func (p *permDialog) valueLines(th style.Theme, iw int) []string {
	// Paths share one column; a path too long for it gets a line of its
	// own, its value below, never a cut name.
	limit := max(iw/3, 4)
	pathW := 0
	for _, v := range p.values {
		if w := ansi.StringWidth(v.path); w <= limit {
			pathW = max(pathW, w)
		}
	}
	var out []string
	if n := len(p.req.Choices); n > 0 {
		// Every candidate at once, in the huh select; the one an allow
		// chooses is under its cursor.
		if p.choiceForm != nil {
			out = append(out, widget.FitLines(strings.Split(strings.TrimRight(p.choiceForm.View(), "\n"), "\n"), iw, n+1)...)
		} else {
			for i, c := range p.req.Choices {
				mark := "  "
				if i == p.pick {
					mark = "▸ "
				}
				out = append(out, widget.FitWidth(mark+strconv.Itoa(i+1)+". "+widget.Clean(c), iw))
			}
		}
		out = append(out, th.Dim.Render(fmt.Sprintf("  ←/→, tab or 1–%d picks the app, then allow", n)))
	}
	for _, v := range p.values {
		src, risky := "", false
		if v.prov != nil {
			src = "← " + provenanceWords(*v.prov)
			risky = !v.prov.Trusted()
		}
		name := v.path
		own := ansi.StringWidth(name) > pathW
		if own {
			out = append(out, th.Dim.Render(ansi.Truncate(map[bool]string{true: "▸ ", false: "  "}[v.key]+name, iw, "…")))
			name = ""
		}
		name += strings.Repeat(" ", max(pathW-ansi.StringWidth(name), 0))
		budget := 3 * iw
		if !v.key {
			budget = 2 * iw
		}
		text := v.text
		if !p.expanded {
			text = headTail(text, max(budget-pathW-ansi.StringWidth(src)-4, 16))
		}
		valSt, srcSt := lipgloss.NewStyle(), th.Dim
		switch {
		case v.key && risky:
			valSt, srcSt = th.Err, th.Err
		case v.key:
			valSt = lipgloss.NewStyle().Bold(true)
		case risky:
			srcSt = th.Warn
		}
		lead := "  "
		if v.key {
			lead = "▸ "
		}
		vw := max(iw-pathW-3, 8)
		wrapped := strings.Split(widget.FitWidth(text, vw), "\n")
		rendered := make([]string, len(wrapped))
		for i, w := range wrapped {
			rendered[i] = valSt.Render(w)
		}
		if src != "" {
			last := len(wrapped) - 1
			if ansi.StringWidth(wrapped[last])+2+ansi.StringWidth(src) <= vw {
				rendered[last] += "  " + srcSt.Render(src)
			} else {
				// Where a value came from is what the dialog is for: said
				// in full, up to three lines.
				lines := strings.Split(widget.FitWidth(src, vw), "\n")
				if len(lines) > 3 {
					lines = append(lines[:2], ansi.Truncate(strings.Join(lines[2:], " "), vw, "…"))
				}
				for i, l := range lines {
					if i > 0 {
						l = "  " + l
					}
					rendered = append(rendered, srcSt.Render(ansi.Truncate(l, vw, "…")))
				}
			}
		}
		for i, w := range rendered {
			if i == 0 && !own {
				out = append(out, th.Dim.Render(lead+name)+" "+w)
			} else {
				out = append(out, strings.Repeat(" ", pathW+3)+w)
			}
		}
	}
	return out
}

// provenanceWords says where a value came from, in a few words.
func provenanceWords(p permissions.Provenance) string { return widget.Clean(p.Words()) }

// judgementLines draw the hub's judgement: calm ("✓ …") for a routine
// request, the warning style with ⚠ for any other.
func (p *permDialog) judgementLines(th style.Theme, iw int) []string {
	w := widget.Clean(p.req.Warning)
	if w == "" {
		return nil
	}
	lead, st := "⚠ ", th.Warn
	switch {
	case p.routine():
		lead, st = "✓ ", th.Dim
	case dangerous(p.req):
		st = th.Err
	}
	var out []string
	// An expected request with a concern (it cannot be undone, it carries
	// labels): what the plan expected is said calmly, the concerns after it
	// with ⚠, so the mark never sits on the plan's own reason.
	if !p.routine() && p.req.Expected && strings.HasPrefix(w, "expected by the plan") {
		if calm, rest, ok := strings.Cut(w, "; "); ok {
			out = append(out, markedLines(th.Dim, "✓ ", calm, iw)...)
			w = rest
		}
	}
	return append(out, markedLines(st, lead, w, iw)...)
}

// markedLines fit text into iw cells, the first line led by lead and the
// rest indented under it, all in st.
func markedLines(st lipgloss.Style, lead, text string, iw int) []string {
	var out []string
	for i, l := range strings.Split(widget.FitWidth(text, max(iw-2, 1)), "\n") {
		if i == 0 {
			out = append(out, st.Render(lead+l))
		} else {
			out = append(out, st.Render("  "+l))
		}
	}
	return out
}

// dangerous is a request drawn in red rather than amber: not expected, or
// not to be undone.
func dangerous(r permissions.Request) bool {
	return !r.Expected || r.IsIrreversible() || strings.Contains(r.Warning, "NOT expected")
}

// layout fits the dialog into room lines of iw cells. The title, the
// judgement and the answers always show; the values come next (at least a
// few lines, with a "more" line when they do not fit), then what the app
// says, the apps line and the detail as room allows.
func (p *permDialog) layout(th style.Theme, iw, room int, short bool) dlgLayout {
	wrap := func(s string, st lipgloss.Style, w int) []string {
		var out []string
		for _, l := range strings.Split(widget.FitWidth(s, max(w, 1)), "\n") {
			out = append(out, st.Render(l))
		}
		return out
	}
	titleSt := th.BoxTitle
	if !p.routine() {
		titleSt = titleSt.Foreground(th.WarnColor(dangerous(p.req)))
	}
	title := wrap(p.title(iw), titleSt, iw)
	warn := p.judgementLines(th, iw)
	answers := p.answerLines(th, iw, short)
	foot := []string{p.footer(th, iw)}
	if len(title)+len(warn)+len(answers)+len(foot) > room && len(title) > 1 {
		title = []string{titleSt.Render(ansi.Truncate(p.title(iw), iw, "…"))}
	}
	free := room - len(title) - len(warn) - len(answers) - len(foot)

	// The values keep at least a few lines; the rest is optional.
	vals := p.valueLines(th, iw)
	total := len(vals)
	least := min(total, 4)
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
		says = take(wrap(p.req.Subject+" says: "+e, th.Thinking, iw))
		if says == nil && p.req.Kind == permissions.KindCollab {
			says = take(wrap(p.req.Object+" says: "+e, th.Thinking, iw))
		}
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
			more = append(more, "↑/↓ pgup/pgdn scroll")
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
func (p *permDialog) footer(th style.Theme, iw int) string {
	var s string
	switch {
	case p.noting || p.caveat != nil:
		return ""
	case !p.armed:
		s = fmt.Sprintf("typing goes to your message · answers once you stop typing for %.1fs", permGrace.Seconds())
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
		if ansi.StringWidth(v.text) > iw {
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
func (p *permDialog) answerLines(th style.Theme, iw int, short bool) []string {
	if p.caveat != nil {
		return p.caveat.lines(th, p.req, iw, short)
	}
	if p.noting && p.noteForm != nil {
		return widget.FitLines(strings.Split(p.noteForm.View(), "\n"), iw, 4)
	}
	type item struct {
		k, text string
		a       permissions.Answer
	}
	var items []item
	for _, a := range p.req.Options() {
		switch a {
		case permissions.AnswerOnce:
			items = append(items, item{"o", p.req.Label(a), a})
		case permissions.AnswerSession:
			items = append(items, item{"s", p.req.Label(a), a})
		case permissions.AnswerPermanent:
			items = append(items, item{"p", p.req.Label(a), a})
		case permissions.AnswerDeny:
			items = append(items, item{"d", p.req.Label(a), a}, item{"n", "deny with a note", a})
		}
	}
	items = append(items, item{"esc", "deny", permissions.AnswerDeny})
	if short {
		words := map[string]string{"o": "once", "s": "session", "p": "always", "d": "deny", "n": "note", "esc": "deny"}
		for i := range items {
			items[i].text = words[items[i].k]
		}
	}
	keySt, textSt := th.Key, lipgloss.NewStyle()
	if !p.armed {
		keySt, textSt = th.Dim, th.Dim
	}
	var lines []string
	cur, curW := "", 0
	for _, it := range items {
		w := ansi.StringWidth(it.k) + 1 + ansi.StringWidth(it.text)
		s := keySt.Render(it.k) + " " + textSt.Render(it.text)
		if p.chosen != "" && it.a == p.chosen && it.k != "esc" && it.k != "n" {
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
