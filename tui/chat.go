package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// chatView is the conversation pane: the current chat, its logged turns
// and a viewport over their rendering. The running turn is not kept here;
// the root model passes it in when it belongs to this chat.
type chatView struct {
	vid     int      // names this view, so a turn started here finds it again
	chat    hub.Chat // ID is empty until the first send creates the chat
	loaded  bool     // turns reflect the hub's log for chat.ID
	turns   []hub.Turn
	failure string // an error that left no logged turn (the hub refused the request)

	expandThinking bool
	vp             viewport.Model
	follow         bool // stick to the bottom as content grows
	cache          map[renderKey]string
	live           liveCache
}

// liveCache is the running turn's last Markdown rendering. Rendering
// costs time proportional to the answer, so while tokens pour in it is
// redone at most every drawCtx.throttle; the spinner's tick catches up.
type liveCache struct {
	run, n, width int
	dark          bool
	out           string
	at            time.Time
}

// renderKey identifies one finished turn's rendering.
type renderKey struct {
	seq            uint64
	started, ended int64
	status         memory.Status
	width          int
	dark, expand   bool
	hint           bool
	extras         bool
	revealed       int // masked spans revealed
	kept           int // a private query kept in the view: its place, from 1
}

func newChatView(private bool) chatView {
	vp := viewport.New()
	vp.KeyMap = viewport.KeyMap{} // the root model decides which keys scroll
	vp.MouseWheelDelta = 3
	return chatView{chat: hub.Chat{Private: private}, vp: vp, follow: true, cache: map[renderKey]string{}}
}

// turnView is one turn as drawn, logged or live.
type turnView struct {
	Query, Answer, Thinking string
	Status                  memory.Status
	Error                   string
	App                     string
	Live, Cancelling        bool
	RetryHint               bool        // this is the turn ctrl+r would retry
	Extras                  *turnExtras // activity and results
	Private                 bool        // a private query: badged, kept nowhere
}

func viewOfTurn(t hub.Turn) turnView {
	app := hub.VanillaApp
	if t.Plan != nil {
		if apps := t.Plan.Apps(); len(apps) > 0 {
			app = strings.Join(apps, ", ")
		}
	}
	return turnView{Query: t.Query, Answer: t.Answer, Thinking: t.Thinking, Status: t.Status, Error: t.Error, App: app, Private: t.Private}
}

// withResults is the extras to draw with logged turn t: what the UI saw
// of it, and the results card the hub logged when the UI saw none (a turn
// of an earlier session, or run elsewhere).
func withResults(x *turnExtras, t hub.Turn) *turnExtras {
	if len(t.Results) == 0 || (x != nil && len(x.results) > 0) {
		return x
	}
	y := turnExtras{results: t.Results}
	if x != nil {
		y.acts = x.acts
	}
	return &y
}

// lastSeq is the number of the chat's last logged turn (0: none).
func (c *chatView) lastSeq() uint64 {
	var n uint64
	for _, t := range c.turns {
		n = max(n, t.Seq)
	}
	return n
}

// retryTarget is the latest turn that ended without its answer.
func (c *chatView) retryTarget() (hub.Turn, bool) {
	for i := len(c.turns) - 1; i >= 0; i-- {
		if c.turns[i].Retryable() {
			return c.turns[i], true
		}
	}
	return hub.Turn{}, false
}

// upsert puts a turn the hub returned into place (by Seq).
func (c *chatView) upsert(t hub.Turn) {
	if t.Seq == 0 {
		return
	}
	for i := range c.turns {
		if c.turns[i].Seq == t.Seq {
			c.turns[i] = t
			return
		}
	}
	c.turns = append(c.turns, t)
}

// setSize sizes the viewport.
func (c *chatView) setSize(w, h int) {
	c.vp.SetWidth(w)
	c.vp.SetHeight(h)
}

