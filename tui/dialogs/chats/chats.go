// Package chats is the chats dialog (ctrl+o, /chats): every chat, newest
// first (the hub's order), private ones marked, the one on screen marked
// ●, a / filter over the titles, and a huh confirmation before a delete.
// The rows are a bubbles list (its cursor, paging and filter). enter
// opens a chat, n and p start one, d deletes one; what the user chose is
// the Outcome of Update, which the root acts on. Its data comes through
// Cmds (Loaded, Deleted); Update and View do no IO.
package chats

import (
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Backend is what the dialog needs of the hub (*hub.Operator satisfies it).
type Backend interface {
	Chats() ([]hub.Chat, error)
	DeleteChat(id string) error
}

// Config is what the dialog reads and whom it asks.
type Config struct {
	Backend Backend
	Current string // the chat on screen, marked in the list
	// Folder is the folder this bulkhead works in: a chat started in
	// another shows where (Chat.Folder), and the filter matches folders.
	Folder string
	// Answering names the chat a turn runs in now ("" when none): it is
	// not deleted under the turn.
	Answering func() string
	Width     int // the terminal's, for the confirmation
}

// Dialog is the chats dialog's state; each row is drawn by chatRows.
type Dialog struct {
	c       Config
	th      style.Theme
	lm      list.Model
	loading bool
	err     string
	ask     forms.Confirmation // "delete …?" in the list's foot
	delID   string             // the chat it asks about
}

// Outcome is what the dialog's Update asks of the root: close it, and
// open a chat or start a new one.
type Outcome struct {
	Close   bool
	Open    string // a chat to open (not the one on screen)
	New     bool   // start a new chat
	Private bool   // … a private one
}

// Help is the dialog's own key line.
const Help = "enter open · / filter · n new · p private · d delete · esc close"

// Loaded answers a read of the chats.
type Loaded struct {
	chats []hub.Chat
	err   error
}

// Deleted answers a delete: the root forgets what it kept of the chat
// (and opens a new one when it was on screen), then hands it to Update.
type Deleted struct {
	ID  string
	Err error
}

// New opens the dialog; the Cmd reads the chats.
func New(th style.Theme, c Config) (*Dialog, tea.Cmd) {
	d := &Dialog{c: c, th: th, lm: newList(th), loading: true}
	return d, d.Reload()
}

// Reload reads the chats again (a chat added or deleted elsewhere).
func (d *Dialog) Reload() tea.Cmd {
	b := d.c.Backend
	return func() tea.Msg {
		cs, err := b.Chats()
		return Loaded{chats: cs, err: err}
	}
}

func deleteCmd(b Backend, id string) tea.Cmd {
	return func() tea.Msg { return Deleted{ID: id, Err: b.DeleteChat(id)} }
}

// chatItem is one chat as a list item; it filters by its title and its
// folder.
type chatItem struct{ c hub.Chat }

func (c chatItem) FilterValue() string { return titleOf(c.c) + " " + c.c.Folder }

func newList(th style.Theme) list.Model {
	lm := list.New(nil, chatRows{th: th}, 40, 10)
	lm.SetShowTitle(false)
	lm.SetShowStatusBar(false)
	lm.SetShowHelp(false)
	lm.SetShowPagination(false)
	lm.SetFilteringEnabled(true)
	lm.DisableQuitKeybindings()
	lm.InfiniteScrolling = true
	lm.FilterInput.Prompt = "filter: "
	return lm
}

// Visible are the chats the list shows, in its order (after the filter).
func (l *Dialog) Visible() []hub.Chat {
	items := l.lm.VisibleItems()
	out := make([]hub.Chat, len(items))
	for i, it := range items {
		out[i] = it.(chatItem).c
	}
	return out
}

func (l *Dialog) move(d int) {
	n := len(l.lm.VisibleItems())
	if n == 0 {
		return
	}
	l.lm.Select((l.lm.Index() + d + n) % n)
}

func (l *Dialog) selected() (hub.Chat, bool) {
	it, ok := l.lm.SelectedItem().(chatItem)
	return it.c, ok
}

// setChats replaces the list, keeping the cursor on the same chat when it
// is still there.
func (l *Dialog) setChats(chats []hub.Chat) tea.Cmd {
	prev, had := l.selected()
	items := make([]list.Item, len(chats))
	for i, c := range chats {
		items[i] = chatItem{c}
	}
	cmd := l.lm.SetItems(items) // a kept filter runs again over them
	l.loading, l.err = false, ""
	l.lm.Select(0)
	for i, it := range l.lm.VisibleItems() {
		c := it.(chatItem).c
		if (had && c.ID == prev.ID) || (!had && c.ID == l.c.Current) {
			l.lm.Select(i)
		}
	}
	return cmd
}

// chatRows draws the list's rows: the chat on screen marked ●, private
// ones tagged, the age at the right.
type chatRows struct {
	th      style.Theme
	current string
	folder  string
	now     time.Time
	inner   int
}

func (d chatRows) Height() int                         { return 1 }
func (d chatRows) Spacing() int                        { return 0 }
func (d chatRows) Update(tea.Msg, *list.Model) tea.Cmd { return nil }
func (d chatRows) Render(w io.Writer, m list.Model, index int, it list.Item) {
	c, ok := it.(chatItem)
	if !ok {
		return
	}
	_, _ = io.WriteString(w, chatRow(d.th, c.c, index == m.Index(), d.current, d.folder, d.inner, d.now))
}

// View draws the list inside a box at most width wide and height tall.
func (l *Dialog) View(th style.Theme, width, height int, now time.Time) string {
	inner := max(width-4, 1)   // border and padding
	rows := max(height-2-3, 1) // border, title, blank, help line
	var body []string
	switch {
	case l.loading:
		body = append(body, th.Dim.Render("loading…"))
	case l.err != "":
		body = append(body, th.Err.Render("✗ ")+widget.OneLine(l.err))
	case len(l.lm.Items()) == 0:
		body = append(body, th.Dim.Render("no chats yet — n starts one"))
	default:
		lm := l.lm
		lm.SetDelegate(chatRows{th: th, current: l.c.Current, folder: l.c.Folder, now: now, inner: inner})
		n := len(lm.VisibleItems())
		// The list's filter input shows while it is typed; a filter kept
		// is said on a line of ours.
		lm.SetShowFilter(lm.SettingFilter())
		switch {
		case lm.SettingFilter():
			n += 2 // the input's line and the space under it
		case lm.IsFiltered():
			body = append(body, th.Dim.Render(ansi.Truncate("filter: "+widget.OneLine(lm.FilterValue())+" · esc clears it", inner, "…")))
			rows--
		}
		lm.SetSize(inner, min(max(n, 1), max(rows, 1)))
		body = append(body, strings.Split(strings.TrimRight(lm.View(), "\n"), "\n")...)
		if lm.IsFiltered() && len(lm.VisibleItems()) == 0 {
			body = append(body, th.Dim.Render("no chat title matches"))
		}
	}
	foot := th.Dim.Render(Help)
	if l.ask.Open() {
		foot = l.ask.View()
	}
	content := []string{th.BoxTitle.Render("Chats"), ""}
	content = append(content, body...)
	content = append(content, "", foot)
	return widget.Box(th, content, width, height)
}

// chatRow is one row: the selection marked ▸ (not by colour alone), the
// chat on screen ●, a private one [private], one of another folder with
// its folder.
func chatRow(th style.Theme, c hub.Chat, sel bool, current, folder string, inner int, now time.Time) string {
	mark := "   "
	switch {
	case sel && c.ID == current:
		mark = "▸● "
	case sel:
		mark = "▸  "
	case c.ID == current:
		mark = " ● "
	}
	tag := ""
	if c.Private {
		tag = " [private]"
	}
	if c.Folder != "" && c.Folder != folder {
		tag += " · in " + widget.OneLine(config.ShortHome(c.Folder))
	}
	age := " " + ago(now, c.Updated)
	title := titleOf(c)
	room := inner - ansi.StringWidth(mark) - ansi.StringWidth(tag) - ansi.StringWidth(age)
	if room < 1 {
		age = ""
		room = inner - ansi.StringWidth(mark) - ansi.StringWidth(tag)
	}
	title = ansi.Truncate(title, max(room, 1), "…")
	pad := max(inner-ansi.StringWidth(mark+title+tag+age), 0)
	line := mark + title + tag + strings.Repeat(" ", pad) + age
	if sel {
		return th.Selected.Render(ansi.Truncate(line, inner, ""))
	}
	if c.Private {
		return ansi.Truncate(mark+title+th.Private.Render(tag)+strings.Repeat(" ", pad)+th.Dim.Render(age), inner, "")
	}
	return ansi.Truncate(mark+title+th.Dim.Render(tag)+strings.Repeat(" ", pad)+th.Dim.Render(age), inner, "")
}

func titleOf(c hub.Chat) string {
	if strings.TrimSpace(c.Title) == "" {
		return "(untitled)"
	}
	return widget.OneLine(c.Title)
}

// ago says how long ago t was, coarsely: "now", "5m", "3h", "2d".
func ago(now, t time.Time) string {
	d := now.Sub(t)
	switch {
	case t.IsZero():
		return ""
	case d < time.Minute:
		return "now"
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	default:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	}
}

// Update handles one message: a key, what the Cmds read, the list's
// filter (computed off the loop), and the confirmation's messages.
func (l *Dialog) Update(msg tea.Msg) (tea.Cmd, Outcome) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		l.c.Width = msg.Width
	case Loaded:
		if msg.err != nil {
			l.loading, l.err = false, msg.err.Error()
			return nil, Outcome{}
		}
		return l.setChats(msg.chats), Outcome{}
	case Deleted:
		if msg.Err != nil {
			l.err = msg.Err.Error()
			return nil, Outcome{}
		}
		l.loading = true
		return l.Reload(), Outcome{}
	case list.FilterMatchesMsg:
		var cmd tea.Cmd
		l.lm, cmd = l.lm.Update(msg)
		return cmd, Outcome{}
	case tea.KeyPressMsg:
		return l.key(msg)
	default:
		if l.ask.Open() {
			return l.formUpdate(msg), Outcome{}
		}
	}
	return nil, Outcome{}
}

