package permissions

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/request"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The action log tab: every request the broker decided, with who decided
// (user, grant, rule, policy), and the notes the hub logged (masked text,
// plan fallbacks, off-plan reads), newest first; / searches every field,
// e exports what the search lets through as JSON Lines.

// logRow is an entry with the lower-case text the search looks in.
type logRow struct {
	e   perm.Entry
	hay string
}

// logRows orders entries newest first.
func logRows(entries []perm.Entry) []logRow {
	out := make([]logRow, len(entries))
	for i, e := range entries {
		out[len(entries)-1-i] = logRow{e: e, hay: logHay(e)}
	}
	return out
}

func logHay(e perm.Entry) string {
	var words []string
	if n := e.Note; n != nil {
		words = []string{"note", n.Kind, n.Subject, n.Detail}
	} else {
		r, d := e.Request, e.Decision
		words = []string{r.ID, string(r.Kind), r.Subject, r.Object, r.Function, string(r.Args), r.Detail, r.Warning,
			verdict(d), string(d.Source), d.Note, d.Rule, d.GrantID}
	}
	return strings.ToLower(fmt.Sprintf("#%d %s", e.Seq, strings.Join(words, " ")))
}

// verdict is a decision in a word or two.
func verdict(d perm.Decision) string {
	if !d.Allowed {
		return "denied"
	}
	return "allowed " + string(d.Answer)
}

// logItems are the entries the search lets through, newest first.
func (g *Screen) logItems() []perm.Entry {
	f := g.filter.Value()
	var out []perm.Entry
	for _, r := range g.log {
		if widget.MatchAll(r.hay, f) {
			out = append(out, r.e)
		}
	}
	return out
}

var logCols = []widget.Column{
	{Title: "#", Min: 3, Max: 5, Drop: 5},
	{Title: "TIME", Min: 8, Max: 12, Drop: 4},
	{Title: "KIND", Min: 12, Max: 12},
	{Title: "REQUEST", Min: 16, Max: 44},
	{Title: "DECISION", Min: 11, Max: 11},
	{Title: "BY", Min: 6, Max: 6},
	{Title: "NOTE", Min: 12, Drop: 3},
}

func (g *Screen) logBody(th style.Theme, w int, lay widget.Layout, now time.Time) (head, list, detail []string, label string) {
	items := g.logItems()
	cells := make([][]widget.Cell, len(items))
	for i, e := range items {
		cells[i] = logCells(th, e, now)
	}
	widths := widget.FitColumns(logCols, w-2, cells)
	head = []string{widget.TableHead(th, logCols, widths, w)}
	cur := g.cursor[Log]
	if len(items) == 0 {
		empty := "  nothing logged yet"
		if g.filter.Value() != "" {
			empty = "  no entry matches the search"
		}
		return head, []string{th.Dim.Render(empty)}, nil, "detail"
	}
	first := widget.Window(len(items), lay.List, cur)
	for i := first; i < len(items) && i < first+max(lay.List, 1); i++ {
		list = append(list, widget.TableRow(th, cells[i], widths, w, i == cur))
	}
	e := items[cur]
	label = fmt.Sprintf("entry #%d", e.Seq)
	return head, list, widget.WrapLines(logDetail(th, e, now), w-1), label
}

func logCells(th style.Theme, e perm.Entry, now time.Time) []widget.Cell {
	seq, at := widget.Cell{Text: fmt.Sprint(e.Seq), St: th.Dim}, widget.Cell{Text: widget.Stamp(e.Time, now), St: th.Dim}
	if n := e.Note; n != nil {
		return []widget.Cell{seq, at, {Text: "note", St: th.Warn}, widget.PlainCell(n.Subject), {Text: n.Kind, St: th.Warn}, {Text: "hub", St: th.Dim}, {Text: n.Detail, St: th.Dim}}
	}
	r, d := e.Request, e.Decision
	what := request.Target(r)
	if r.Function != "" && !strings.Contains(what, r.Function) {
		what += " · " + r.Function
	}
	dec := widget.Cell{Text: "✓ " + string(d.Answer), St: th.OK}
	if !d.Allowed {
		dec = widget.Cell{Text: "✗ denied", St: th.Err}
	}
	note := d.Note
	if note == "" && d.Source == perm.SourceRule {
		note = shortWhere(d.Rule)
	}
	kind := widget.PlainCell(string(r.Kind))
	if r.IsIrreversible() {
		kind.St = th.Err
	}
	return []widget.Cell{seq, at, kind, widget.PlainCell(what), dec, widget.PlainCell(string(d.Source)), {Text: note, St: th.Dim}}
}

// shortWhere is a rule's location with the file's folder left out:
// "config.yaml: permissions.rules[0]".
func shortWhere(where string) string {
	file, key, ok := strings.Cut(where, ": ")
	if !ok {
		return where
	}
	return filepath.Base(file) + ": " + key
}

