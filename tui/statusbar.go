package tui

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/tui/chat"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// ollamaPoll is how often the status bar asks Ollama for its version;
// listingPoll how often while an MCP server is being listed, so that
// its state and time show as they change.
const (
	ollamaPoll  = 10 * time.Second
	listingPoll = time.Second
)

// listingBackend is a Backend that names the MCP servers being listed
// in the background, with since when, and those that could not be
// started or listed (*serve.Client).
type listingBackend interface {
	ListingState() (listing map[string]time.Time, failed []string)
}

// listings are the MCP servers of the session's apps being listed (their
// servers starting), with since when, and those whose start or listing
// failed, sorted.
type listings struct {
	since  map[string]time.Time
	failed []string
}

// ollamaState is what the status bar knows of the Ollama server.
type ollamaState struct {
	checked bool
	version string
	err     error
}

// healthMsg is the answer to one check: Ollama's version (when the UI
// has an Ollama) and which spokes the hub has working.
type healthMsg struct {
	checked bool
	version string
	err     error
	working []string
	// background is how many model calls the memory upkeep and the seats
	// have made in this process (hub.Operator.BackgroundCalls), when the
	// backend says.
	background int64
	// listing are the MCP servers being listed (their servers starting),
	// with since when, and those that failed, when the backend says.
	listing listings
}

// poll is when to check again.
func (h healthMsg) poll() time.Duration {
	if len(h.listing.since) > 0 {
		return listingPoll
	}
	return ollamaPoll
}

// backgroundCounter is a Backend that counts the model calls it makes
// apart from turns (*hub.Operator does).
type backgroundCounter interface{ BackgroundCalls() int64 }

// pollMsg asks for the next check.
type pollMsg struct{}

// checkHealth asks the server for its version and the hub which spokes
// work, off the UI loop.
func checkHealth(base context.Context, o Ollama, b Backend) tea.Cmd {
	return func() tea.Msg {
		msg := healthMsg{working: b.Working()}
		if bc, ok := b.(backgroundCounter); ok {
			msg.background = bc.BackgroundCalls()
		}
		if lb, ok := b.(listingBackend); ok {
			msg.listing.since, msg.listing.failed = lb.ListingState()
		}
		if o != nil {
			ctx, cancel := context.WithTimeout(base, 3*time.Second)
			defer cancel()
			msg.checked = true
			msg.version, msg.err = o.Version(ctx)
		}
		return msg
	}
}

// statusBar draws the bottom line: privacy, Ollama, models, working
// spokes, chat title and a key hint. When the line is too wide the title
// is shortened first, then whole segments go, least useful first.
type statusBar struct {
	hubModel, spokeModel string
	ollama               ollamaState
	hasOllama            bool
	working              map[string]bool
	vanilla              bool // --vanilla: the unsafe baseline
	waiting              int  // permission requests waiting behind the dialog
	trusted              bool // trusted-session mode is on
	// background is the memory upkeep's call count at the last check
	// (-1 before the first); memoryMoved: it grew at that check, so the
	// upkeep made calls in the last poll interval.
	background  int64
	memoryMoved bool
	// listing are the MCP servers being listed in the background, with
	// since when, and those that failed; now is the time the bar is drawn
	// at.
	listing listings
	now     time.Time
}

// sawBackground takes a check's count of upkeep calls: the bar says the
// memory was updated only when it grew since the check before (the
// first check is the baseline), never a running total that reads as
// work in progress.
func (s *statusBar) sawBackground(n int64) {
	s.memoryMoved = s.background >= 0 && n > s.background
	s.background = n
}

// segment is one part of the status bar; drop orders what goes first
// (higher goes sooner, 0 never).
type segment struct {
	text  string
	style func(string) string
	drop  int
	title bool
}

