package tui

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// memoryView is the memory screen (ctrl+e, /memory): whose long-term
// memory the data directory holds — the hub first, then every app with
// memory — and, for the selected owner, its summaries (one per chat) and
// entities, and for an app the hub's record of it. Masked text shows as
// masked (memorydetail.go). f forgets the selected owner after a y; /
// filters. What it shows comes from the hub through Cmds (memoryMsg).
type memoryView struct {
	vanilla bool // --vanilla: the second line says how it was written
	owners  []ownerMemory
	titles  map[string]string // chat id → title, for the summaries
	loaded  bool
	err     string // the owners could not be listed
	cursor  int    // an index into what the filter lets through
	msg     string
	msgErr  bool
	filter  widget.FilterBox
	confirm string // the owner whose forgetting waits for its confirmation (a huh form, form.go)
	full    bool   // the detail pane has the screen
	scroll  int
}

// ownerMemory is one owner's memory, or why it could not be read.
type ownerMemory struct {
	hub.OwnerMemory
	err string
}

// memoryMsg answers loadMemory and forgetMemory.
type memoryMsg struct {
	owners []ownerMemory
	titles map[string]string
	err    error
	msg    string
	msgErr bool
}

func readMemory(b Backend) memoryMsg {
	names, err := b.MemoryOwners()
	if err != nil {
		return memoryMsg{err: err}
	}
	msg := memoryMsg{titles: map[string]string{}}
	for _, n := range names {
		om, err := b.Memory(n)
		om.Owner = n
		o := ownerMemory{OwnerMemory: om}
		if err != nil {
			o.err = err.Error()
		}
		msg.owners = append(msg.owners, o)
	}
	if chats, err := b.Chats(); err == nil {
		for _, c := range chats {
			msg.titles[c.ID] = c.Title
		}
	}
	return msg
}

func loadMemory(b Backend) tea.Cmd {
	return func() tea.Msg { return readMemory(b) }
}

// forgetMemory forgets owner, then reads the memory again. An app at work
// (hub.ErrBusy) keeps everything, and the screen says why.
func forgetMemory(b Backend, owner string) tea.Cmd {
	return func() tea.Msg {
		err := b.Forget(owner)
		msg := readMemory(b)
		switch {
		case errors.Is(err, hub.ErrBusy):
			msg.msg, msg.msgErr = fmt.Sprintf("%s is at work now, nothing forgotten — let its turn end (esc in the chat cancels it), then f again", owner), true
		case err != nil:
			msg.msg, msg.msgErr = fmt.Sprintf("could not forget %s: %v", owner, err), true
		case owner == hubOwner:
			msg.msg = "forgot the hub's summaries, entities and records of the apps"
		default:
			msg.msg = "forgot everything " + owner + " remembered, and its own data"
		}
		return msg
	}
}

// hubOwner is the hub's name among the owners.
const hubOwner = "hub"

func (m *Model) openMemory() tea.Cmd {
	m.memv = &memoryView{filter: widget.NewFilterBox(m.th), vanilla: m.opts.Vanilla}
	m.show(overlayMemory)
	return loadMemory(m.b)
}

func (m *Model) closeMemory() {
	m.memv = nil
	m.hide(overlayMemory)
}

func (m *Model) onMemory(msg memoryMsg) {
	v := m.memv
	if v == nil {
		return
	}
	sel := ""
	if o, ok := v.selected(); ok {
		sel = o.Owner
	}
	v.loaded, v.err = true, ""
	if msg.err != nil {
		v.err = "could not read the memory: " + msg.err.Error()
	}
	v.owners, v.titles = msg.owners, msg.titles
	if msg.msg != "" {
		v.msg, v.msgErr = msg.msg, msg.msgErr
	}
	// Stay on the owner that was selected, when it is still there.
	if i := slices.IndexFunc(v.items(), func(o *ownerMemory) bool { return o.Owner == sel }); i >= 0 {
		v.cursor = i
	}
	v.clamp()
}

