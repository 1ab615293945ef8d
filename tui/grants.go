package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// The grants tab: every grant the broker holds (session, permanent and
// config ones, and stored ones whose signature failed, in red), then the
// config rules; the filter matches any of their words.

// grantItem is a row of the grants tab: a grant or a rule.
type grantItem struct {
	g *permissions.Grant
	r *RuleView
}

var grantCols = []column{
	{title: "KIND", min: 6, max: 12},
	{title: "SUBJECT → OBJECT", min: 15, max: 32},
	{title: "FUNCTION", min: 12, max: 24, drop: 2},
	{title: "SCOPE", min: 30},
	{title: "USES", min: 4, max: 4, drop: 4},
	{title: "LAST USED", min: 9, max: 12, drop: 5},
	{title: "CREATED", min: 9, max: 12, drop: 6},
	{title: "ORIGIN", min: 6, max: 14, drop: 3},
}

// grantItems are the rows the filter lets through: grants, then rules.
func (g *manager) grantItems(now time.Time) []grantItem {
	f := g.filter.Value()
	var out []grantItem
	for i := range g.grants {
		gr := &g.grants[i]
		if matchAll(grantHay(*gr, now), f) {
			out = append(out, grantItem{g: gr})
		}
	}
	for i := range g.rules {
		r := &g.rules[i]
		if matchAll(strings.ToLower(strings.Join([]string{"rule", r.Effect, r.Kind, r.Subject, r.Object, r.Function, r.Where, "config"}, " ")), f) {
			out = append(out, grantItem{r: r})
		}
	}
	return out
}

func grantHay(gr permissions.Grant, now time.Time) string {
	words := []string{gr.ID, string(gr.Kind), gr.Subject, gr.Object, gr.Function, scopeText(gr, now), gr.Origin, gr.Note}
	if gr.Invalid {
		words = append(words, "invalid signature")
	}
	return strings.ToLower(strings.Join(words, " "))
}

