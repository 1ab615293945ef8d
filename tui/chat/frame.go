package chat

import (
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The conversation as the screen sees it: a list of items (blocks), each
// drawn as lines, with one blank line between two items. A frame is the
// pane's height of lines from a position in that list; drawing it renders
// only the items it touches. Where the pane shows is the bottom while
// follow holds, else an anchor: a line of an item named by what it shows
// (a turn by its Seq), so that pages of older turns put in front, turns
// added below and a re-rendering at another width leave the view where
// it was. A finished item's lines come from a bounded cache, rendered and
// measured once per width and theme; only the running turn is drawn anew.

// itemKind says what an item draws.
type itemKind uint8

const (
	itemTurn    itemKind = iota // a logged turn: turns[i]
	itemKept                    // a private query kept in the view: drawCtx.kept[i]
	itemLive                    // the running turn, in place of turns[i] (i ≥ 0) or last
	itemFailure                 // the error that left no turn
	itemWelcome                 // the empty chat's greeting
)

// item is one block of the conversation.
type item struct {
	kind itemKind
	i    int
}

// itemID names an item across changes to the list: a logged turn, or
// the running turn drawn in its place, by its Seq; a kept query by its
// place among the chat's.
type itemID struct {
	kind itemKind
	n    uint64
}

// anchor is the first line on screen when the view does not follow the
// bottom: line off of the item id, found at index i when last drawn.
type anchor struct {
	id     itemID
	i, off int
}

// itemList is the conversation's items, rebuilt only when what they are
// made of changes (sig); retry is the turn the hint goes on.
type itemList struct {
	sig      itemsSig
	built    bool
	list     []item
	at       map[itemID]int // made when an anchor is looked up by name
	retry    uint64
	canRetry bool
}

// itemsSig is what the list of items depends on.
type itemsSig struct {
	rev, kept    int
	run          int // the running turn's id; 0: none here
	runSeq       uint64
	failure, old bool
}

// maxRenderings bounds the renderings kept: two generations of this many.
const maxRenderings = 256

// renderCache holds finished items' lines by renderKey. When the current
// generation is full it becomes the old one and the older is dropped; a
// hit in the old generation moves to the current one, so what the screen
// keeps showing stays.
type renderCache struct {
	cur, old map[renderKey][]string
	made     int // renderings put in, ever
}

func (rc *renderCache) get(k renderKey) ([]string, bool) {
	if v, ok := rc.cur[k]; ok {
		return v, true
	}
	v, ok := rc.old[k]
	if ok {
		rc.put(k, v)
		rc.made--
	}
	return v, ok
}

func (rc *renderCache) put(k renderKey, v []string) {
	if rc.cur == nil || len(rc.cur) >= maxRenderings {
		rc.old, rc.cur = rc.cur, make(map[renderKey][]string, maxRenderings)
	}
	rc.cur[k] = v
	rc.made++
}

func (rc renderCache) len() int { return len(rc.cur) + len(rc.old) }

// frameLines splits a rendering into its lines, each cut to width w
// (measured once, here).
func frameLines(s string, w int) []string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if ansi.StringWidth(l) > w {
			lines[i] = ansi.Cut(l, 0, w)
		}
	}
	return lines
}

// itemsFor returns the items for what d holds, rebuilding them when the
// turns, the kept queries, the running turn or the failure changed.
func (c *Pane) itemsFor(d Draw) []item {
	sig := itemsSig{rev: c.rev, kept: len(d.Kept), failure: c.Failure != "", old: c.Older}
	if d.Live != nil {
		sig.run, sig.runSeq = d.Live.ID, d.Live.Seq
	}
	il := &c.items
	if il.built && il.sig == sig {
		return il.list
	}
	retry, canRetry := c.RetryTarget()
	list := make([]item, 0, len(c.Turns)+len(d.Kept)+2)
	liveShown := false
	k := 0 // the next private query to place
	for i, t := range c.Turns {
		for ; k < len(d.Kept) && d.Kept[k].After < t.Seq; k++ {
			if i == 0 && c.Older && d.Kept[k].After+1 < t.Seq {
				continue // asked after a turn not read yet: it shows with its page
			}
			list = append(list, item{itemKept, k})
		}
		if d.Live != nil && d.Live.Seq == t.Seq {
			// The running turn: the hub's record of it is pending.
			list = append(list, item{itemLive, i})
			liveShown = true
			continue
		}
		list = append(list, item{itemTurn, i})
	}
	for ; k < len(d.Kept); k++ {
		list = append(list, item{itemKept, k})
	}
	if d.Live != nil && !liveShown {
		list = append(list, item{itemLive, -1})
	}
	if c.Failure != "" {
		list = append(list, item{kind: itemFailure})
	}
	if len(list) == 0 {
		list = append(list, item{kind: itemWelcome})
	}
	*il = itemList{sig: sig, built: true, list: list, retry: retry.Seq, canRetry: canRetry}
	return list
}

