package hub

import (
	"context"
	"encoding/json"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// changePathRunes bounds the path a dialog shows.
const changePathRunes = 300

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
	path := clip(termtext.OneLine(pv.Path), changePathRunes)
	if pv.Unshown != "" {
		return &permissions.Change{Path: path, Exists: pv.Exists, Field: pv.Field, Unshown: clip(pv.Unshown, 300)}
	}
	c := permissions.Diff(path, pv.Exists, pv.Before, pv.After)
	c.Field = pv.Field
	return c
}
