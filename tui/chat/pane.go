package chat

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Pane is the conversation pane: the current chat, the logged turns
// read so far and the lines on screen. A long chat is read a page at a
// time, newest first (TurnsBefore): turns holds the newest pages, and the
// next older page is asked for when the view nears the first of them
// (frame.go). Each finished turn is rendered once per width and theme
// and kept in a bounded cache; a frame draws only the turns it shows, so
// its cost does not grow with the chat. The running turn is not kept
// here; the root model passes it in when it belongs to this chat.
type Pane struct {
	VID     int      // names this view, so a turn started here finds it again
	Chat    hub.Chat // ID is empty until the first send creates the chat
	Loaded  bool     // turns reflect the hub's log for chat.ID
	Turns   []hub.Turn
	Older   bool   // the log holds turns before turns[0], not read yet
	Paging  bool   // the page before turns[0] is being read
	rev     int    // counts the changes to turns
	Failure string // an error that left no logged turn (the hub refused the request)

	ExpandThinking bool
	width, height  int
	Follow         bool   // stick to the bottom as content grows
	top            anchor // the first line shown, when not following
	cache          renderCache
	live           liveCache
	items          itemList // the blocks of the conversation, in order
	frame          []string // the lines on screen, made by refresh
	pad            padded   // frame padded to the pane
	topItem        int      // the item of the first line on screen
}

// Prompts are the chat's earlier requests as read so far, oldest first,
// without repeats of the one before (for ↑ recall).
func (c *Pane) Prompts() []string {
	var out []string
	for _, t := range c.Turns {
		q := t.Query
		if strings.TrimSpace(q) == "" || len(out) > 0 && out[len(out)-1] == q {
			continue
		}
		out = append(out, q)
	}
	return out
}

// TurnsPage is how many turns are read from a chat's log at a time.
const TurnsPage = 64

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

func NewPane(private bool) Pane {
	return Pane{Chat: hub.Chat{Private: private}, Follow: true}
}

// TurnView is one turn as drawn, logged or live.
type TurnView struct {
	Query, Answer, Thinking string
	// Parts is the answer by its authors (hub.Parts): how it is drawn.
	Parts            hub.Parts
	Status           memory.Status
	Error            string
	App              string
	Live, Cancelling bool
	RetryHint        bool    // this is the turn ctrl+r would retry
	Extras           *Extras // activity and results
	Private          bool    // a private query: badged, kept nowhere
	// Started and Ended bound the turn (Ended zero while it runs);
	// Tokens is what the model wrote (eval tokens, or streamed chunks
	// while it runs).
	Started, Ended time.Time
	Tokens         int
	// Fallback says why the planner's plan was not used ("": it was).
	Fallback string
	// Drafting: the answer shown is the plain model's draft, kept only if
	// the plan is plain chat.
	Drafting bool
	// Doing is what a live turn waits for besides the model: an app's
	// server starting, a tool running and its progress ("": the model).
	Doing string
}

func viewOfTurn(t hub.Turn) TurnView {
	app := t.AnsweredBy()
	tv := TurnView{Query: t.Query, Answer: t.Answer, Parts: t.AnswerParts(), Thinking: t.Thinking, Status: t.Status, Error: t.Error, App: app, Private: t.Private,
		Started: t.Started, Ended: t.Ended, Tokens: t.Usage.EvalTokens}
	if t.Plan != nil && t.Plan.Fallback {
		tv.Fallback = fallbackWords(t.Plan.Reason)
	}
	return tv
}

// AnswerLabel says who writes the answer under it (hub.Author): an app's
// words are never shown as the assistant's. While several apps still
// work, it names them.
func AnswerLabel(by string) string {
	if strings.Contains(by, ", ") {
		return AppLabel(by)
	}
	return hub.Author(by)
}