func (c *Pane) idOf(it item) itemID {
	switch {
	case it.kind == itemTurn, it.kind == itemLive && it.i >= 0:
		return itemID{itemTurn, c.Turns[it.i].Seq}
	case it.kind == itemKept:
		return itemID{itemKept, uint64(it.i)}
	}
	return itemID{kind: it.kind}
}

// lines draws item it at width w: a finished one from the cache.
func (c *Pane) lines(d Draw, it item) []string {
	w := max(d.Width, 1)
	switch it.kind {
	case itemTurn:
		t := c.Turns[it.i]
		hint := c.items.canRetry && t.Seq == c.items.retry && d.Live == nil
		x := withResults(d.Extras[t.Seq], t)
		key := renderKey{seq: t.Seq, started: t.Started.UnixNano(), ended: t.Ended.UnixNano(), status: t.Status, width: w, dark: d.Theme.Dark, expand: c.ExpandThinking, hint: hint, extras: !x.empty()}
		if x != nil {
			key.revealed = x.Revealed
		}
		if ls, ok := c.cache.get(key); ok {
			return ls
		}
		tv := viewOfTurn(t)
		tv.RetryHint = hint
		tv.Extras = x
		ls := frameLines(renderTurn(tv, w, d, c.ExpandThinking, drawParts(d, tv.Parts, w)), w)
		c.cache.put(key, ls)
		return ls
	case itemKept:
		return c.keptLines(d, w, it.i)
	case itemLive:
		return frameLines(renderTurn(d.Live.View(), w, d, c.ExpandThinking, c.liveAnswer(d, w)), w)
	case itemFailure:
		return frameLines(widget.FitWidth(d.Theme.Err.Render("✗ ")+widget.Clean(c.Failure), w), w)
	}
	return frameLines(c.welcome(d, w), w)
}

// framer walks the items for one Update, drawing each at most once.
type framer struct {
	c    *Pane
	d    Draw
	list []item
	memo map[int][]string
}

// pos is a line of the conversation: line off of item i, where the line
// after an item's last (but the last item's) is the blank between items.
type pos struct{ i, off int }

func (c *Pane) framer(d Draw) *framer {
	return &framer{c: c, d: d, list: c.itemsFor(d), memo: map[int][]string{}}
}

func (f *framer) lines(i int) []string {
	ls, ok := f.memo[i]
	if !ok {
		ls = f.c.lines(f.d, f.list[i])
		f.memo[i] = ls
	}
	return ls
}

// ext is how many lines item i takes, with the blank after it.
func (f *framer) ext(i int) int {
	n := len(f.lines(i))
	if i < len(f.list)-1 {
		n++
	}
	return n
}

// bottom is the top line of a frame of h lines that ends with the last.
func (f *framer) bottom(h int) pos {
	acc := 0
	for i := len(f.list) - 1; i >= 0; i-- {
		acc += f.ext(i)
		if acc >= h {
			return pos{i, acc - h}
		}
	}
	return pos{}
}

// atBottom reports whether no more than h lines start at p: the frame
// from p shows the last line.
func (f *framer) atBottom(p pos, h int) bool {
	n := f.ext(p.i) - p.off
	for i := p.i + 1; i < len(f.list) && n <= h; i++ {
		n += f.ext(i)
	}
	return n <= h
}

// up moves p up n lines, no further than the first.
func (f *framer) up(p pos, n int) pos {
	for n > 0 {
		if p.off >= n {
			p.off -= n
			return p
		}
		n -= p.off + 1
		if p.i == 0 {
			return pos{}
		}
		p.i--
		p.off = f.ext(p.i) - 1
	}
	return p
}

// down moves p down n lines, no further than the last.
func (f *framer) down(p pos, n int) pos {
	for n > 0 {
		rest := f.ext(p.i) - 1 - p.off
		if rest >= n {
			p.off += n
			return p
		}
		n -= rest + 1
		if p.i == len(f.list)-1 {
			p.off = f.ext(p.i) - 1
			return p
		}
		p.i++
		p.off = 0
	}
	return p
}

// resolve finds the anchor's line: its item by name (at the index it had
// when the name is still there, else looked up), else the item now at
// that index; the line is kept within the item.
func (f *framer) resolve(a anchor) pos {
	c := f.c
	i := -1
	if a.i >= 0 && a.i < len(f.list) && c.idOf(f.list[a.i]) == a.id {
		i = a.i
	} else {
		if c.items.at == nil {
			c.items.at = make(map[itemID]int, len(f.list))
			for j, it := range f.list {
				c.items.at[c.idOf(it)] = j
			}
		}
		if j, ok := c.items.at[a.id]; ok {
			i = j
		}
	}
	if i < 0 {
		i = min(max(a.i, 0), len(f.list)-1)
	}
	return pos{i, min(max(a.off, 0), f.ext(i)-1)}
}

