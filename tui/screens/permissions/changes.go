package permissions

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The changes tab: the change sets apps wrote in your folders that wait
// for an answer (left for later, by a policy, or across a restart), each
// with its entries, the hub's warnings and the diffs in the detail pane;
// a accepts the selected set whole and d discards it, each after a
// confirmation (accepting some of it: `bulkhead changes accept ID
// --only N,M`, or the dialog when its chat resumes).

// ChangeSets is what the tab needs of the serving process
// (*serve.Client satisfies it).
type ChangeSets interface {
	Changes() ([]hub.PendingSet, error)
	ChangeSet(id string) (perm.Request, error)
	DecideChanges(id string, accept bool, picks []int) (hub.ChangesOutcome, error)
}

// setRead is one set, read for the detail pane.
type setRead struct {
	id  string
	req perm.Request
	err error
}

// readSet reads the set id off the UI loop.
func readSet(c ChangeSets, id string) tea.Cmd {
	return func() tea.Msg {
		r, err := c.ChangeSet(id)
		return setRead{id: id, req: r, err: err}
	}
}

// decideCmd accepts or discards the set id, then reads everything again.
func decideCmd(b Permissions, c ChangeSets, id string, accept bool) tea.Cmd {
	return func() tea.Msg {
		out, err := c.DecideChanges(id, accept, nil)
		msg := read(b)
		msg.pending, msg.pendingErr = c.Changes()
		msg.hasPending = true
		switch {
		case err != nil:
			msg.msg, msg.msgErr = "failed: "+err.Error(), true
		case out.Discarded:
			msg.msg = "discarded " + id
		case len(out.Failed) > 0:
			msg.msg, msg.msgErr = fmt.Sprintf("applied %d entries; %d not (they stay pending: changed in your folder since)", len(out.Applied), len(out.Failed)), true
		default:
			msg.msg = fmt.Sprintf("applied %d entries of %s", len(out.Applied), id)
		}
		return msg
	}
}

// changeItems are the pending sets the filter lets through.
func (g *Screen) changeItems() []hub.PendingSet {
	f := g.filter.Value()
	var out []hub.PendingSet
	for _, p := range g.pending {
		if widget.MatchAll(strings.ToLower(strings.Join([]string{p.ID, p.App, p.Folder, p.Count, p.Err}, " ")), f) {
			out = append(out, p)
		}
	}
	return out
}

var changeCols = []widget.Column{
	{Title: "WHEN", Min: 8, Max: 12, Drop: 3},
	{Title: "APP", Min: 6, Max: 14},
	{Title: "FOLDER", Min: 12, Max: 40},
	{Title: "CHANGES", Min: 16},
	{Title: "", Min: 8, Max: 12, Drop: 2},
}

// selectedSet is the set under the cursor ("" for none), and the Cmd
// that reads it when it is not read yet.
func (g *Screen) selectedSet() (string, tea.Cmd) {
	items := g.changeItems()
	cur := g.cursor[Changes]
	if cur >= len(items) || g.c.Changes == nil {
		return "", nil
	}
	id := items[cur].ID
	if r, ok := g.sets[id]; ok && r.err == nil || g.reading == id {
		return id, nil
	}
	g.reading = id
	return id, readSet(g.c.Changes, id)
}