// AppLabel is how a screen names who answered: an app's own name, or, for
// work no installed app does, words of ours — never the internal names
// (a plain answer is the model's, not "vanilla", which names the unsafe
// baseline mode).
func AppLabel(apps string) string {
	parts := strings.Split(apps, ", ")
	for i, a := range parts {
		switch a {
		case hub.VanillaApp, "":
			parts[i] = "model"
		case hub.SynthesisApp:
			parts[i] = "answer"
		case hub.MonolithApp:
			parts[i] = "vanilla baseline · every app, no isolation"
		}
	}
	return strings.Join(slices.Compact(parts), ", ")
}

// turnMeta is the dim line beside the label: when the turn was asked,
// how long it took (so far, while it runs) and what the model wrote.
func turnMeta(tv TurnView, now time.Time) string {
	if tv.Started.IsZero() {
		return ""
	}
	var parts []string
	st := tv.Started.Local()
	if y, m, d := st.Date(); now.IsZero() || y != now.Year() || m != now.Month() || d != now.Day() {
		parts = append(parts, st.Format("Jan 2 15:04"))
	} else {
		parts = append(parts, st.Format("15:04"))
	}
	end := tv.Ended
	if end.IsZero() && tv.Live {
		end = now
	}
	if !end.IsZero() && end.After(tv.Started) {
		parts = append(parts, elapsed(end.Sub(tv.Started)))
	}
	if tv.Tokens > 0 {
		parts = append(parts, widget.Plural(tv.Tokens, "token"))
	}
	return strings.Join(parts, " · ")
}

// elapsed is a duration as a person reads it: 0.4s, 12s, 3m05s.
func elapsed(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	}
	return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
}

// withResults is the extras to draw with logged turn t: what the UI saw
// of it, and the results card the hub logged when the UI saw none (a turn
// of an earlier session, or run elsewhere).
func withResults(x *Extras, t hub.Turn) *Extras {
	needResults := len(t.Results) > 0 && (x == nil || len(x.results) == 0)
	needActs := len(t.Activity) > 0 && (x == nil || len(x.acts) == 0)
	if !needResults && !needActs {
		return x
	}
	var y Extras
	if x != nil {
		y = *x
	}
	if needResults {
		y.results = t.Results
	}
	if needActs {
		// The hub's log of the turn: a chat reopened, or run in another
		// window, shows its calls and decisions as this one showed them.
		for _, a := range t.Activity {
			y.add(eventOf(a))
		}
	}
	return &y
}

// eventOf is a logged activity as the event it was.
func eventOf(a hub.Activity) hub.Event {
	e := hub.Event{Kind: a.Kind, App: a.App, Function: a.Function, Args: a.Args, Permission: a.Permission, Decision: a.Decision}
	if a.Err != "" {
		e.Err = errors.New(a.Err)
	}
	return e
}

// LastSeq is the number of the chat's last logged turn (0: none).
func (c *Pane) LastSeq() uint64 {
	if len(c.Turns) == 0 {
		return 0
	}
	return c.Turns[len(c.Turns)-1].Seq
}

// RetryTarget is the latest turn read that ended without its answer.
func (c *Pane) RetryTarget() (hub.Turn, bool) {
	for i := len(c.Turns) - 1; i >= 0; i-- {
		if c.Turns[i].Retryable() {
			return c.Turns[i], true
		}
	}
	return hub.Turn{}, false
}

// Upsert puts a turn the hub returned into place (by Seq).
func (c *Pane) Upsert(t hub.Turn) {
	if t.Seq == 0 {
		return
	}
	i, found := slices.BinarySearchFunc(c.Turns, t.Seq, func(x hub.Turn, seq uint64) int { return cmp.Compare(x.Seq, seq) })
	if found {
		c.Turns[i] = t
	} else {
		c.Turns = slices.Insert(c.Turns, i, t)
	}
	c.rev++
}

