package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// What a dialog shows of a change: at most changeLines lines, each at most
// changeLineRunes long, with changeContext unchanged lines around each part.
const (
	changeLines     = 400
	changeLineRunes = 300
	changeContext   = 3
	changePathRunes = 300
)

// change is what a writing call of app would do to a file, when the app
// can say what it would replace (apps.Previewer): the hub's own diff of
// the file as it is and as the call leaves it. nil when the app cannot
// say.
func (o *Operator) change(ctx context.Context, tr *turnRun, app, fn string, args json.RawMessage) *permissions.Change {
	if o.opts.Apps == nil || tr == nil {
		return nil
	}
	a, ok := o.opts.Apps.App(app)
	if !ok {
		return nil
	}
	if _, ok := a.(apps.PerSpoke); ok {
		return nil
	}
	pr, ok := a.(apps.Previewer)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	pv, err := pr.Preview(ctx, apps.Call{Function: fn, Args: args})
	if err != nil || pv.Path == "" {
		return nil
	}
	return changeOf(pv)
}

// changeOf is the Change from pv: its diff, bounded.
func changeOf(pv apps.Preview) *permissions.Change {
	c := &permissions.Change{Path: clip(termtext.OneLine(pv.Path), changePathRunes), Exists: pv.Exists, Field: pv.Field, Unshown: clip(pv.Unshown, 300)}
	if pv.Unshown != "" {
		return c
	}
	add := func(op, text string) {
		if len(c.Lines) >= changeLines {
			c.More++
			return
		}
		c.Lines = append(c.Lines, permissions.ChangeLine{Op: op, Text: clip(strings.TrimRight(text, "\r\n"), changeLineRunes)})
	}
	u, err := udiff.ToUnifiedDiff("before", "after", pv.Before, udiff.Lines(pv.Before, pv.After), changeContext)
	if err != nil {
		c.Unshown = "the change could not be computed"
		return c
	}
	for _, h := range u.Hunks {
		if pv.Exists && pv.Before != "" {
			add("@", fmt.Sprintf("from line %d", h.FromLine))
		}
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Delete:
				c.Removed++
				add("-", l.Content)
			case udiff.Insert:
				c.Added++
				add("+", l.Content)
			default:
				add(" ", l.Content)
			}
		}
	}
	return c
}
