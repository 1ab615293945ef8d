// Package memory is the memory screen (ctrl+e, /memory): whose long-term
// memory the data directory holds — the hub first, then every app with
// memory — and, for the selected owner, its summaries (one per chat) and
// entities, and for an app the hub's record of it. Masked text shows as
// masked (detail.go). f forgets the selected owner after a confirmation;
// / filters; r reads it again. What it shows comes from the hub through
// Cmds (Loaded); Update and View do no IO.
package memory

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/screens"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Backend is what the screen needs of the hub (*hub.Operator satisfies it).
type Backend interface {
	MemoryOwners() ([]string, error)
	Memory(owner string) (hub.OwnerMemory, error)
	Forget(owner string) error
	Chats() ([]hub.Chat, error)
}

// Screen is the memory screen's state; the root model routes messages
// to Update while it is open.
type Screen struct {
	b       Backend
	vanilla bool // --vanilla: the second line says how it was written
	width   int  // the terminal's, for the confirmation
	th      style.Theme
	owners  []ownerMemory
	titles  map[string]string // chat id → title, for the summaries
	loaded  bool
	err     string // the owners could not be listed
	cursor  int    // an index into what the filter lets through
	msg     string
	msgErr  bool
	filter  widget.FilterBox
	confirm string             // the owner whose forgetting waits for its confirmation
	ask     forms.Confirmation // that confirmation
	full    bool               // the detail pane has the screen
	scroll  int
}

// New opens the screen width cells wide; the Cmd reads the memory.
func New(th style.Theme, b Backend, vanilla bool, width int) (*Screen, tea.Cmd) {
	s := &Screen{b: b, th: th, vanilla: vanilla, width: width, filter: widget.NewFilterBox(th)}
	return s, load(b)
}

// ownerMemory is one owner's memory, or why it could not be read.
type ownerMemory struct {
	hub.OwnerMemory
	err string
}

// Loaded is the memory read off the UI loop (by New, r and a forget),
// and the outcome of a forget; the root hands it to Update.
type Loaded struct {
	owners []ownerMemory
	titles map[string]string
	err    error
	msg    string
	msgErr bool
}

func read(b Backend) Loaded {
	names, err := b.MemoryOwners()
	if err != nil {
		return Loaded{err: err}
	}
	msg := Loaded{titles: map[string]string{}}
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

func load(b Backend) tea.Cmd {
	return func() tea.Msg { return read(b) }
}

// forgetCmd forgets owner, then reads the memory again. An app at work
// (hub.ErrBusy) keeps everything, and the screen says why.
func forgetCmd(b Backend, owner string) tea.Cmd {
	return func() tea.Msg {
		err := b.Forget(owner)
		msg := read(b)
		switch {
		case errors.Is(err, hub.ErrBusy):
			msg.msg, msg.msgErr = fmt.Sprintf("%s is at work now, nothing forgotten — let its turn end (esc in the chat cancels it), then f again", owner), true
		case err != nil:
			msg.msg, msg.msgErr = fmt.Sprintf("could not forget %s: %v", owner, err), true
		case owner == HubOwner:
			msg.msg = "forgot the hub's summaries, entities and records of the apps"
		default:
			msg.msg = "forgot everything " + owner + " remembered, and its own data"
		}
		return msg
	}
}

// HubOwner is the hub's name among the owners.
const HubOwner = "hub"

// Update handles one message: a key, the wheel, a paste, a resize, what
// the memory Cmds read, and the confirmation's own messages. It reports
// screens.Close when the user leaves the screen.
func (v *Screen) Update(msg tea.Msg) (tea.Cmd, screens.Outcome) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		v.width = msg.Width
	case Loaded:
		v.onLoaded(msg)
	case tea.KeyPressMsg:
		return v.key(msg)
	case tea.MouseWheelMsg:
		v.wheel(msg)
	case tea.PasteMsg:
		if v.filter.Typing {
			return v.filter.Update(msg), screens.Stay
		}
		if v.ask.Open() {
			return v.formUpdate(msg), screens.Stay
		}
	default:
		if v.ask.Open() {
			return v.formUpdate(msg), screens.Stay
		}
	}
	return nil, screens.Stay
}