// items are the owners the filter lets through.
func (v *memoryView) items() []*ownerMemory {
	f := v.filter.Value()
	var out []*ownerMemory
	for i := range v.owners {
		if o := &v.owners[i]; widget.MatchAll(ownerHay(*o, v.titles), f) {
			out = append(out, o)
		}
	}
	return out
}

func (v *memoryView) selected() (*ownerMemory, bool) {
	items := v.items()
	if v.cursor < len(items) {
		return items[v.cursor], true
	}
	return nil, false
}

func (v *memoryView) clamp() {
	v.cursor = max(min(v.cursor, len(v.items())-1), 0)
}

// memoryKey drives the memory screen. While the filter is typed it takes
// the keys (enter keeps it, esc clears it); the y/n question after f
// takes the next key.
func (m *Model) memoryKey(msg tea.KeyPressMsg) tea.Cmd {
	v := m.memv
	if v == nil {
		m.closeMemory()
		return nil
	}
	s := msg.String()
	if v.filter.Typing {
		cmd, edited := v.filter.Key(msg)
		if edited {
			v.cursor = 0
			return cmd
		}
		v.clamp()
		return nil
	}
	if v.confirm != "" && m.formOf(formMemory) != nil {
		return m.formUpdate(msg)
	}
	v.msg = ""
	if s == "f" {
		if o, ok := v.selected(); ok {
			v.confirm = o.Owner
			return m.confirmForget()
		}
		return nil
	}
	if v.full {
		switch s {
		case "enter", "esc", "q":
			v.full = false
		case "up", "k":
			v.scroll = max(v.scroll-1, 0)
		case "down", "j":
			v.scroll++
		case "pgup":
			v.scroll = max(v.scroll-10, 0)
		case "pgdown", "space":
			v.scroll += 10
		}
		return nil
	}
	n := len(v.items())
	switch s {
	case "esc":
		if v.filter.Value() != "" {
			v.filter.Clear()
			v.clamp()
			return nil
		}
		m.closeMemory()
	case "q", "ctrl+e":
		m.closeMemory()
	case "up", "k":
		v.cursor = max(v.cursor-1, 0)
	case "down", "j":
		v.cursor = max(min(v.cursor+1, n-1), 0)
	case "home", "g":
		v.cursor = 0
	case "end", "G":
		v.cursor = max(n-1, 0)
	case "/":
		return v.filter.Start()
	case "enter":
		if n > 0 {
			v.full, v.scroll = true, 0
		}
	case "r":
		return loadMemory(m.b)
	}
	return nil
}

// memoryWheel moves the cursor, or scrolls the full detail pane.
func (m *Model) memoryWheel(msg tea.MouseWheelMsg) {
	v := m.memv
	if v == nil {
		return
	}
	d := 1
	if msg.Button == tea.MouseWheelUp {
		d = -1
	}
	if v.full {
		v.scroll = max(v.scroll+d, 0)
		return
	}
	v.cursor = max(min(v.cursor+d, len(v.items())-1), 0)
}

// question is the y/n question before forgetting owner, and what goes.
func (v *memoryView) question() (ask, goes string) {
	o := v.confirm
	var om ownerMemory
	for _, x := range v.owners {
		if x.Owner == o {
			om = x
		}
	}
	own := plural(len(om.Summaries), "summary") + ", " + plural(len(om.Entities), "entity")
	if o == hubOwner {
		recs := 0
		for _, x := range v.owners {
			if x.Record != nil {
				recs++
			}
		}
		return "forget everything the hub remembers?",
			fmt.Sprintf("goes: the hub's %s and its records of %s · stays: chats, grants, the action log", own, plural(recs, "app"))
	}
	return fmt.Sprintf("forget everything %s remembers, including its own data?", o),
		fmt.Sprintf("goes: the %s app's log, %s, its own data (notes, mail…), the hub's record of it", o, own)
}

func (v *memoryView) keysHelp(w int) string {
	switch {
	case v.filter.Typing:
		return "type to filter · enter keep · esc clear"
	case v.full:
		return "↑/↓ pgup/pgdn scroll · f forget · enter/esc back"
	}
	long := "↑/↓ move · / filter · f forget · enter detail · r reload · esc close"
	if len([]rune(long)) < w {
		return long
	}
	return "/ filter · f forget · enter detail · esc close"
}