func (s statusBar) view(th style.Theme, width int, title string, private, running bool) string {
	var segs []segment
	plain := func(st func(...string) string) func(string) string {
		return func(x string) string { return st(x) }
	}
	if s.vanilla {
		segs = append(segs, segment{text: " UNSAFE: vanilla ", style: plain(th.Unsafe.Render)})
	}
	if s.trusted {
		segs = append(segs, segment{text: " TRUSTED ", style: plain(th.TrustedBadge().Render)})
	}
	if s.waiting > 0 {
		segs = append(segs, segment{text: fmt.Sprintf("⚑ %d waiting", s.waiting), style: plain(th.StatusWaiting().Render)})
	}
	if private {
		segs = append(segs, segment{text: " PRIVATE ", style: plain(th.StatusPrivate().Render)})
	}
	switch {
	case !s.hasOllama:
	case !s.ollama.checked:
		segs = append(segs, segment{text: "ollama …", style: plain(th.Status.Render), drop: 1})
	case s.ollama.err != nil:
		segs = append(segs, segment{text: "● ollama down", style: plain(th.StatusDown().Render)})
	default:
		segs = append(segs, segment{text: "● ollama " + widget.OneLine(s.ollama.version), style: plain(th.StatusOK().Render), drop: 1})
	}
	models := s.hubModel
	if s.spokeModel != "" && s.spokeModel != s.hubModel {
		models += " / " + s.spokeModel
	}
	if models != "" {
		segs = append(segs, segment{text: widget.OneLine(models), style: plain(th.Status.Render), drop: 3})
	}
	if l := s.listingWords(); l != "" {
		segs = append(segs, segment{text: l, style: plain(th.Working.Render), drop: 2})
	}
	if f := s.failedWords(); f != "" {
		// Where "⟳ starting" was: the start is over, and failed.
		segs = append(segs, segment{text: f, style: plain(th.StatusDown().Render), drop: 2})
	}
	if w := s.workingApps(); len(w) > 0 {
		segs = append(segs, segment{text: "⚙ " + widget.OneLine(strings.Join(w, ", ")), style: plain(th.Working.Render), drop: 2})
	}
	if s.memoryMoved && !private {
		// The upkeep (summaries, entities) made model calls since the last
		// check; a private chat leaves nothing there, so it says nothing.
		segs = append(segs, segment{text: "↻ memory updated", style: plain(th.StatusSep.Render), drop: 5})
	}
	if title != "" {
		segs = append(segs, segment{text: widget.OneLine(title), style: plain(th.Status.Render), drop: 4, title: true})
	}
	hint := "? help"
	if running {
		hint = "esc cancels · ? help"
	}
	segs = append(segs, segment{text: hint, style: plain(th.StatusSep.Render), drop: 2})

	sep := " │ "
	room := width - 2 // a blank at each end
	total := func() int {
		n := 0
		for i, sg := range segs {
			if i > 0 {
				n += len(sep) - 2 // "│" is one cell
			}
			n += ansi.StringWidth(sg.text)
		}
		return n
	}
	// Shorten the title, then drop segments, least useful first.
	for over := total() - room; over > 0; over = total() - room {
		i := slices.IndexFunc(segs, func(sg segment) bool { return sg.title })
		if i >= 0 && ansi.StringWidth(segs[i].text)-over >= 8 {
			segs[i].text = ansi.Truncate(segs[i].text, ansi.StringWidth(segs[i].text)-over, "…")
			continue
		}
		worst := -1
		for j, sg := range segs {
			if sg.drop > 0 && (worst < 0 || sg.drop > segs[worst].drop) {
				worst = j
			}
		}
		if worst < 0 {
			break
		}
		segs = slices.Delete(segs, worst, worst+1)
	}
	parts := make([]string, len(segs))
	for i, sg := range segs {
		parts[i] = sg.style(sg.text)
	}
	line := th.Status.Render(" ") + strings.Join(parts, th.StatusSep.Render(sep))
	if ansi.StringWidth(line) > width {
		line = ansi.Truncate(line, max(width-1, 0), "") + th.StatusSep.Render("…")
	}
	if pad := width - ansi.StringWidth(line); pad > 0 {
		line += th.Status.Render(strings.Repeat(" ", pad))
	}
	return line
}

// listingWords say which MCP servers are starting to be listed, and
// for how long: "⟳ starting fs 12s".
func (s statusBar) listingWords() string {
	if len(s.listing.since) == 0 {
		return ""
	}
	var out []string
	for _, app := range slices.Sorted(maps.Keys(s.listing.since)) {
		w := widget.OneLine(app)
		if since := s.listing.since[app]; !since.IsZero() && !s.now.IsZero() && s.now.After(since) {
			w += " " + s.now.Sub(since).Truncate(time.Second).String()
		}
		out = append(out, w)
	}
	return "⟳ starting " + strings.Join(out, ", ")
}