// logDetail is an entry in full: the request with its arguments and the
// hub's warning, and the decision with who made it.
func logDetail(th style.Theme, e perm.Entry, now time.Time) []widget.Styled {
	head := fmt.Sprintf("#%d · %s", e.Seq, widget.LongStamp(e.Time, now))
	if n := e.Note; n != nil {
		return []widget.Styled{
			{Text: head + " · note: " + widget.Clean(n.Kind), St: th.BoxTitle},
			{Text: "about:  " + widget.Clean(n.Subject)},
			{Text: widget.Clean(n.Detail)},
		}
	}
	r, d := e.Request, e.Decision
	facts := []string{string(r.Kind), arrow(r.Subject, r.Object)}
	if r.Function != "" {
		facts = append(facts, r.Function)
	}
	if r.Expected {
		facts = append(facts, "expected by the plan")
	} else {
		facts = append(facts, "NOT expected by the plan")
	}
	if r.IsIrreversible() {
		facts = append(facts, "cannot be undone")
	}
	out := []widget.Styled{
		{Text: head + " · request " + widget.Clean(r.ID), St: th.BoxTitle},
		{Text: widget.Clean(strings.Join(facts, " · "))},
	}
	if r.Detail != "" {
		out = append(out, widget.Styled{Text: "detail: " + widget.Clean(r.Detail)})
	}
	if r.Warning != "" {
		st, lead := th.Warn, "⚠ "
		switch {
		case r.Routine():
			st, lead = th.Dim, "✓ "
		case request.Dangerous(r):
			st = th.Err
		}
		out = append(out, widget.Styled{Text: lead + widget.Clean(r.Warning), St: st})
	}
	if r.Explain != "" {
		by := "the app"
		if r.ExplainedBy != "" {
			by = widget.OneLine(r.ExplainedBy)
		}
		out = append(out, widget.Styled{Text: by + " says: " + widget.Clean(r.Explain), St: th.Thinking})
	}
	by := fmt.Sprintf("decision: %s by %s", verdict(d), d.Source)
	st := th.OK
	if !d.Allowed {
		st = th.Err
	}
	out = append(out, widget.Styled{Text: by, St: st})
	for _, x := range [][2]string{{"note", d.Note}, {"rule", d.Rule}, {"grant", d.GrantID}, {"limits", strings.Join(caveatWords(d.Caveats, now, false), " · ")}} {
		if x[1] != "" {
			out = append(out, widget.Styled{Text: "  " + x[0] + ": " + widget.Clean(x[1])})
		}
	}
	if args := prettyArgs(r.Args); len(args) > 0 {
		out = append(out, widget.Styled{Text: "args:"})
		for _, a := range args {
			out = append(out, widget.Styled{Text: "  " + a, St: th.Dim})
		}
	}
	if len(r.Provenance) > 0 {
		out = append(out, widget.Styled{Text: "where the values came from:"})
		for _, p := range r.Provenance {
			st := th.Dim
			if p.Key && !p.Trusted() {
				st = th.Err
			}
			out = append(out, widget.Styled{Text: "  " + widget.Clean(p.Path) + " ← " + widget.Clean(p.Words()), St: st})
		}
	}
	return out
}

// prettyArgs indents arguments; text that is not JSON is shown as it is,
// cleaned of control characters.
func prettyArgs(raw json.RawMessage) []string {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return strings.Split(widget.Clean(string(raw)), "\n")
	}
	return strings.Split(widget.Clean(buf.String()), "\n")
}

// Exported answers e: where the action log went, how many entries, or
// why it could not. The root hands it to the screen, or says it in a
// notice when the screen has closed meanwhile.
type Exported struct {
	Path string
	N    int
	Err  error
}

// exportLog writes entries, oldest first, one JSON object a line, to a new
// file actions-<time>.jsonl in dir (the data dir; the temporary folder when
// there is none), readable by the user only.
func exportLog(entries []perm.Entry, dir string, now time.Time) tea.Cmd {
	entries = slices.Clone(entries)
	slices.Reverse(entries)
	return func() tea.Msg {
		if dir == "" {
			dir = os.TempDir()
		}
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		for _, e := range entries {
			if err := enc.Encode(e); err != nil {
				return Exported{Err: err}
			}
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return Exported{Err: err}
		}
		base := "actions-" + now.Format("20060102-150405")
		for i := 1; ; i++ {
			name := base + ".jsonl"
			if i > 1 {
				name = fmt.Sprintf("%s-%d.jsonl", base, i)
			}
			p := filepath.Join(dir, name)
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if errors.Is(err, fs.ErrExist) && i < 100 {
				continue
			}
			if err != nil {
				return Exported{Err: err}
			}
			_, err = f.Write(buf.Bytes())
			if cerr := f.Close(); err == nil {
				err = cerr
			}
			return Exported{Path: p, N: len(entries), Err: err}
		}
	}
}

func (g *Screen) onExport(msg Exported) {
	if msg.Err != nil {
		g.msg, g.msgErr = "export failed: "+msg.Err.Error(), true
		return
	}
	g.msg, g.msgErr = fmt.Sprintf("exported %s to %s", widget.Plural(msg.N, "entry"), msg.Path), false
}