// SetNewest puts the newest page of the log in place: it replaces the
// turns it covers and keeps the older ones read before, unless the page
// does not reach them (the log grew by more than a page meanwhile).
func (c *Pane) SetNewest(page []hub.Turn, more bool) {
	c.rev++
	if len(page) == 0 {
		c.Turns, c.Older = nil, false
		return
	}
	first := page[0].Seq
	if n := len(c.Turns); n == 0 || c.Turns[n-1].Seq < first {
		c.Turns, c.Older = page, more
		return
	}
	i, _ := slices.BinarySearchFunc(c.Turns, first, func(x hub.Turn, seq uint64) int { return cmp.Compare(x.Seq, seq) })
	if i == 0 {
		c.Older = more
	}
	c.Turns = append(slices.Clip(c.Turns[:i]), page...)
}

// AddOlder puts a page read before turns[0] in front of the turns;
// before is what the page was read before: a page that no longer fits
// (the turns were replaced meanwhile) is dropped.
func (c *Pane) AddOlder(page []hub.Turn, more bool, before uint64) bool {
	if len(c.Turns) == 0 || c.Turns[0].Seq != before {
		return false
	}
	c.rev++
	c.Older = more
	c.Turns = append(slices.Clip(page), c.Turns...)
	return true
}

// SetSize sizes the pane.
func (c *Pane) SetSize(w, h int) {
	c.width, c.height = w, h
}

// Draw is what rendering needs from the root model.
type Draw struct {
	Theme    style.Theme
	MD       *widget.Markdown
	Width    int
	Live     *Live // the running turn, when it belongs to this chat
	Spinner  string
	Version  string
	Now      time.Time
	Throttle time.Duration // least time between renderings of a live answer
	// Extras holds the activity of the turns this UI ran, by turn number
	// (the hub's log does not keep it); nil when there is none.
	Extras map[uint64]*Extras
	// Kept are the private queries asked in this chat (private.go).
	Kept []Kept
	// Vanilla: --Vanilla, the unsafe baseline; the welcome explains it.
	Vanilla bool
}

// vanillaExplained is the first thing --vanilla says.
const vanillaExplained = "--vanilla is the baseline for comparison: one model context holds every app and one memory, nothing is isolated and nothing is asked. Its calls are still logged (ctrl+g). Use it only to see what bulkhead prevents."

func (c *Pane) welcome(d Draw, w int) string {
	lines := []string{
		"",
		d.Theme.Label.Render("bulkhead") + d.Theme.Dim.Render(" "+d.Version),
		"Ask anything; the answer streams here.",
		d.Theme.Dim.Render("enter send · alt+enter new line · ctrl+o chats · ? help"),
	}
	if c.Chat.Private {
		lines = append(lines, "", d.Theme.Private.Render(" PRIVATE ")+" "+d.Theme.Dim.Render("nothing of this chat is saved; it is gone when bulkhead exits."))
	}
	if d.Vanilla {
		lines = append(lines, "", d.Theme.Unsafe.Render(" UNSAFE: vanilla ")+" "+vanillaExplained)
	}
	for i, l := range lines {
		if l != "" {
			lines[i] = "  " + l
		}
	}
	return widget.FitWidth(strings.Join(lines, "\n"), w)
}

// liveAnswer renders the running turn's answer, or reuses the last
// rendering when it is fresh enough.
func (c *Pane) liveAnswer(d Draw, w int) string {
	src := d.Live.Answer.String()
	lc := &c.live
	if lc.run == d.Live.ID && lc.width == w && lc.dark == d.Theme.Dark && lc.out != "" {
		if lc.n == len(src) || d.Throttle > 0 && d.Now.Sub(lc.at) < d.Throttle {
			return lc.out
		}
	}
	out := drawParts(d, d.Live.Parts, w)
	*lc = liveCache{run: d.Live.ID, n: len(src), width: w, dark: d.Theme.Dark, out: out, at: d.Now}
	return out
}