// scopeText is a grant's scope in short: session or permanent, deny, and
// its caveats.
func scopeText(gr permissions.Grant, now time.Time) string {
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
func caveatWords(c permissions.Caveats, now time.Time, long bool) []string {
	var out []string
	if !c.Expires.IsZero() {
		switch left := c.Expires.Sub(now); {
		case left <= 0:
			out = append(out, "expired "+shortStamp(c.Expires, now))
		case long:
			out = append(out, fmt.Sprintf("until %s (%s left)", longStamp(c.Expires, now), span(left)))
		default:
			out = append(out, "until "+shortStamp(c.Expires, now))
		}
	}
	if c.UsesLeft > 0 {
		out = append(out, plural(c.UsesLeft, "use")+" left")
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

// span is a duration in words: "59m", "3h 05m", "6d 23h".
func span(d time.Duration) string {
	d = d.Round(time.Minute)
	switch {
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
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

func (g *manager) grantsBody(th style.Theme, w int, lay screenLayout, now time.Time, items []grantItem) (head, list, detail []string, label string) {
	cells := make([][]cell, len(items))
	for i, it := range items {
		if it.g != nil {
			cells[i] = grantCells(th, *it.g, now)
		} else {
			cells[i] = ruleCells(th, *it.r)
		}
	}
	widths := fitColumns(grantCols, w-2, cells)
	head = []string{tableHead(th, grantCols, widths, w)}
	cur := g.cursor[tabGrants]
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
			lines = append(lines, th.Dim.Render(fmt.Sprintf("  %s", plural(ngrants, "grant"))))
		case it.r != nil && (i == 0 || items[i-1].r == nil):
			lines = append(lines, th.Dim.Render(fmt.Sprintf("  %s of your config", plural(len(items)-ngrants, "rule"))))
		}
		if i == cur {
			at = len(lines)
		}
		lines = append(lines, tableRow(th, cells[i], widths, w, i == cur))
	}
	if ngrants == 0 {
		empty := "  no grants — answer a dialog with s or p to make one"
		if g.filter.Value() != "" {
			empty = "  no grant matches the filter"
		}
		lines = append([]string{th.Dim.Render(empty)}, lines...)
		at++
	}
	first := window(len(lines), lay.list, at)
	list = lines[first:]
	label = "detail"
	if cur < len(items) {
		var st []styled
		if it := items[cur]; it.g != nil {
			st, label = grantDetail(th, *it.g, now), "grant "+it.g.ID
		} else {
			st, label = ruleDetail(th, *it.r), "rule"
		}
		detail = wrapLines(st, w-1)
	}
	return head, list, detail, label
}

func grantCells(th style.Theme, gr permissions.Grant, now time.Time) []cell {
	scope := cell{text: scopeText(gr, now), st: th.OK}
	if gr.Deny {
		scope.st = th.Warn
	}
	cells := []cell{
		plainCell(string(gr.Kind)), plainCell(arrow(gr.Subject, gr.Object)), plainCell(gr.Function), scope,
		plainCell(fmt.Sprint(gr.Uses)), {text: stamp(gr.LastUsed, now), st: th.Dim}, {text: stamp(gr.Created, now), st: th.Dim},
		{text: gr.Origin, st: th.Dim},
	}
	if gr.Invalid {
		for i := range cells {
			cells[i].st = th.Err
		}
	}
	return cells
}

func ruleCells(th style.Theme, r RuleView) []cell {
	st := th.OK
	switch r.Effect {
	case "deny":
		st = th.Err
	case "ask":
		st = th.Warn
	}
	return []cell{
		plainCell(orAny(r.Kind)), plainCell(orAny(r.Subject) + " → " + orAny(r.Object)), plainCell(orAny(r.Function)),
		{text: "rule: " + r.Effect, st: st}, {}, {}, {}, {text: "config", st: th.Dim},
	}
}

func grantDetail(th style.Theme, gr permissions.Grant, now time.Time) []styled {
	verb := "allow"
	if gr.Deny {
		verb = "deny"
	}
	what := verb + " " + string(gr.Kind) + " " + arrow(gr.Subject, gr.Object)
	if gr.Function != "" {
		what += " (" + gr.Function + ")"
	}
	out := []styled{{text: clean(what), st: th.BoxTitle}}
	if gr.Invalid {
		out = append(out, styled{text: "✗ INVALID: its signature does not verify (changed outside bulkhead?) — it is ignored; r removes it", st: th.Err})
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
		styled{text: "scope:   " + clean(scope)},
		styled{text: fmt.Sprintf("created: %s · last used: %s · used %s", longStamp(gr.Created, now), longStamp(gr.LastUsed, now), plural(gr.Uses, "time"))},
		styled{text: "origin:  " + clean(originWords(gr.Origin))},
		styled{text: "id:      " + clean(gr.ID) + "  (bulkhead permissions revoke " + clean(gr.ID) + ")", st: th.Dim},
	)
	if gr.Note != "" {
		out = append(out, styled{text: "note:    " + clean(gr.Note)})
	}
	if app := appOf(gr); app != "" {
		out = append(out, styled{text: "R revokes every grant involving " + clean(app), st: th.Dim})
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

func ruleDetail(th style.Theme, r RuleView) []styled {
	what := fmt.Sprintf("rule: %s kind=%s subject=%s object=%s function=%s", r.Effect, orAny(r.Kind), orAny(r.Subject), orAny(r.Object), orAny(r.Function))
	return []styled{
		{text: clean(what), st: th.BoxTitle},
		{text: "from: " + clean(r.Where)},
		{text: "A deny rule wins over everything, then ask, then allow; no allow rule covers an irreversible action.", st: th.Dim},
		{text: "Rules are read from config at start: edit the file to change one.", st: th.Dim},
	}
}

// askRevoke puts the y/n question for r (the selected grant), R (every
// grant of its app) or X (all).
func (g *manager) askRevoke(key string, now time.Time) {
	items := g.grantItems(now)
	cur := g.cursor[tabGrants]
	var sel *permissions.Grant
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
		g.confirm = &revokeAs{question: fmt.Sprintf("revoke ALL %s?", plural(len(g.grants), "grant")), done: "revoked every grant", all: true}
	}
}
