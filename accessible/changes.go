package accessible

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"charm.land/huh/v2"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// A change set (permissions.KindChanges) is said entry by entry, each
// numbered, with the hub's warnings and a text file's diff, and answered
// from a list: accept all, the grants its kind offers, accept some (by
// number), discard, or decide later — the default, so that an empty line
// loses nothing.

// maxChangeLines bounds the diff lines said of one set.
const maxChangeLines = 400

// describeChanges says set's entries in plain lines.
func describeChanges(set *permissions.ChangeSet) []string {
	if set == nil {
		return nil
	}
	lines := []string{fmt.Sprintf("The changes (%s), numbered:", set.Count())}
	budget := maxChangeLines
	for i, e := range set.Entries {
		lines = append(lines, fmt.Sprintf("%d. %s", i+1, plain(e.Words(), 400)))
		for _, w := range e.Warnings {
			lines = append(lines, "   warning: "+plain(w, 400))
		}
		if e.Conflict != "" {
			lines = append(lines, "   conflict: "+plain(e.Conflict, 400))
		}
		if e.Never != "" {
			lines = append(lines, "   never applied: "+plain(e.Never, 200))
		}
		if d := e.Diff; d != nil {
			if d.Unshown != "" {
				lines = append(lines, "   "+plain(d.Unshown, 200))
				continue
			}
			for j, l := range d.Lines {
				if budget == 0 {
					lines = append(lines, fmt.Sprintf("   and %d more lines (bulkhead changes show %s)", len(d.Lines)-j+d.More, set.ID))
					break
				}
				budget--
				word := map[string]string{"-": "removed:", "+": "added:", "@": "at", " ": "unchanged:"}[l.Op]
				lines = append(lines, "   "+word+" "+plain(l.Text, 300))
			}
		}
	}
	if set.More > 0 {
		lines = append(lines, fmt.Sprintf("%d more entries are not listed; they stay pending (bulkhead changes show %s).", set.More, set.ID))
	}
	return lines
}

// promptChanges reads the answer to a change set.
func (p *Prompter) promptChanges(ctx context.Context, in *dialogIn, r permissions.Request) (permissions.Decision, error) {
	type choice struct {
		label string
		d     permissions.Decision
		some  bool
	}
	var cs []choice
	for _, a := range r.Options() {
		if a != permissions.AnswerDeny {
			cs = append(cs, choice{label: r.Label(a), d: permissions.Decision{Answer: a}})
		}
	}
	cs = append(cs, choice{label: "accept some (by number)", some: true},
		choice{label: "discard", d: permissions.Decision{Answer: permissions.AnswerDeny}},
		choice{label: "decide later (it stays pending)", d: permissions.Decision{Answer: permissions.AnswerDeny, Later: true}})
	pick := len(cs) - 1 // later
	opts := make([]huh.Option[int], len(cs))
	for i, c := range cs {
		opts[i] = huh.NewOption(c.label, i)
	}
	if err := p.run(in, huh.NewSelect[int]().Title("Your answer (empty decides later):").Options(opts...).Value(&pick)); err != nil {
		return permissions.Decision{}, err
	}
	if err := ctx.Err(); err != nil {
		return permissions.Decision{}, err
	}
	c := cs[pick]
	if c.some {
		nums := ""
		if err := p.run(in, huh.NewInput().Title("The numbers of the entries to accept, e.g. 1 3 4 (empty accepts none):").CharLimit(2000).Value(&nums)); err != nil {
			return permissions.Decision{}, err
		}
		picks := []int{}
		for _, f := range strings.FieldsFunc(nums, func(r rune) bool { return r == ' ' || r == ',' }) {
			n, err := strconv.Atoi(f)
			if err != nil || n < 1 || r.Changes == nil || n > len(r.Changes.Entries) {
				fmt.Fprintf(p.out, "%q is no entry's number: left pending.\n", plain(f, 20))
				return permissions.Decision{Answer: permissions.AnswerDeny, Later: true}, nil
			}
			picks = append(picks, n-1)
		}
		c.d = permissions.Decision{Answer: permissions.AnswerOnce, Picks: picks}
	}
	if c.d.Answer == permissions.AnswerDeny && !c.d.Later {
		yes := false
		if err := p.run(in, huh.NewConfirm().Title("Discard what the app wrote? It cannot be brought back.").Affirmative("yes").Negative("no").Value(&yes)); err != nil {
			return permissions.Decision{}, err
		}
		if !yes {
			fmt.Fprintln(p.out, "Left pending.")
			return permissions.Decision{Answer: permissions.AnswerDeny, Later: true}, nil
		}
	}
	if c.d.Answer != permissions.AnswerDeny && !r.Routine() && !c.some {
		yes := false
		if err := p.run(in, huh.NewConfirm().Title("These changes are not routine (see the hub's warning above). Accept them?").Affirmative("yes").Negative("no").Value(&yes)); err != nil {
			return permissions.Decision{}, err
		}
		if !yes {
			fmt.Fprintln(p.out, "Left pending.")
			return permissions.Decision{Answer: permissions.AnswerDeny, Later: true}, nil
		}
	}
	return c.d, nil
}