// view draws the memory screen in w by h cells.
func (v *memoryView) view(th style.Theme, w, h int, now time.Time, confirmView string) string {
	items := v.items()
	count := plural(len(v.owners), "owner")
	if v.filter.Value() != "" {
		count = fmt.Sprintf("%d of %s", len(items), count)
	}
	right := ""
	if w >= 100 {
		right = th.Dim.Render("private chats and queries leave nothing here ")
	}
	title := widget.TitleBar(th, w, "Memory", []string{count}, -1, right)
	second := th.Dim.Render(" What the hub and each app remember: a summary of each chat, and facts.")
	if v.vanilla {
		second = th.Unsafe.Render(" UNSAFE: vanilla ") + th.Dim.Render(" one model with every app writes here: what an app's output said can land in any app's memory.")
	}
	ask := ""
	switch {
	case v.confirm != "":
		var goes string
		ask, goes = v.question()
		second = th.Warn.Render(" " + goes)
	case v.filter.Line(w) != "":
		second = v.filter.Line(w)
	}
	second = widget.FitLines([]string{second}, w, 1)[0]

	lay := widget.SplitScreen(h, v.full)
	cells := make([][]widget.Cell, len(items))
	for i, o := range items {
		cells[i] = ownerCells(th, *o, now)
	}
	widths := widget.FitColumns(memCols, w-2, cells)
	head := []string{widget.TableHead(th, memCols, widths, w)}
	var list []string
	first := widget.Window(len(items), lay.List, v.cursor)
	for i := first; i < len(items) && i < first+max(lay.List, 1); i++ {
		list = append(list, widget.TableRow(th, cells[i], widths, w, i == v.cursor))
	}
	switch {
	case !v.loaded:
		list = []string{th.Dim.Render("  loading…")}
	case len(items) == 0 && v.filter.Value() != "":
		list = []string{th.Dim.Render("  nothing remembered matches the filter")}
	}
	var pane []string
	if o, ok := v.selected(); ok && v.loaded {
		detail := memDetail(th, *o, v.titles, v.filter.Value(), w-1, now)
		if v.full {
			v.scroll = max(min(v.scroll, len(detail)-lay.Detail), 0)
			detail = detail[v.scroll:]
			head, list = []string{widget.PaneRule(th, w, o.Owner)}, nil
		} else if lay.Detail > 0 {
			pane = []string{widget.PaneRule(th, w, o.Owner)}
		}
		if lay.Detail > 0 {
			pane = append(pane, widget.FitLines(detail, w, lay.Detail)...)
		}
	}
	if !v.full {
		list = widget.FitLines(list, w, lay.List)
	}
	msg, st := v.msg, th.OK
	switch {
	case ask != "" && confirmView != "":
		// The huh confirmation, drawn whole: footer would cut its buttons.
		return widget.Screen(w, h, []string{title, second}, head, list, pane, []string{" " + confirmView})
	case ask != "":
		msg, st = ask, th.Err
	case v.msgErr:
		st = th.Err
	case msg == "" && v.err != "":
		msg, st = v.err, th.Err
	}
	return widget.Screen(w, h, []string{title, second}, head, list, pane, []string{widget.Footer(th, w, v.keysHelp(w), msg, st)})
}

// confirmForget asks whether to forget the memory screen's pending owner,
// as a huh confirmation in its footer (what goes is said above it).
func (m *Model) confirmForget() tea.Cmd {
	v := m.memv
	ask, _ := v.question()
	owner := v.confirm
	yes := false
	f := confirmField(ask, "Forget", "Keep", m.width-2, &yes)
	return m.openForm(formMemory, m.width-2, func(m *Model, completed bool) tea.Cmd {
		v := m.memv
		if v == nil {
			return nil
		}
		v.confirm = ""
		if completed && yes {
			v.msg, v.msgErr = "forgetting "+owner+"…", false
			return forgetMemory(m.b, owner)
		}
		v.msg, v.msgErr = "nothing forgotten", false
		return nil
	}, f)
}
