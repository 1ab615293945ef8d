package chat

import "github.com/bulkhead-dev/bulkhead/hub"

// PrivateBadge marks a private query's turn.
const PrivateBadge = "PRIVATE · nothing kept"

// Kept is a private query the UI keeps for the rest of the session.
type Kept struct {
	After  uint64 // the chat's last logged turn when it was asked
	Turn   hub.Turn
	Extras *Extras
}

// keptLines draws the k-th private query of the chat, from the cache.
func (c *Pane) keptLines(d Draw, w, k int) []string {
	kt := d.Kept[k]
	t := kt.Turn
	key := renderKey{kept: k + 1, started: t.Started.UnixNano(), ended: t.Ended.UnixNano(), status: t.Status,
		width: w, dark: d.Theme.Dark, expand: c.ExpandThinking, extras: !kt.Extras.empty()}
	if ls, ok := c.cache.get(key); ok {
		return ls
	}
	tv := viewOfTurn(t)
	tv.Private = true
	tv.Extras = withResults(kt.Extras, t)
	ls := frameLines(renderTurn(tv, w, d, c.ExpandThinking, drawParts(d, tv.Parts, w)), w)
	c.cache.put(key, ls)
	return ls
}
