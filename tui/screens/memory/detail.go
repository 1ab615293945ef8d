package memory

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The memory screen's table rows, and its detail pane: one owner's
// summaries and entities, and for an app the hub's record of it. Text the
// hub masked before it stored it (a marker: "[masked: overrides
// instructions]", or an earlier version's "[masked: instruction-like
// text]"; guard.Markers finds both) is drawn in amber, so it reads as a
// mask, not as something the app said.

var memCols = []widget.Column{
	{Title: "OWNER", Min: 10, Max: 24},
	{Title: "SUMMARIES", Min: 9, Max: 9},
	{Title: "ENTITIES", Min: 8, Max: 8},
	{Title: "MASKED", Min: 6, Max: 6, Drop: 1},
	{Title: "UPDATED", Min: 8, Max: 12, Drop: 3},
	{Title: "THE HUB'S RECORD", Min: 16, Drop: 2},
}

// ownerCells is one owner's row: what it holds, how much of it is masked,
// when it last changed, and what the hub keeps of an app.
func ownerCells(th style.Theme, o ownerMemory, now time.Time) []widget.Cell {
	count := func(n int) widget.Cell {
		if n == 0 {
			return widget.Cell{Text: "0", St: th.Dim}
		}
		return widget.PlainCell(fmt.Sprint(n))
	}
	masked := widget.Cell{Text: "—", St: th.Dim}
	if n := maskedCount(o.OwnerMemory); n > 0 {
		masked = widget.Cell{Text: fmt.Sprint(n), St: th.MaskedText()}
	}
	name := widget.PlainCell(o.Owner)
	if o.Owner == HubOwner {
		name.St = th.Label
	}
	rec := widget.Cell{Text: "— (the hub itself)", St: th.Dim}
	switch {
	case o.err != "":
		name.St = th.Err
		rec = widget.Cell{Text: "could not be read", St: th.Err}
	case o.Record != nil && len(o.Record.Summaries)+len(o.Record.Entities) == 0:
		rec = widget.Cell{Text: "nothing", St: th.Dim}
	case o.Record != nil:
		rec = widget.PlainCell(widget.Plural(len(o.Record.Summaries), "summary") + ", " + widget.Plural(len(o.Record.Entities), "entity"))
	}
	return []widget.Cell{name, count(len(o.Summaries)), count(len(o.Entities)), masked, {Text: widget.Stamp(latest(o.OwnerMemory), now), St: th.Dim}, rec}
}

// latest is when owner's memory last changed.
func latest(o hub.OwnerMemory) time.Time {
	var t time.Time
	for _, s := range o.Summaries {
		if s.Updated.After(t) {
			t = s.Updated
		}
	}
	for _, e := range o.Entities {
		if e.Time.After(t) {
			t = e.Time
		}
	}
	return t
}

// ownerHay is what the filter searches in an owner: its name, its
// summaries and their chats' titles, its entities and the hub's record.
func ownerHay(o ownerMemory, titles map[string]string) string {
	words := []string{o.Owner}
	add := func(m *hub.OwnerMemory) {
		for _, s := range m.Summaries {
			words = append(words, s.Text, titles[s.Chat])
		}
		for _, e := range m.Entities {
			words = append(words, e.Key, e.Value, e.Source)
		}
	}
	add(&o.OwnerMemory)
	if o.Record != nil {
		add(o.Record)
	}
	return strings.ToLower(strings.Join(words, " "))
}

// maskedCount is how many masked spans owner's own memory holds.
func maskedCount(o hub.OwnerMemory) int {
	n := 0
	for _, s := range o.Summaries {
		n += len(guard.Markers(s.Text))
	}
	for _, e := range o.Entities {
		n += len(guard.Markers(e.Value))
	}
	return n
}

// memDetail is everything owner o remembers, as lines at most w wide.
// With a filter that the owner's name does not match, only the summaries
// and entities that match it are listed.
func memDetail(th style.Theme, o ownerMemory, titles map[string]string, filter string, w int, now time.Time) []string {
	var out []string
	add := func(st lipgloss.Style, s string) {
		out = append(out, widget.WrapLines([]widget.Styled{{Text: s, St: st}}, w)...)
	}
	if filter != "" && widget.MatchAll(strings.ToLower(o.Owner), filter) {
		filter = ""
	}
	if o.Owner == HubOwner {
		add(th.Dim, "From your own words and the apps' typed results. Chats and grants are kept apart.")
	} else {
		add(th.Dim, "Written by the "+widget.Clean(o.Owner)+" app's own model from its own log; masked before it was stored.")
	}
	if o.err != "" {
		add(th.Err, "could not be read: "+widget.OneLine(o.err))
	}
	out = append(out, memSection(th, o.OwnerMemory, titles, filter, w, now, "")...)
	if o.Record != nil {
		add(th.Label, "The hub's record of "+widget.Clean(o.Owner))
		add(th.Dim, "What the hub keeps of this app's work, masked; the planner reads none of it.")
		out = append(out, memSection(th, *o.Record, titles, filter, w, now, "  ")...)
	}
	return out
}