// scroll handles the keys and wheel that move the conversation.
func (c *chatView) scroll(msg tea.Msg, up bool) {
	switch msg.(type) {
	case tea.MouseWheelMsg:
		c.vp, _ = c.vp.Update(msg)
	default:
		if up {
			c.vp.PageUp()
		} else {
			c.vp.PageDown()
		}
	}
	c.follow = c.vp.AtBottom()
}

// drawCtx is what rendering needs from the root model.
type drawCtx struct {
	th       theme
	md       *markdown
	width    int
	live     *turnRun // the running turn, when it belongs to this chat
	spinner  string
	version  string
	now      time.Time
	throttle time.Duration // least time between renderings of a live answer
	// extras holds the activity of the turns this UI ran, by turn number
	// (the hub's log does not keep it); nil when there is none.
	extras map[uint64]*turnExtras
	// kept are the private queries asked in this chat (private.go).
	kept []keptTurn
}

// refresh re-renders the conversation into the viewport, keeping the
// view at the bottom when it was there.
func (c *chatView) refresh(d drawCtx) {
	c.vp.SetContent(c.content(d))
	if c.follow {
		c.vp.GotoBottom()
	}
}

func (c *chatView) content(d drawCtx) string {
	w := max(d.width, 1)
	if len(c.cache) > 2*len(c.turns)+16 {
		clear(c.cache) // renderings for widths long gone
	}
	retry, canRetry := c.retryTarget()
	var blocks []string
	liveShown := false
	k := 0 // the next private query to place
	for _, t := range c.turns {
		for ; k < len(d.kept) && d.kept[k].after < t.Seq; k++ {
			blocks = append(blocks, c.keptBlock(d, w, k))
		}
		if d.live != nil && d.live.seq == t.Seq {
			// The running turn: the hub's record of it is pending.
			blocks = append(blocks, renderTurn(d.live.view(), w, d, c.expandThinking, c.liveAnswer(d, w)))
			liveShown = true
			continue
		}
		hint := canRetry && t.Seq == retry.Seq && d.live == nil
		x := withResults(d.extras[t.Seq], t)
		key := renderKey{seq: t.Seq, started: t.Started.UnixNano(), ended: t.Ended.UnixNano(), status: t.Status, width: w, dark: d.th.dark, expand: c.expandThinking, hint: hint, extras: !x.empty()}
		if x != nil {
			key.revealed = x.revealed
		}
		s, ok := c.cache[key]
		if !ok {
			tv := viewOfTurn(t)
			tv.RetryHint = hint
			tv.Extras = x
			s = renderTurn(tv, w, d, c.expandThinking, d.md.render(tv.Answer, w, d.th.dark))
			c.cache[key] = s
		}
		blocks = append(blocks, s)
	}
	for ; k < len(d.kept); k++ {
		blocks = append(blocks, c.keptBlock(d, w, k))
	}
	if d.live != nil && !liveShown {
		blocks = append(blocks, renderTurn(d.live.view(), w, d, c.expandThinking, c.liveAnswer(d, w)))
	}
	if c.failure != "" {
		blocks = append(blocks, fitWidth(d.th.err.Render("✗ ")+clean(c.failure), w))
	}
	if len(blocks) == 0 {
		return c.welcome(d, w)
	}
	return strings.Join(blocks, "\n\n")
}

func (c *chatView) welcome(d drawCtx, w int) string {
	lines := []string{
		"",
		d.th.label.Render("bulkhead") + d.th.dim.Render(" "+d.version),
		"Ask anything; the answer streams here.",
		d.th.dim.Render("enter send · alt+enter new line · ctrl+o chats · ? help"),
	}
	if c.chat.Private {
		lines = append(lines, "", d.th.private.Render(" PRIVATE ")+" "+d.th.dim.Render("nothing of this chat is saved; it is gone when bulkhead exits."))
	}
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return fitWidth(strings.Join(lines, "\n"), w)
}

