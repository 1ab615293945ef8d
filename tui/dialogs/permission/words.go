package permission

// What the permission dialog says: the values of a request's arguments
// (decisive ones first, with where each came from), its title, who asks
// whom for what, and the hub's judgement. dialog.go lays them out.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/request"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// dialogValues lists the values of r's arguments: decisive ones first
// (those the provenance marks key, in argument order), then the rest.
func dialogValues(r perm.Request) []dlgValue {
	raw := bytes.TrimSpace(r.Args)
	if len(raw) == 0 {
		return nil
	}
	prov := map[string]*perm.Provenance{}
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
func (p *Dialog) keySummary(width int) string {
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
		parts = append(parts, v.path+" "+shorten(v, max(each-ansi.StringWidth(v.path)-1, 10)))
	}
	return strings.Join(parts, ", ")
}

// titleHasPath reports whether the title names a decisive value that is
// a path (its lines then break after a folder: widget.WrapPath).
func (p *Dialog) titleHasPath() bool {
	for _, v := range p.values {
		if v.key && widget.LooksLikePath(v.path, v.text) {
			return true
		}
	}
	return false
}

// title says what is asked, by kind, naming the decisive values, in about
// width cells.
func (p *Dialog) title(width int) string {
	r := p.req
	var head string
	withKeys := false
	switch r.Kind {
	case perm.KindExec:
		if r.Subject == "hub" {
			head = fmt.Sprintf("Run %s?", r.Object)
		} else {
			head, withKeys = fmt.Sprintf("%s → %s (writes)", r.Subject, r.Function), true
		}
	case perm.KindSelect:
		head = fmt.Sprintf("Use %s for %s?", r.Object, r.Function)
		if len(r.Choices) > 0 {
			head = fmt.Sprintf("Which app for %s? %s", r.Function, strings.Join(r.Choices, " or "))
		}
	case perm.KindData:
		head = fmt.Sprintf("Share data with %s?", r.Object)
		if strings.HasPrefix(r.Detail, "Run ") {
			head = fmt.Sprintf("Run %s, with your data?", r.Object)
		}
	case perm.KindCollab:
		if fn, ok := strings.CutSuffix(r.Function, " (response)"); ok {
			head, withKeys = fmt.Sprintf("Pass the answer from %s (%s) back to %s?", r.Subject, fn, r.Object), true
		} else {
			head, withKeys = fmt.Sprintf("%s asks %s for %s", r.Subject, r.Object, r.Function), true
		}
	case perm.KindIrreversible:
		head, withKeys = fmt.Sprintf("%s → %s", r.Subject, r.Function), true
	case perm.KindNetwork:
		head = fmt.Sprintf("%s wants to reach %s", r.Subject, endpointWords(r.Object))
	case perm.KindChanges:
		head = changesTitle(r)
	default:
		head = fmt.Sprintf("%s asks: %s %s", r.Subject, r.Kind, r.Object)
	}
	tail := ""
	if r.IsIrreversible() && !strings.Contains(r.Warning, perm.UndoClause) {
		// Said once: by the hub's warning, under ⚠, when it says it.
		tail = " · " + perm.UndoClause
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
func (p *Dialog) who() string {
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
func (p *Dialog) offered(a perm.Answer) bool {
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

// quoted is the user's own sentence as the hub quotes it, after the
// reason a value has no single reading in it (hub/judge): " — you wrote
// “…”".
var quoted = regexp.MustCompile(` — you wrote “[^”]*”`)

// judgement is the hub's warning with what it repeats said once. The
// hub's judge says a value's source in its reason ("the value came in
// your words, but not as what you asked for: <why> — you wrote “…”") and
// again in its list of values the user did not type, and the dialog
// would say it a third time beside the value: the user's sentence,
// quoted three times, pushed a write's diff below the fold. Here each
// source's reason keeps its first place in the warning and leaves the
// later ones, each distinct quote of the user's sentence is said once,
// and the value's own line names its source without the reason the
// warning gives (sourceWords).
func judgement(r perm.Request) string {
	w := r.Warning
	for _, pv := range r.Provenance {
		if len(pv.Via) < 12 { // a reason, not a word that may be part of others
			continue
		}
		if i := strings.Index(w, pv.Via); i >= 0 {
			end := i + len(pv.Via)
			w = w[:end] + strings.ReplaceAll(w[end:], ": "+pv.Via, "")
		}
	}
	said := map[string]bool{}
	return quoted.ReplaceAllStringFunc(w, func(q string) string {
		if said[q] {
			return ""
		}
		said[q] = true
		return q
	})
}

// sourceWords say where a value came from, beside it: its provenance's
// words, without the reason (Via) where the judgement already gives it.
func (p *Dialog) sourceWords(pv perm.Provenance) string {
	if len(pv.Via) >= 12 && strings.Contains(p.judged, pv.Via) {
		pv.Via = ""
	}
	return pv.Words()
}

// shorten fits v's text into about n cells: a path by whole folders,
// keeping the ones that say where (widget.ShortPath), any other value as
// its head and tail.
func shorten(v dlgValue, n int) string {
	if widget.LooksLikePath(v.path, v.text) {
		return widget.ShortPath(v.text, n)
	}
	return headTail(v.text, n)
}

// valueLines draws the values in iw cells: "path  value  ← where from",
// a decisive value whose source is not the user highlighted; long values
// as head and tail unless expanded.
func (p *Dialog) valueLines(th style.Theme, iw int) []string {
	// Paths share one column; a path too long for it gets a line of its
	// own, its value below, never a cut name.
	limit := max(iw/3, 4)
	pathW := 0
	for _, v := range p.values {
		if w := ansi.StringWidth(v.path); w <= limit {
			pathW = max(pathW, w)
		}
	}
	if p.req.Changes != nil {
		// drawn once per width: a set may hold thousands of entries, and
		// every frame takes its window of them
		if p.setLines == nil || p.setWidth != iw {
			p.setLines, p.setWidth = changeSetLines(th, p.req.Changes, iw), iw
		}
		return p.setLines
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
	ch := p.req.Change
	for _, v := range p.values {
		if p.shownAsChange(v) {
			continue // shown as the change, below
		}
		src, risky := "", false
		if v.prov != nil {
			src = "← " + widget.Clean(p.sourceWords(*v.prov))
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
			text = shorten(v, max(budget-pathW-ansi.StringWidth(src)-4, 16))
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
		fit := widget.FitWidth
		if widget.LooksLikePath(v.path, v.text) {
			fit = widget.WrapPath // its lines break after a folder
		}
		wrapped := strings.Split(fit(text, vw), "\n")
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
		if v.prov != nil && v.prov.Shown != "" {
			// A value with characters outside plain ASCII, shown as a
			// browser shows a suspicious host: its punycode, its code
			// points, the typed value it imitates.
			for _, l := range markedLines(th.Warn, "⚠ shown as ", widget.Clean(v.prov.Shown), vw) {
				rendered = append(rendered, l)
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
	return append(out, changeLines(th, ch, iw)...)
}

// changeLines draw what a write would change (the hub's diff): a line
// that says it, then each line removed (−, red), added (+, green) or
// around them (dim), cut at the dialog's width, never wrapped; they
// scroll with the values.
func changeLines(th style.Theme, ch *perm.Change, iw int) []string {
	if ch == nil {
		return nil
	}
	out := []string{th.Dim.Render(widget.FitPathIn("change · "+widget.Clean(ch.Summary()), iw, widget.Clean(ch.Path)))}
	for _, l := range ch.Lines {
		text := widget.OneLine(l.Text)
		var st lipgloss.Style
		lead := "  "
		switch l.Op {
		case "-":
			lead, st = "− ", th.Err
		case "+":
			lead, st = "+ ", th.OK
		case "@":
			lead, st = "⋯ ", th.Dim
		default:
			st = th.Dim
		}
		out = append(out, st.Render(ansi.Truncate(lead+text, iw, "…")))
	}
	if ch.More > 0 {
		out = append(out, th.Dim.Render(fmt.Sprintf("  … %d more lines of the change", ch.More)))
	}
	return out
}

// shownAsChange reports whether v is the value a write's change shows
// (its new content, drawn as the diff in its place).
func (p *Dialog) shownAsChange(v dlgValue) bool {
	ch := p.req.Change
	return ch != nil && ch.Unshown == "" && ch.Field != "" && v.top == ch.Field
}

// permChangeContext is how many unchanged lines the hub's diff keeps
// before a change (permissions' changeContext).
const permChangeContext = 3

// changeLineCount is how many of the value lines are the change's (the
// last ones: changeLines), 0 without one.
func (p *Dialog) changeLineCount() int {
	ch := p.req.Change
	if ch == nil || p.req.Changes != nil {
		return 0
	}
	n := 1 + len(ch.Lines)
	if ch.More > 0 {
		n++
	}
	return n
}

// judgementLines draw the hub's judgement: calm ("✓ …") for a routine
// request, the warning style with ⚠ for any other.
func (p *Dialog) judgementLines(th style.Theme, iw int) []string {
	var folder []string
	if f := widget.Clean(p.req.FolderWords()); f != "" {
		// Always shown: a chat resumed in another folder acts on this one.
		folder = markedLines(th.Warn, "⚠ ", f, iw)
	}
	w := widget.Clean(p.judged)
	if w == "" {
		return folder
	}
	lead, st := "⚠ ", th.Warn
	switch {
	case p.routine():
		lead, st = "✓ ", th.Dim
	case request.Dangerous(p.req):
		st = th.Err
	}
	out := folder
	// An expected request with a concern (it cannot be undone, it carries
	// labels): what the plan expected is said calmly, the concerns after it
	// with ⚠, so the mark never sits on the plan's own reason.
	if !p.routine() && p.req.Expected && strings.HasPrefix(w, "expected by the plan") {
		calm, rest, ok := strings.Cut(w, "; ")
		if rs := widget.Clean(p.req.Reason); rs != "" && strings.HasPrefix(w, rs) {
			// The plan's reason whole, whatever its quotes hold.
			calm, rest = rs, strings.TrimPrefix(w[len(rs):], "; ")
			ok = rest != ""
		}
		if ok {
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
	lw := ansi.StringWidth(lead)
	for i, l := range strings.Split(widget.FitWidth(text, max(iw-lw, 1)), "\n") {
		if i == 0 {
			out = append(out, st.Render(lead+l))
		} else {
			out = append(out, st.Render(strings.Repeat(" ", lw)+l))
		}
	}
	return out
}