// failedWords say which MCP servers of the session's apps could not be
// started or listed, and where to see why: "✗ bad failed to start —
// apps screen (ctrl+a) for why".
func (s statusBar) failedWords() string {
	if len(s.listing.failed) == 0 {
		return ""
	}
	names := make([]string, len(s.listing.failed))
	for i, app := range s.listing.failed {
		names[i] = widget.OneLine(app)
	}
	return "✗ " + strings.Join(names, ", ") + " failed to start — apps screen (ctrl+a) for why"
}

func (s statusBar) workingApps() []string {
	var out []string
	for app, on := range s.working {
		if on {
			out = append(out, chat.AppLabel(app))
		}
	}
	slices.Sort(out)
	return out
}

// title names the chat on screen.
func (m Model) title() string {
	switch {
	case m.chat.Chat.Title != "":
		return m.chat.Chat.Title
	case m.chat.Chat.ID != "" && !m.chat.Loaded:
		return "…"
	case m.run != nil && m.liveHere() != nil:
		return m.run.Query
	case m.chat.Chat.Private:
		return "new private chat"
	default:
		return "new chat"
	}
}

func (m Model) header() string {
	left := m.th.Brand.Render(" bulkhead ") + m.th.Header.Render(" "+widget.OneLine(m.title()))
	right := ""
	if m.opts.Vanilla {
		right = m.th.Unsafe.Render(" UNSAFE: vanilla ")
	}
	if m.chat.Chat.Private {
		right += m.th.Private.Render(" PRIVATE ")
	}
	room := m.width - ansi.StringWidth(right)
	if ansi.StringWidth(left) > room {
		left = ansi.Truncate(left, max(room-1, 0), "") + m.th.Header.Render("…")
	}
	pad := max(m.width-ansi.StringWidth(left)-ansi.StringWidth(right), 0)
	return left + m.th.Header.Render(strings.Repeat(" ", pad)) + right
}

// noticeRows is the most lines a notice takes above the input; a longer
// one is cut there with "…".
const noticeRows = 3

// noticeLines wraps the current notice to the width, at most noticeRows
// lines; nil when there is none.
func (m Model) noticeLines() []string {
	if m.notice == "" {
		return nil
	}
	lines := strings.Split(widget.FitWidth(widget.OneLine(m.notice), max(m.width-5, 1)), "\n")
	if len(lines) > noticeRows {
		lines = lines[:noticeRows]
		last := lines[noticeRows-1]
		lines[noticeRows-1] = ansi.Truncate(last, max(m.width-6, 0), "") + "…"
	}
	return lines
}

// ruleRows is how many lines the rule above the input takes: one, or
// the notice's lines.
func (m Model) ruleRows() int { return max(len(m.noticeLines()), 1) }

// rule is the line above the input; it carries the current notice,
// wrapped over up to noticeRows lines (the conversation gives them up).
func (m Model) rule() string {
	lines := m.noticeLines()
	if len(lines) == 0 {
		return m.th.Rule.Render(strings.Repeat("─", m.width))
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		text := " " + l + " "
		lead := m.th.Rule.Render("──")
		if i > 0 {
			lead = "  "
		}
		rest := max(m.width-2-ansi.StringWidth(text), 0)
		fill := m.th.Rule.Render(strings.Repeat("─", rest))
		if i < len(lines)-1 {
			fill = strings.Repeat(" ", rest)
		}
		out[i] = lead + m.th.Notice.Render(text) + fill
	}
	return strings.Join(out, "\n")
}

// noticeTTL is how long a notice stays: long enough to read it (about a
// word every 300 ms on top of a few seconds), never more than half a
// minute.
func noticeTTL(n string) time.Duration {
	return min(5*time.Second+time.Duration(len(strings.Fields(n)))*300*time.Millisecond, 30*time.Second)
}

// noticeFadeMsg clears the notice it was set for (seq), if that is still
// the one shown.
type noticeFadeMsg struct{ seq int }
