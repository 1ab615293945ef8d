package permission

import (
	"fmt"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"github.com/charmbracelet/x/ansi"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// A change set (perm.KindChanges) is drawn entry by entry where other
// requests draw their values: each entry's line (what happened to which
// path, its size and mode), the hub's warnings under it (⚠), a conflict,
// and a text file's diff; they scroll as values do. Its answers: o
// accepts all, a picks the entries to accept (a huh multi-select), s and
// p accept this app's sets here from now on (only where no entry is
// warned), d discards (choose, then enter), l or esc leaves it pending
// for later (`bulkhead changes`, the permission manager).

// changeSetLines draw the set in iw cells.
func changeSetLines(th style.Theme, set *perm.ChangeSet, iw int) []string {
	var out []string
	for _, e := range set.Entries {
		mark, st := "· ", th.Dim
		if len(e.Warnings) > 0 || e.Conflict != "" {
			mark, st = "⚠ ", th.Warn
		}
		// The paths shortened by whole folders (widget.ShortPath), so a
		// long one keeps its file name and what follows it.
		line := widget.FitPathIn(mark+widget.Clean(e.Words()), iw, widget.Clean(e.From), widget.Clean(e.Path))
		out = append(out, st.Render(line))
		for _, w := range e.Warnings {
			out = append(out, markedLines(th.Warn, "    ⚠ ", widget.Clean(w), iw)...)
		}
		if e.Conflict != "" {
			out = append(out, markedLines(th.Err, "    ⚠ ", widget.Clean(e.Conflict), iw)...)
		}
		if e.Never != "" {
			out = append(out, th.Dim.Render(ansi.Truncate("    not applied: "+widget.Clean(e.Never), iw, "…")))
		}
		if e.Diff != nil {
			d := *e.Diff
			if d.Unshown != "" {
				out = append(out, th.Dim.Render(ansi.Truncate("    "+widget.Clean(d.Unshown), iw, "…")))
				continue
			}
			for _, l := range changeLines(th, &d, max(iw-4, 1))[1:] {
				out = append(out, "    "+l)
			}
		}
	}
	if set.More > 0 {
		out = append(out, th.Warn.Render(ansi.Truncate(fmt.Sprintf("⚠ %d more entries not listed: they stay pending (bulkhead changes show %s)", set.More, set.ID), iw, "…")))
	}
	return out
}

// changesTitle is the set's title: who wrote where, and what.
func changesTitle(r perm.Request) string {
	n := 0
	if r.Changes != nil {
		n = len(r.Changes.Entries)
	}
	what := "no changes"
	if r.Changes != nil {
		what = r.Changes.Count()
	}
	return fmt.Sprintf("%s wrote in %s · %s (%d %s)", r.Subject, r.Object, what, n, map[bool]string{true: "entry", false: "entries"}[n == 1])
}

// changesKey answers a change set's dialog; ok is false for a key it
// does not take.
func (p *Dialog) changesKey(s string) (tea.Cmd, Outcome, bool) {
	switch s {
	case "a":
		return p.openPicks(), Outcome{}, true
	case "l", "esc":
		return nil, Outcome{Answer: &perm.Decision{Answer: perm.AnswerDeny, Later: true}}, true
	case "d":
		// what the app made is gone once discarded: choose, then enter
		p.chosen = perm.AnswerDeny
		return nil, Outcome{}, true
	}
	return nil, Outcome{}, false
}

// openPicks opens the entries in a huh multi-select, every one chosen:
// enter accepts those still chosen (none: the set is discarded).
func (p *Dialog) openPicks() tea.Cmd {
	set := p.req.Changes
	if set == nil || len(set.Entries) == 0 {
		return nil
	}
	opts := make([]huh.Option[int], len(set.Entries))
	picked := make([]int, 0, len(set.Entries))
	for i, e := range set.Entries {
		w := widget.Clean(e.Words())
		if len(e.Warnings) > 0 || e.Conflict != "" {
			w = "⚠ " + w
		}
		opts[i] = huh.NewOption(w, i).Selected(e.Never == "")
		if e.Never == "" {
			picked = append(picked, i)
		}
	}
	p.picks = &picked
	ms := huh.NewMultiSelect[int]().
		Title("accept which? (space toggles, enter accepts those chosen, esc back)").
		Options(opts...).Height(min(len(opts)+1, max(p.c.Height-8, 4))).Value(p.picks)
	p.choiceForm = nil
	p.picksForm = forms.New(p.c.Theme, widget.DialogWidth(p.c.Width)-4, ms)
	return p.picksForm.Init()
}

// picksUpdate gives msg to the open multi-select; submitted, it answers
// with the entries chosen.
func (p *Dialog) picksUpdate(msg tea.Msg) (tea.Cmd, Outcome) {
	f, cmd, ended := forms.Update(p.picksForm, msg)
	p.picksForm = f
	switch ended {
	case forms.Open:
		return cmd, Outcome{}
	case forms.Submitted:
		p.picksForm = nil
		picks := append([]int{}, (*p.picks)...)
		return cmd, Outcome{Answer: &perm.Decision{Answer: perm.AnswerOnce, Picks: picks}}
	}
	p.picksForm = nil
	return cmd, Outcome{}
}

// picksLines draw the open multi-select.
func (p *Dialog) picksLines(iw int) []string {
	return widget.FitLines(strings.Split(strings.TrimRight(p.picksForm.View(), "\n"), "\n"), iw, max(p.c.Height-6, 4))
}