func (g *Screen) changesBody(th style.Theme, w int, lay widget.Layout, now time.Time) (head, list, detail []string, label string) {
	items := g.changeItems()
	cells := make([][]widget.Cell, len(items))
	for i, p := range items {
		what, st := p.Count, th.OK
		if p.Err != "" {
			what, st = "unreadable: "+p.Err, th.Err
		}
		mark := ""
		if p.Warned {
			mark, st = "⚠ warned", th.Warn
		}
		if p.Running {
			mark = strings.TrimSpace(mark + " running")
		}
		cells[i] = []widget.Cell{{Text: widget.Stamp(p.Created, now), St: th.Dim}, widget.PlainCell(p.App), widget.PlainCell(p.Folder), {Text: what, St: st}, {Text: mark, St: th.Warn}}
	}
	widths := widget.FitColumns(changeCols, w-2, cells)
	head = []string{widget.TableHead(th, changeCols, widths, w)}
	if g.c.Changes == nil {
		return head, []string{th.Dim.Render("  not available here")}, nil, "detail"
	}
	if len(items) == 0 {
		empty := "  no change sets wait for you: what apps write in your folders is asked as they write it"
		if g.filter.Value() != "" {
			empty = "  no change set matches the filter"
		}
		return head, []string{th.Dim.Render(empty)}, nil, "detail"
	}
	cur := g.cursor[Changes]
	first := widget.Window(len(items), lay.List, cur)
	for i := first; i < len(items) && i < first+max(lay.List, 1); i++ {
		list = append(list, widget.TableRow(th, cells[i], widths, w, i == cur))
	}
	p := items[cur]
	label = "change set " + p.ID
	var st []widget.Styled
	r, ok := g.sets[p.ID]
	switch {
	case !ok:
		st = []widget.Styled{{Text: "reading…", St: th.Dim}}
	case r.err != nil:
		st = []widget.Styled{{Text: "could not read it: " + r.err.Error(), St: th.Err}}
	default:
		st = setDetail(th, r.req)
	}
	return head, list, widget.WrapLines(st, w-1), label
}

// setDetail is a set entry by entry, as its dialog shows it.
func setDetail(th style.Theme, r perm.Request) []widget.Styled {
	set := r.Changes
	if set == nil {
		return nil
	}
	out := []widget.Styled{
		{Text: fmt.Sprintf("%s wrote in %s: %s", widget.Clean(r.Subject), widget.Clean(set.Folder), set.Count())},
		{Text: "⚠ " + widget.Clean(r.Warning), St: th.Warn},
	}
	if set.Running {
		out = append(out, widget.Styled{Text: "its process still runs, and may write more", St: th.Dim})
	}
	for i, e := range set.Entries {
		st := th.Dim
		if len(e.Warnings) > 0 || e.Conflict != "" {
			st = th.Warn
		}
		out = append(out, widget.Styled{Text: fmt.Sprintf("%d. %s", i+1, widget.Clean(e.Words())), St: st})
		for _, w := range e.Warnings {
			out = append(out, widget.Styled{Text: "   ⚠ " + widget.Clean(w), St: th.Warn})
		}
		if e.Conflict != "" {
			out = append(out, widget.Styled{Text: "   ⚠ " + widget.Clean(e.Conflict), St: th.Err})
		}
		if e.Never != "" {
			out = append(out, widget.Styled{Text: "   not applied: " + widget.Clean(e.Never), St: th.Dim})
		}
		if d := e.Diff; d != nil {
			if d.Unshown != "" {
				out = append(out, widget.Styled{Text: "   " + widget.Clean(d.Unshown), St: th.Dim})
			}
			for _, l := range d.Lines {
				lead, st := "     ", th.Dim
				switch l.Op {
				case "-":
					lead, st = "   − ", th.Err
				case "+":
					lead, st = "   + ", th.OK
				case "@":
					lead = "   ⋯ "
				}
				out = append(out, widget.Styled{Text: lead + widget.OneLine(l.Text), St: st})
			}
			if d.More > 0 {
				out = append(out, widget.Styled{Text: fmt.Sprintf("     … %d more lines", d.More), St: th.Dim})
			}
		}
	}
	if set.More > 0 {
		out = append(out, widget.Styled{Text: fmt.Sprintf("%d more entries not listed", set.More), St: th.Warn})
	}
	return out
}

// askDecide opens the confirmation of accepting (a) or discarding (d)
// the set under the cursor.
func (g *Screen) askDecide(s string) tea.Cmd {
	items := g.changeItems()
	cur := g.cursor[Changes]
	if cur >= len(items) || g.c.Changes == nil {
		return nil
	}
	p := items[cur]
	q := &revokeAs{set: p.ID, accept: s == "a"}
	if q.accept {
		q.question = fmt.Sprintf("Apply %s's changes (%s) to %s?", widget.Clean(p.App), p.Count, widget.Clean(p.Folder))
	} else {
		q.question = fmt.Sprintf("Discard %s's changes (%s)? Nothing of them reaches %s.", widget.Clean(p.App), p.Count, widget.Clean(p.Folder))
	}
	g.confirm = q
	yes := "Apply"
	if !q.accept {
		yes = "Discard"
	}
	return g.ask.Ask(g.th, q.question, yes, "Keep", g.width-2)
}