// memSection lists m's summaries, then its entities, under indent.
func memSection(th style.Theme, m hub.OwnerMemory, titles map[string]string, filter string, w int, now time.Time, indent string) []string {
	var out []string
	head := func(name string, shown, total int) {
		text := indent + name
		if shown != total {
			text += fmt.Sprintf(" (%d of %d match the filter)", shown, total)
		}
		out = append(out, ansi.Truncate(th.Dim.Bold(true).Render(text), w, "…"))
	}
	var sums []memory.Summary
	for _, s := range m.Summaries {
		if widget.MatchAll(strings.ToLower(s.Text+" "+titles[s.Chat]), filter) {
			sums = append(sums, s)
		}
	}
	head("Summaries", len(sums), len(m.Summaries))
	for _, s := range sums {
		meta := fmt.Sprintf(" · through turn %d", s.Through)
		if s.Model != "" {
			meta += " · by " + s.Model
		}
		meta += " · " + widget.Stamp(s.Updated, now)
		out = append(out, ansi.Truncate(indent+"  ▪ "+chatName(s.Chat, titles)+th.Dim.Render(widget.OneLine(meta)), w, "…"))
		out = append(out, maskWrap(th, s.Text, w, indent+"    ", indent+"    ", lipgloss.NewStyle())...)
	}
	if len(m.Summaries) == 0 {
		out = append(out, th.Dim.Render(indent+"  none yet"))
	}
	var es []memory.Entity
	for _, e := range m.Entities {
		if widget.MatchAll(strings.ToLower(e.Key+" "+e.Value+" "+e.Source), filter) {
			es = append(es, e)
		}
	}
	head("Entities", len(es), len(m.Entities))
	for _, e := range es {
		out = append(out, maskWrap(th, e.Key+" = "+e.Value, w, indent+"  ▪ ", indent+"    ", lipgloss.NewStyle())...)
		meta := []string{"from " + e.Source}
		if e.Source == "" {
			meta[0] = "from an unknown source"
		}
		if e.Chat != "" {
			meta = append(meta, "in "+chatName(e.Chat, titles))
		}
		if e.Model != "" {
			meta = append(meta, "by "+e.Model)
		}
		meta = append(meta, widget.Stamp(e.Time, now))
		if len(e.Labels) > 0 {
			meta = append(meta, "labels "+strings.Join(e.Labels, ", "))
		}
		out = append(out, maskWrap(th, strings.Join(meta, " · "), w, indent+"    ", indent+"      ", th.Dim)...)
	}
	if len(m.Entities) == 0 {
		out = append(out, th.Dim.Render(indent+"  none yet"))
	}
	return out
}

// chatName names a chat by its title, quoted.
func chatName(id string, titles map[string]string) string {
	t, ok := titles[id]
	switch {
	case !ok:
		return "a chat no longer listed (" + widget.OneLine(id) + ")"
	case t == "":
		return "an untitled chat"
	}
	return "“" + widget.OneLine(t) + "”"
}

// maskWrap wraps text (from an app or a model: it is cleaned) to w cells,
// the first line after first and the others after rest, in st; masked
// spans are drawn in the masked style, even when they wrap.
func maskWrap(th style.Theme, text string, w int, first, rest string, st lipgloss.Style) []string {
	type word struct {
		s      string
		masked bool
	}
	var words []word
	add := func(s string, masked bool) {
		for _, f := range strings.Fields(s) {
			words = append(words, word{f, masked})
		}
	}
	t := widget.OneLine(text)
	last := 0
	for _, loc := range guard.Markers(t) {
		add(t[last:loc[0]], false)
		add(t[loc[0]:loc[1]], true)
		last = loc[1]
	}
	add(t[last:], false)

	var out []string
	prefix := first
	var line []word
	n := 0
	flush := func() {
		var b strings.Builder
		b.WriteString(prefix)
		// Runs of masked words are drawn as one span, so a mask reads as
		// one thing, not as words.
		for i := 0; i < len(line); {
			j := i + 1
			for j < len(line) && line[j].masked == line[i].masked {
				j++
			}
			parts := make([]string, 0, j-i)
			for _, wd := range line[i:j] {
				parts = append(parts, wd.s)
			}
			if i > 0 {
				b.WriteString(" ")
			}
			if line[i].masked {
				b.WriteString(th.MaskedText().Render(strings.Join(parts, " ")))
			} else {
				b.WriteString(st.Render(strings.Join(parts, " ")))
			}
			i = j
		}
		out = append(out, ansi.Truncate(b.String(), w, ""))
		line, n, prefix = nil, 0, rest
	}
	room := func() int { return max(w-ansi.StringWidth(prefix), 1) }
	for _, wd := range words {
		for ansi.StringWidth(wd.s) > room() { // a word longer than a line
			if n > 0 {
				flush()
				continue
			}
			head := ansi.Truncate(wd.s, room(), "")
			if head == "" {
				head = string([]rune(wd.s)[:1])
			}
			line = []word{{head, wd.masked}}
			flush()
			wd.s = wd.s[len(head):]
		}
		ww := ansi.StringWidth(wd.s)
		if ww == 0 {
			continue
		}
		if n > 0 && n+1+ww > room() {
			flush()
		}
		if n > 0 {
			n++
		}
		line = append(line, wd)
		n += ww
	}
	if len(line) > 0 || len(out) == 0 {
		flush()
	}
	return out
}