// SetCurrent marks id as the chat on screen.
func (l *Dialog) SetCurrent(id string) { l.c.Current = id }

// key drives the list.
func (l *Dialog) key(msg tea.KeyPressMsg) (tea.Cmd, Outcome) {
	s := msg.String()
	if l.ask.Open() {
		return l.formUpdate(msg), Outcome{}
	}
	if l.lm.SettingFilter() {
		// Typing the filter: the list's own input takes every key (enter
		// keeps the filter, esc drops it).
		var cmd tea.Cmd
		l.lm, cmd = l.lm.Update(msg)
		return cmd, Outcome{}
	}
	switch s {
	case "/":
		var cmd tea.Cmd
		l.lm, cmd = l.lm.Update(msg)
		return cmd, Outcome{}
	case "esc":
		if l.lm.IsFiltered() {
			l.lm.ResetFilter()
			return nil, Outcome{}
		}
		return nil, Outcome{Close: true}
	case "ctrl+o", "q":
		return nil, Outcome{Close: true}
	case "up", "k", "shift+tab":
		l.move(-1)
	case "down", "j", "tab":
		l.move(1)
	case "enter":
		c, ok := l.selected()
		if !ok {
			return nil, Outcome{}
		}
		if c.ID != l.c.Current {
			return nil, Outcome{Close: true, Open: c.ID}
		}
		return nil, Outcome{Close: true}
	case "n", "ctrl+n":
		return nil, Outcome{Close: true, New: true}
	case "p", "ctrl+p":
		return nil, Outcome{Close: true, New: true, Private: true}
	case "d", "delete":
		c, ok := l.selected()
		if !ok {
			return nil, Outcome{}
		}
		if l.c.Answering != nil && l.c.Answering() == c.ID {
			l.err = "that chat is answering — esc cancels it first"
			return nil, Outcome{}
		}
		l.err = ""
		return l.confirmDelete(c), Outcome{}
	}
	return nil, Outcome{}
}

// confirmDelete asks, in the list's foot, whether to delete c: y or
// enter on Delete deletes it, n, esc or enter on Keep keep it.
func (l *Dialog) confirmDelete(c hub.Chat) tea.Cmd {
	l.delID = c.ID
	return l.ask.Ask(l.th, "delete “"+titleOf(c)+"”?", "Delete", "Keep", widget.DialogWidth(l.c.Width)-4)
}

// formUpdate gives msg to the confirmation and acts on its answer.
func (l *Dialog) formUpdate(msg tea.Msg) tea.Cmd {
	cmd, done, yes := l.ask.Update(msg)
	if done && yes {
		return tea.Batch(cmd, deleteCmd(l.c.Backend, l.delID))
	}
	return cmd
}

// Leave ends an open confirmation as esc would: a dialog's form takes
// the keys.
func (l *Dialog) Leave() tea.Cmd {
	l.ask.Close()
	return nil
}