func (v *Screen) onLoaded(msg Loaded) {
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
func (v *Screen) items() []*ownerMemory {
	f := v.filter.Value()
	var out []*ownerMemory
	for i := range v.owners {
		if o := &v.owners[i]; widget.MatchAll(ownerHay(*o, v.titles), f) {
			out = append(out, o)
		}
	}
	return out
}

func (v *Screen) selected() (*ownerMemory, bool) {
	items := v.items()
	if v.cursor < len(items) {
		return items[v.cursor], true
	}
	return nil, false
}

func (v *Screen) clamp() {
	v.cursor = max(min(v.cursor, len(v.items())-1), 0)
}

// key drives the screen. While the filter is typed it takes the keys
// (enter keeps it, esc clears it); the confirmation after f takes them
// while it is open.
func (v *Screen) key(msg tea.KeyPressMsg) (tea.Cmd, screens.Outcome) {
	s := msg.String()
	if v.filter.Typing {
		cmd, edited := v.filter.Key(msg)
		if edited {
			v.cursor = 0
			return cmd, screens.Stay
		}
		v.clamp()
		return nil, screens.Stay
	}
	if v.ask.Open() {
		return v.formUpdate(msg), screens.Stay
	}
	v.msg = ""
	if s == "f" {
		if o, ok := v.selected(); ok {
			v.confirm = o.Owner
			return v.confirmForget(), screens.Stay
		}
		return nil, screens.Stay
	}
	if v.full {
		if widget.DetailKey(s, &v.scroll) {
			v.full = false
		}
		return nil, screens.Stay
	}
	n := len(v.items())
	switch s {
	case "esc":
		if v.filter.Value() != "" {
			v.filter.Clear()
			v.clamp()
			return nil, screens.Stay
		}
		return nil, screens.Close
	case "q", "ctrl+e":
		return nil, screens.Close
	case "up", "k":
		v.cursor = max(v.cursor-1, 0)
	case "down", "j":
		v.cursor = max(min(v.cursor+1, n-1), 0)
	case "home", "g":
		v.cursor = 0
	case "end", "G":
		v.cursor = max(n-1, 0)
	case "/":
		return v.filter.Start(), screens.Stay
	case "enter":
		if n > 0 {
			v.full, v.scroll = true, 0
		}
	case "r":
		return load(v.b), screens.Stay
	}
	return nil, screens.Stay
}

// wheel moves the cursor, or scrolls the full detail pane.
func (v *Screen) wheel(msg tea.MouseWheelMsg) {
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
func (v *Screen) question() (ask, goes string) {
	o := v.confirm
	var om ownerMemory
	for _, x := range v.owners {
		if x.Owner == o {
			om = x
		}
	}
	own := widget.Plural(len(om.Summaries), "summary") + ", " + widget.Plural(len(om.Entities), "entity")
	if o == HubOwner {
		recs := 0
		for _, x := range v.owners {
			if x.Record != nil {
				recs++
			}
		}
		return "forget everything the hub remembers?",
			fmt.Sprintf("goes: the hub's %s and its records of %s · stays: chats, grants, the action log", own, widget.Plural(recs, "app"))
	}
	return fmt.Sprintf("forget everything %s remembers, including its own data?", o),
		fmt.Sprintf("goes: the %s app's log, %s, its own data (notes, mail…), the hub's record of it", o, own)
}

func (v *Screen) keysHelp(w int) string {
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

// View draws the screen in w by h cells.
func (v *Screen) View(th style.Theme, w, h int, now time.Time) string {
	confirmView := v.ask.View()
	items := v.items()
	count := widget.Plural(len(v.owners), "owner")
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

// confirmForget asks whether to forget the pending owner, as a huh
// confirmation in the footer (what goes is said above it).
func (v *Screen) confirmForget() tea.Cmd {
	q, _ := v.question()
	return v.ask.Ask(v.th, q, "Forget", "Keep", v.width-2)
}

// formUpdate gives msg to the confirmation and acts on its answer.
func (v *Screen) formUpdate(msg tea.Msg) tea.Cmd {
	cmd, done, yes := v.ask.Update(msg)
	if !done {
		return cmd
	}
	return tea.Batch(cmd, v.answer(yes))
}

// answer ends the confirmation: forget the owner, or say nothing went.
func (v *Screen) answer(forget bool) tea.Cmd {
	owner := v.confirm
	v.ask.Close()
	v.confirm = ""
	if forget {
		v.msg, v.msgErr = "forgetting "+owner+"…", false
		return forgetCmd(v.b, owner)
	}
	v.msg, v.msgErr = "nothing forgotten", false
	return nil
}

// Leave ends an open confirmation as esc would: a dialog's form is about
// to take the keys.
func (v *Screen) Leave() tea.Cmd {
	if !v.ask.Open() {
		return nil
	}
	return v.answer(false)
}
