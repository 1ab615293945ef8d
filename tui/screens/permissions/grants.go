package permissions

import (
	"fmt"
	"slices"
	"strings"
	"time"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The grants tab: every grant the broker holds (session, permanent and
// config ones, and stored ones whose signature failed, in red), then the
// config rules; the filter matches any of their words.

// grantItem is a row of the grants tab: a grant or a rule.
type grantItem struct {
	g *perm.Grant
	r *RuleView
}

var grantCols = []widget.Column{
	{Title: "KIND", Min: 6, Max: 12},
	{Title: "SUBJECT → OBJECT", Min: 15, Max: 32},
	{Title: "FUNCTION", Min: 12, Max: 24, Drop: 2},
	{Title: "SCOPE", Min: 30},
	{Title: "USES", Min: 4, Max: 4, Drop: 4},
	{Title: "LAST USED", Min: 9, Max: 12, Drop: 5},
	{Title: "CREATED", Min: 9, Max: 12, Drop: 6},
	{Title: "ORIGIN", Min: 6, Max: 14, Drop: 3},
}

// grantItems are the rows the filter lets through: grants, then rules.
func (g *Screen) grantItems(now time.Time) []grantItem {
	f := g.filter.Value()
	var out []grantItem
	for i := range g.grants {
		gr := &g.grants[i]
		if widget.MatchAll(grantHay(*gr, now), f) {
			out = append(out, grantItem{g: gr})
		}
	}
	for i := range g.rules {
		r := &g.rules[i]
		if widget.MatchAll(strings.ToLower(strings.Join([]string{"rule", r.Effect, r.Kind, r.Subject, r.Object, r.Function, r.Where, "config"}, " ")), f) {
			out = append(out, grantItem{r: r})
		}
	}
	return out
}

func grantHay(gr perm.Grant, now time.Time) string {
	words := []string{gr.ID, string(gr.Kind), gr.Subject, gr.Object, gr.Function, scopeText(gr, now), gr.Origin, gr.Note}
	if gr.Invalid {
		words = append(words, "invalid signature")
	}
	return strings.ToLower(strings.Join(words, " "))
}

// scopeText is a grant's scope in short: session or permanent, deny, and
// its caveats.
func scopeText(gr perm.Grant, now time.Time) string {
	if gr.Invalid {
		return "INVALID signature: ignored"
	}
	parts := []string{"session"}
	if gr.Permanent {
		parts[0] = "permanent"
	}
	if gr.Deny {
		parts = append([]string{"deny"}, parts...)
	}
	return strings.Join(append(parts, caveatWords(gr.Caveats, now, false)...), " · ")
}

// caveatWords says what limits a grant: "until 15:04:05", "5 uses left",
// "to=bob@example.com", "path under docs/"; long adds how long is left.
func caveatWords(c perm.Caveats, now time.Time, long bool) []string {
	var out []string
	if !c.Expires.IsZero() {
		switch left := c.Expires.Sub(now); {
		case left <= 0:
			out = append(out, "expired "+widget.ShortStamp(c.Expires, now))
		case long:
			out = append(out, fmt.Sprintf("until %s (%s left)", widget.LongStamp(c.Expires, now), widget.Span(left)))
		default:
			out = append(out, "until "+widget.ShortStamp(c.Expires, now))
		}
	}
	if c.UsesLeft > 0 {
		out = append(out, widget.Plural(c.UsesLeft, "use")+" left")
	}
	names := make([]string, 0, len(c.Args))
	for k := range c.Args {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		if v := c.Args[k]; strings.HasSuffix(v, "/") {
			out = append(out, k+" under "+v)
		} else {
			out = append(out, k+"="+v)
		}
	}
	return out
}

func arrow(from, to string) string {
	if to == "" || to == from {
		return from
	}
	return from + " → " + to
}

func orAny(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

func (g *Screen) grantsBody(th style.Theme, w int, lay widget.Layout, now time.Time, items []grantItem) (head, list, detail []string, label string) {
	cells := make([][]widget.Cell, len(items))
	for i, it := range items {
		if it.g != nil {
			cells[i] = grantCells(th, *it.g, now)
		} else {
			cells[i] = ruleCells(th, *it.r)
		}
	}
	widths := widget.FitColumns(grantCols, w-2, cells)
	head = []string{widget.TableHead(th, grantCols, widths, w)}
	cur := g.cursor[Grants]
	var lines []string
	at := 0 // the line of the cursor's row
	ngrants := 0
	for _, it := range items {
		if it.g != nil {
			ngrants++
		}
	}
	for i, it := range items {
		switch {
		case i == 0 && it.g != nil:
			lines = append(lines, th.Dim.Render(fmt.Sprintf("  %s", widget.Plural(ngrants, "grant"))))
		case it.r != nil && (i == 0 || items[i-1].r == nil):
			lines = append(lines, th.Dim.Render(fmt.Sprintf("  %s of your config", widget.Plural(len(items)-ngrants, "rule"))))
		}
		if i == cur {
			at = len(lines)
		}
		lines = append(lines, widget.TableRow(th, cells[i], widths, w, i == cur))
	}
	if ngrants == 0 {
		empty := "  no grants — answer a dialog with s or p to make one"
		if g.filter.Value() != "" {
			empty = "  no grant matches the filter"
		}
		lines = append([]string{th.Dim.Render(empty)}, lines...)
		at++
	}
	first := widget.Window(len(lines), lay.List, at)
	list = lines[first:]
	label = "detail"
	if cur < len(items) {
		var st []widget.Styled
		if it := items[cur]; it.g != nil {
			st, label = grantDetail(th, *it.g, now), "grant "+it.g.ID
		} else {
			st, label = ruleDetail(th, *it.r), "rule"
		}
		detail = widget.WrapLines(st, w-1)
	}
	return head, list, detail, label
}

func grantCells(th style.Theme, gr perm.Grant, now time.Time) []widget.Cell {
	scope := widget.Cell{Text: scopeText(gr, now), St: th.OK}
	if gr.Deny {
		scope.St = th.Warn
	}
	cells := []widget.Cell{
		widget.PlainCell(string(gr.Kind)), widget.PlainCell(arrow(gr.Subject, gr.Object)), widget.PlainCell(gr.Function), scope,
		widget.PlainCell(fmt.Sprint(gr.Uses)), {Text: widget.Stamp(gr.LastUsed, now), St: th.Dim}, {Text: widget.Stamp(gr.Created, now), St: th.Dim},
		{Text: gr.Origin, St: th.Dim},
	}
	if gr.Invalid {
		for i := range cells {
			cells[i].St = th.Err
		}
	}
	return cells
}

func ruleCells(th style.Theme, r RuleView) []widget.Cell {
	st := th.OK
	switch r.Effect {
	case "deny":
		st = th.Err
	case "ask":
		st = th.Warn
	}
	return []widget.Cell{
		widget.PlainCell(orAny(r.Kind)), widget.PlainCell(orAny(r.Subject) + " → " + orAny(r.Object)), widget.PlainCell(orAny(r.Function)),
		{Text: "rule: " + r.Effect, St: st}, {}, {}, {}, {Text: "config", St: th.Dim},
	}
}

func grantDetail(th style.Theme, gr perm.Grant, now time.Time) []widget.Styled {
	verb := "allow"
	if gr.Deny {
		verb = "deny"
	}
	what := verb + " " + string(gr.Kind) + " " + arrow(gr.Subject, gr.Object)
	if gr.Function != "" {
		what += " (" + gr.Function + ")"
	}
	out := []widget.Styled{{Text: widget.Clean(what), St: th.BoxTitle}}
	if gr.Invalid {
		out = append(out, widget.Styled{Text: "✗ INVALID: its signature does not verify (changed outside bulkhead?) — it is ignored; r removes it", St: th.Err})
	}
	scope := "for this session (ends when bulkhead quits)"
	if gr.Permanent {
		scope = "permanent (stored, signed)"
	}
	if cv := caveatWords(gr.Caveats, now, true); len(cv) > 0 {
		scope += " · " + strings.Join(cv, " · ")
	} else {
		scope += " · no limits"
	}
	out = append(out,
		widget.Styled{Text: "scope:   " + widget.Clean(scope)},
		widget.Styled{Text: fmt.Sprintf("created: %s · last used: %s · used %s", widget.LongStamp(gr.Created, now), widget.LongStamp(gr.LastUsed, now), widget.Plural(gr.Uses, "time"))},
		widget.Styled{Text: "origin:  " + widget.Clean(originWords(gr.Origin))},
		widget.Styled{Text: "id:      " + widget.Clean(gr.ID) + "  (bulkhead permissions revoke " + widget.Clean(gr.ID) + ")", St: th.Dim},
	)
	if gr.Note != "" {
		out = append(out, widget.Styled{Text: "note:    " + widget.Clean(gr.Note)})
	}
	if app := appOf(gr); app != "" {
		out = append(out, widget.Styled{Text: "R revokes every grant involving " + widget.Clean(app), St: th.Dim})
	}
	return out
}

// originWords explains where a grant came from.
func originWords(o string) string {
	switch {
	case o == "dialog":
		return "dialog (your answer)"
	case o == "policy":
		return "policy (no one was asked)"
	case o == "default":
		return "default (bulkhead runs its built-in apps without asking; each call that writes or cannot be undone still asks — revoke it to be asked)"
	case strings.HasPrefix(o, "config"):
		return o + " (from your config)"
	}
	return o
}

func ruleDetail(th style.Theme, r RuleView) []widget.Styled {
	what := fmt.Sprintf("rule: %s kind=%s subject=%s object=%s function=%s", r.Effect, orAny(r.Kind), orAny(r.Subject), orAny(r.Object), orAny(r.Function))
	return []widget.Styled{
		{Text: widget.Clean(what), St: th.BoxTitle},
		{Text: "from: " + widget.Clean(r.Where)},
		{Text: "A deny rule wins over everything, then ask, then allow; no allow rule covers an irreversible action.", St: th.Dim},
		{Text: "Rules are read from config at start: edit the file to change one.", St: th.Dim},
	}
}

// askRevoke puts the y/n question for r (the selected grant), R (every
// grant of its app) or X (all).
func (g *Screen) askRevoke(key string, now time.Time) {
	items := g.grantItems(now)
	cur := g.cursor[Grants]
	var sel *perm.Grant
	if cur < len(items) {
		sel = items[cur].g
		if items[cur].r != nil && key != "X" {
			g.msg, g.msgErr = "rules come from your config ("+items[cur].r.Where+"): edit it to change them", true
			return
		}
	}
	switch key {
	case "r":
		if sel == nil {
			return
		}
		g.confirm = &revokeAs{
			question: fmt.Sprintf("revoke %s %s %s?", sel.Kind, arrow(sel.Subject, sel.Object), sel.Function),
			done:     "revoked " + string(sel.Kind) + " " + arrow(sel.Subject, sel.Object), ids: []string{sel.ID},
		}
	case "R":
		if sel == nil {
			return
		}
		app := appOf(*sel)
		var ids []string
		for _, gr := range g.grants {
			if involves(gr, app) {
				ids = append(ids, gr.ID)
			}
		}
		g.confirm = &revokeAs{question: fmt.Sprintf("revoke every grant involving %s (%d)?", app, len(ids)),
			done: "revoked the grants of " + app, ids: ids}
	case "X":
		if len(g.grants) == 0 {
			return
		}
		g.confirm = &revokeAs{question: fmt.Sprintf("revoke ALL %s?", widget.Plural(len(g.grants), "grant")), done: "revoked every grant", all: true}
	}
}