// renderTurn draws one turn: the user's words, the thinking line, the
// answer (md, already rendered from Markdown, which cleans it), and a
// marker when it did not finish. Every text of the turn is cleaned: the
// query too, which may be pasted text or come from `ask -`.
func renderTurn(tv TurnView, w int, d Draw, expand bool, md string) string {
	th := d.Theme
	var out []string
	query := widget.Clean(tv.Query)
	for _, l := range strings.Split(widget.FitWidth(query, max(w-2, 1)), "\n") {
		out = append(out, th.UserBar.Render("┃ ")+th.UserText.Render(l))
	}
	out = append(out, "")
	label := th.Label.Render("◆ " + widget.OneLine(AnswerLabel(tv.App)))
	if !tv.Live {
		if meta := turnMeta(tv, d.Now); meta != "" {
			label += th.Dim.Render(" · " + meta)
		}
	}
	label = widget.FitWidth(label, w)
	if tv.Private {
		// Not through fitWidth, which would trim the badge's last cell.
		badge := th.Private.Render(" " + PrivateBadge + " ")
		if ansi.StringWidth(label)+1+ansi.StringWidth(badge) <= w {
			label += " " + badge
		} else {
			label += "\n" + ansi.Truncate(badge, w, "…")
		}
	}
	out = append(out, label)
	if tv.Fallback != "" {
		out = append(out, widget.FitWidth(th.Warn.Render("⚠ ")+th.Dim.Render(tv.Fallback), w))
	}
	if x := tv.Extras; !x.empty() {
		out = append(out, x.lines(th, w, tv.Live)...)
		if len(x.results) > 0 {
			out = append(out, resultsCard(th, x.results, w))
		}
	}
	if tv.Thinking != "" {
		if expand {
			out = append(out, widget.FitWidth(th.Thinking.Render("▾ thinking")+th.Dim.Render(" · ctrl+t hides"), w))
			for _, l := range strings.Split(widget.FitWidth(widget.Clean(tv.Thinking), max(w-2, 1)), "\n") {
				out = append(out, "  "+th.Thinking.Render(l))
			}
		} else {
			n := len([]rune(tv.Thinking))
			out = append(out, widget.FitWidth(th.Thinking.Render(fmt.Sprintf("▸ thinking… %d chars", n))+th.Dim.Render(" · ctrl+t shows"), w))
		}
	}
	if strings.TrimSpace(tv.Answer) != "" {
		out = append(out, md)
	}
	out = append(out, tv.Extras.maskedLines(th, w)...)
	if tv.Live {
		switch {
		case tv.Cancelling:
			out = append(out, widget.FitWidth(th.Warn.Render(d.Spinner+" cancelling…"), w))
		case tv.Status == memory.StatusPending:
			what := "answering"
			switch {
			case tv.Extras.Asking() > 0:
				what = "waiting for your answer"
			case tv.Doing != "":
				what = widget.OneLine(tv.Doing)
			case tv.Answer == "":
				what = "waiting for the model"
			case tv.Drafting:
				what = "drafting a plain answer while the hub plans"
			}
			line := d.Spinner + " " + what + "…"
			if !tv.Started.IsZero() && d.Now.After(tv.Started) {
				line += " " + elapsed(d.Now.Sub(tv.Started))
				if tv.Tokens > 0 {
					line += " · " + widget.Plural(tv.Tokens, "token")
				}
			}
			out = append(out, widget.FitWidth(th.Dim.Render(line+" · esc cancels"), w))
		}
	}
	if m := marker(tv, th); m != "" {
		out = append(out, widget.FitWidth(m, w))
	}
	return strings.Join(out, "\n")
}

// marker is the one line that says a turn did not finish, and why.
func marker(tv TurnView, th style.Theme) string {
	hint := ""
	if tv.RetryHint {
		hint = th.Dim.Render(" · ctrl+r retries")
	}
	switch tv.Status {
	case memory.StatusCut:
		return th.Warn.Render("✂ cut off") + errSuffix(tv.Error) + hint
	case memory.StatusCancelled:
		return th.Warn.Render("■ cancelled") + hint
	case memory.StatusError:
		return th.Err.Render("✗ failed") + errSuffix(tv.Error) + hint
	case memory.StatusPending:
		if !tv.Live {
			return th.Warn.Render("… never finished") + hint
		}
	}
	return ""
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return ": " + widget.OneLine(e)
}