func (f *framer) anchor(p pos) anchor {
	return anchor{id: f.c.idOf(f.list[p.i]), i: p.i, off: p.off}
}

// where is the top line on screen: the bottom's while following, else
// the anchor's, moved up when fewer than h lines remain below it.
func (f *framer) where(h int) pos {
	if f.c.Follow {
		return f.bottom(h)
	}
	p := f.resolve(f.c.top)
	if f.atBottom(p, h) {
		return f.bottom(h)
	}
	return p
}

// collect is the h lines (or fewer, at the end) from p.
func (f *framer) collect(p pos, h int) []string {
	out := make([]string, 0, h)
	for i, off := p.i, p.off; i < len(f.list) && len(out) < h; i, off = i+1, 0 {
		ls := f.lines(i)
		for _, l := range ls[min(off, len(ls)):] {
			if len(out) == h {
				return out
			}
			out = append(out, l)
		}
		if i < len(f.list)-1 && len(out) < h {
			out = append(out, "") // the blank between items
		}
	}
	return out
}

// Refresh draws the frame: the items on screen, from the cache but for
// the running turn.
func (c *Pane) Refresh(d Draw) {
	h := max(c.height, 1)
	f := c.framer(d)
	p := f.where(h)
	if !c.Follow {
		c.top = f.anchor(p)
	}
	frame := f.collect(p, h)
	if !c.pad.ok || c.pad.w != c.width || c.pad.h != c.height || !slices.Equal(frame, c.frame) {
		c.pad = padded{ok: true, w: c.width, h: c.height, s: widget.PadFrame(frame, c.width, c.height)}
		c.pad.lines = strings.Split(c.pad.s, "\n")
	}
	c.frame = frame
	c.topItem = p.i
}

// padded is the frame padded to the pane, redone only when the frame or
// the pane changes: a keystroke or a spinner tick that changes nothing
// on screen costs no measuring.
type padded struct {
	ok    bool
	w, h  int
	s     string
	lines []string // s split, each line w cells wide
}

// Scroll handles the keys and wheel that move the conversation: a page
// for the keys, three lines for the wheel (sideways it does nothing).
func (c *Pane) Scroll(d Draw, msg tea.Msg, up bool) {
	h := max(c.height, 1)
	n := h
	if w, ok := msg.(tea.MouseWheelMsg); ok {
		n, up = 0, w.Button == tea.MouseWheelUp
		if (w.Button == tea.MouseWheelUp || w.Button == tea.MouseWheelDown) && !w.Mod.Contains(tea.ModShift) {
			n = 3
		}
	}
	f := c.framer(d)
	p := f.where(h)
	switch {
	case n == 0:
	case up:
		p = f.up(p, n)
	case !f.atBottom(p, h):
		if p = f.down(p, n); f.atBottom(p, h) {
			p = f.bottom(h)
		}
	}
	c.Follow = f.atBottom(p, h)
	c.top = f.anchor(p)
}

// WantsOlder reports whether the page before the first turn read should
// be asked for: there is one, and the screen is near the first turn.
func (c *Pane) WantsOlder() bool {
	const margin = TurnsPage / 4 // items above the screen
	return c.Older && !c.Paging && c.Loaded && c.Chat.ID != "" && len(c.Turns) > 0 && c.topItem < margin
}

// PaneLines are the lines of view, each exactly the pane's width (nil
// when there is no current padding).
func (c *Pane) PaneLines() []string {
	if c.pad.ok && c.pad.w == c.width && c.pad.h == c.height && c.width > 0 {
		return c.pad.lines
	}
	return nil
}

// View is the frame, padded to the pane.
func (c *Pane) View() string {
	if c.pad.ok && c.pad.w == c.width && c.pad.h == c.height {
		return c.pad.s
	}
	return widget.PadFrame(c.frame, c.width, c.height)
}

// MaxRenderings bounds the finished turns' renderings the pane keeps:
// two generations of this many.
const MaxRenderings = maxRenderings

// Renderings counts the finished turns' renderings: made, ever (a hit
// is not one), and held in the cache now.
func (c *Pane) Renderings() (made, held int) { return c.cache.made, c.cache.len() }

// Frame is the conversation's lines on screen, as the last Refresh made
// them.
func (c *Pane) Frame() []string { return c.frame }

// AllLines is the whole conversation drawn by d, every block's lines with
// a blank line between blocks, as the frame windows it (long chats: the
// pages read so far).
func (c *Pane) AllLines(d Draw) []string {
	fr := c.framer(d)
	var all []string
	for i := range fr.list {
		all = append(all, fr.lines(i)...)
		if i < len(fr.list)-1 {
			all = append(all, "")
		}
	}
	return all
}
