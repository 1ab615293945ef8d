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
// accepts all, a picks the entries to accept (a huh multi-select, warned
// entries not ticked; choose, then enter), s and p accept this app's sets
// here from now on (only where no entry is warned), d discards (choose,
// then enter), l or esc leaves it pending for later (`bulkhead changes`,
// the permission manager).

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
		p.chosen, p.picked = perm.AnswerDeny, nil
		return nil, Outcome{}, true
	}
	return nil, Outcome{}, false
}

// warned reports whether something else may run or trust entry e, or
// it conflicts: the person reads it and ticks it, one by one.
func warned(e perm.ChangeEntry) bool { return len(e.Warnings) > 0 || e.Conflict != "" }

// openPicks opens the entries in a huh multi-select: those with no
// warning chosen, a warned one (⚠) not — the person ticks it, one by one.
// enter ends the choice, which a second enter confirms (as o and d ask):
// what is not accepted is discarded.
func (p *Dialog) openPicks() tea.Cmd {
	set := p.req.Changes
	if set == nil || len(set.Entries) == 0 {
		return nil
	}
	opts := make([]huh.Option[int], len(set.Entries))
	picked := make([]int, 0, len(set.Entries))
	for i, e := range set.Entries {
		w := widget.Clean(e.Words())
		if warned(e) {
			w = "⚠ " + w
		}
		on := e.Never == "" && !warned(e)
		opts[i] = huh.NewOption(w, i).Selected(on)
		if on {
			picked = append(picked, i)
		}
	}
	p.picks = &picked
	ms := huh.NewMultiSelect[int]().
		Title("accept which?").
		Options(opts...).Height(p.picksHeight()).Value(p.picks)
	p.choiceForm = nil
	p.picksForm = forms.New(p.c.Theme, widget.DialogWidth(p.c.Width)-4, ms)
	return p.picksForm.Init()
}

// picksHeight is the rows of the picker: its title and entries, no more
// than about half the dialog, so the entries' warnings and diffs still
// show above it.
func (p *Dialog) picksHeight() int {
	n := 0
	if p.req.Changes != nil {
		n = len(p.req.Changes.Entries)
	}
	return min(n+1, max((p.c.Height-2)/2-2, 3))
}

// picksUpdate gives msg to the open multi-select; submitted, the
// entries chosen wait for enter (p.chosen, p.picked).
func (p *Dialog) picksUpdate(msg tea.Msg) (tea.Cmd, Outcome) {
	f, cmd, ended := forms.Update(p.picksForm, msg)
	p.picksForm = f
	switch ended {
	case forms.Open:
		return cmd, Outcome{}
	case forms.Submitted:
		p.picksForm = nil
		p.chosen, p.picked = perm.AnswerOnce, append([]int{}, (*p.picks)...)
		return cmd, Outcome{}
	}
	p.picksForm = nil
	return cmd, Outcome{}
}

// picksLines draw the open multi-select: its lines as huh draws them,
// without the blank ones at the end, framed with the rest of the dialog.
func (p *Dialog) picksLines(iw int) []string {
	lines := strings.Split(strings.TrimRight(p.picksForm.View(), "\n"), "\n")
	for len(lines) > 0 && strings.TrimSpace(ansi.Strip(lines[len(lines)-1])) == "" {
		lines = lines[:len(lines)-1]
	}
	return widget.FitLines(lines, iw, min(len(lines), p.picksHeight()+2))
}

// pickedLines say what the entries picked would accept, waiting for
// enter: how many, and the warned ones among them.
func (p *Dialog) pickedLines(th style.Theme, iw int) []string {
	set := p.req.Changes
	n := 0
	if set != nil {
		n = len(set.Entries)
	}
	s := fmt.Sprintf("accept %d of %d entries; the others are discarded", len(p.picked), n)
	if len(p.picked) == 0 {
		s = "accept none: the whole set is discarded"
	}
	var risky []string
	for _, i := range p.picked {
		if set != nil && i < len(set.Entries) && warned(set.Entries[i]) {
			risky = append(risky, widget.Clean(set.Entries[i].Path))
		}
	}
	st := th.Key
	if len(risky) > 0 {
		s, st = s+" · ⚠ with "+strings.Join(risky, ", "), th.Warn
	}
	var out []string
	for _, l := range strings.Split(widget.FitWidth(s, max(iw, 1)), "\n") {
		out = append(out, st.Render(l))
	}
	return out
}