// liveAnswer renders the running turn's answer, or reuses the last
// rendering when it is fresh enough.
func (c *chatView) liveAnswer(d drawCtx, w int) string {
	src := d.live.answer.String()
	lc := &c.live
	if lc.run == d.live.id && lc.width == w && lc.dark == d.th.dark && lc.out != "" {
		if lc.n == len(src) || d.throttle > 0 && d.now.Sub(lc.at) < d.throttle {
			return lc.out
		}
	}
	out := d.md.render(src, w, d.th.dark)
	*lc = liveCache{run: d.live.id, n: len(src), width: w, dark: d.th.dark, out: out, at: d.now}
	return out
}

// renderTurn draws one turn: the user's words, the thinking line, the
// answer (md, already rendered from Markdown, which cleans it), and a
// marker when it did not finish. Every text of the turn is cleaned: the
// query too, which may be pasted text or come from `ask -`.
func renderTurn(tv turnView, w int, d drawCtx, expand bool, md string) string {
	th := d.th
	var out []string
	query := clean(tv.Query)
	for _, l := range strings.Split(fitWidth(query, max(w-2, 1)), "\n") {
		out = append(out, th.userBar.Render("┃ ")+th.userText.Render(l))
	}
	out = append(out, "")
	app := oneLine(tv.App)
	if app == "" {
		app = "bulkhead"
	}
	label := fitWidth(th.label.Render("◆ "+app), w)
	if tv.Private {
		// Not through fitWidth, which would trim the badge's last cell.
		badge := th.private.Render(" " + privateBadge + " ")
		if ansi.StringWidth(label)+1+ansi.StringWidth(badge) <= w {
			label += " " + badge
		} else {
			label += "\n" + ansi.Truncate(badge, w, "…")
		}
	}
	out = append(out, label)
	if x := tv.Extras; !x.empty() {
		out = append(out, x.lines(th, w, tv.Live)...)
		if len(x.results) > 0 {
			out = append(out, resultsCard(th, x.results, w))
		}
	}
	if tv.Thinking != "" {
		if expand {
			out = append(out, fitWidth(th.thinking.Render("▾ thinking")+th.dim.Render(" · ctrl+t hides"), w))
			for _, l := range strings.Split(fitWidth(clean(tv.Thinking), max(w-2, 1)), "\n") {
				out = append(out, "  "+th.thinking.Render(l))
			}
		} else {
			n := len([]rune(tv.Thinking))
			out = append(out, fitWidth(th.thinking.Render(fmt.Sprintf("▸ thinking… %d chars", n))+th.dim.Render(" · ctrl+t shows"), w))
		}
	}
	if strings.TrimSpace(tv.Answer) != "" {
		out = append(out, md)
	}
	out = append(out, tv.Extras.maskedLines(th, w)...)
	if tv.Live {
		switch {
		case tv.Cancelling:
			out = append(out, fitWidth(th.warn.Render(d.spinner+" cancelling…"), w))
		case tv.Status == memory.StatusPending:
			what := "answering"
			switch {
			case tv.Extras.asking() > 0:
				what = "waiting for your answer"
			case tv.Answer == "":
				what = "waiting for the model"
			}
			out = append(out, fitWidth(th.dim.Render(d.spinner+" "+what+"… · esc cancels"), w))
		}
	}
	if m := marker(tv, th); m != "" {
		out = append(out, fitWidth(m, w))
	}
	return strings.Join(out, "\n")
}

// marker is the one line that says a turn did not finish, and why.
func marker(tv turnView, th theme) string {
	hint := ""
	if tv.RetryHint {
		hint = th.dim.Render(" · ctrl+r retries")
	}
	switch tv.Status {
	case memory.StatusCut:
		return th.warn.Render("✂ cut off") + errSuffix(tv.Error) + hint
	case memory.StatusCancelled:
		return th.warn.Render("■ cancelled") + hint
	case memory.StatusError:
		return th.err.Render("✗ failed") + errSuffix(tv.Error) + hint
	case memory.StatusPending:
		if !tv.Live {
			return th.warn.Render("… never finished") + hint
		}
	}
	return ""
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + oneLine(e)
}
