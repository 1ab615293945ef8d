package tui

import (
	"fmt"
	"io"
	"strings"
	"time"

	"charm.land/bubbles/v2/list"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// chatList is the chats overlay: every chat, newest first (the hub's
// order), private ones marked, a / filter over the titles, with a huh
// confirmation before a delete. The rows are a bubbles list (its cursor,
// paging and filter); each row is drawn by chatRows.
type chatList struct {
	lm      list.Model
	loading bool
	err     string
	// confirmView is the huh confirmation ("delete …?") drawn in the
	// list's foot while it asks (form.go); the Model sets it.
	confirmView string
	current     string // the chat on screen, marked in the list
}

// chatItem is one chat as a list item; it filters by its title.
type chatItem struct{ c hub.Chat }

func (c chatItem) FilterValue() string { return titleOf(c.c) }

func newChatList(th style.Theme) chatList {
	lm := list.New(nil, chatRows{th: th}, 40, 10)
	lm.SetShowTitle(false)
	lm.SetShowStatusBar(false)
	lm.SetShowHelp(false)
	lm.SetShowPagination(false)
	lm.SetFilteringEnabled(true)
	lm.DisableQuitKeybindings()
	lm.InfiniteScrolling = true
	lm.FilterInput.Prompt = "filter: "
	return chatList{lm: lm}
}

// chats are the chats the list holds, in its order (unfiltered).
func (l *chatList) chats() []hub.Chat {
	items := l.lm.Items()
	out := make([]hub.Chat, len(items))
	for i, it := range items {
		out[i] = it.(chatItem).c
	}
	return out
}

func (l *chatList) move(d int) {
	n := len(l.lm.VisibleItems())
	if n == 0 {
		return
	}
	l.lm.Select((l.lm.Index() + d + n) % n)
}

func (l *chatList) selected() (hub.Chat, bool) {
	it, ok := l.lm.SelectedItem().(chatItem)
	return it.c, ok
}

// setChats replaces the list, keeping the cursor on the same chat when it
// is still there.
func (l *chatList) setChats(chats []hub.Chat) tea.Cmd {
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
		if (had && c.ID == prev.ID) || (!had && c.ID == l.current) {
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
	_, _ = io.WriteString(w, chatRow(d.th, c.c, index == m.Index(), d.current, d.inner, d.now))
}

// view draws the list inside a box at most width wide and height tall.
func (l chatList) view(th style.Theme, width, height int, now time.Time) string {
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
		lm.SetDelegate(chatRows{th: th, current: l.current, now: now, inner: inner})
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
	foot := th.Dim.Render(listHelp)
	if l.confirmView != "" {
		foot = l.confirmView
	}
	content := []string{th.BoxTitle.Render("Chats"), ""}
	content = append(content, body...)
	content = append(content, "", foot)
	return widget.Box(th, content, width, height)
}

func chatRow(th style.Theme, c hub.Chat, sel bool, current string, inner int, now time.Time) string {
	mark := "  "
	if c.ID == current {
		mark = "● "
	}
	tag := ""
	if c.Private {
		tag = " [private]"
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
	return ansi.Truncate(mark+title+strings.Repeat(" ", pad)+th.Dim.Render(age), inner, "")
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

// listKey drives the chats list.
func (m *Model) listKey(msg tea.KeyPressMsg) tea.Cmd {
	l := &m.list
	s := msg.String()
	if m.formOf(formChats) != nil {
		return m.formUpdate(msg)
	}
	if l.lm.SettingFilter() {
		// Typing the filter: the list's own input takes every key (enter
		// keeps the filter, esc drops it).
		var cmd tea.Cmd
		l.lm, cmd = l.lm.Update(msg)
		return cmd
	}
	switch s {
	case "/":
		var cmd tea.Cmd
		l.lm, cmd = l.lm.Update(msg)
		return cmd
	case "esc":
		if l.lm.IsFiltered() {
			l.lm.ResetFilter()
			return nil
		}
		m.overlay = overlayNone
	case "ctrl+o", "q":
		m.overlay = overlayNone
	case "up", "k", "shift+tab":
		l.move(-1)
	case "down", "j", "tab":
		l.move(1)
	case "enter":
		c, ok := l.selected()
		if !ok {
			return nil
		}
		m.overlay = overlayNone
		if c.ID != m.chat.chat.ID {
			return m.switchChat(c.ID)
		}
	case "n", "ctrl+n":
		m.overlay = overlayNone
		m.newChat(false)
	case "p", "ctrl+p":
		m.overlay = overlayNone
		m.newChat(true)
	case "d", "delete":
		c, ok := l.selected()
		if !ok {
			return nil
		}
		if m.run != nil && m.run.chat == c.ID {
			l.err = "that chat is answering — esc cancels it first"
			return nil
		}
		l.err = ""
		return m.confirmDelete(c)
	}
	return nil
}

// confirmDelete asks, in the list's foot, whether to delete c: y or
// enter on Delete deletes it, n, esc or enter on Keep keep it.
func (m *Model) confirmDelete(c hub.Chat) tea.Cmd {
	yes := false
	f := forms.Confirm("delete “"+titleOf(c)+"”?", "Delete", "Keep", widget.DialogWidth(m.width)-4, &yes)
	id := c.ID
	return m.openForm(formChats, widget.DialogWidth(m.width)-4, func(m *Model, completed bool) tea.Cmd {
		if completed && yes {
			return deleteChat(m.b, id)
		}
		return nil
	}, f)
}

func (m *Model) onChatDeleted(msg chatDeletedMsg) tea.Cmd {
	if msg.err != nil {
		m.list.err = msg.err.Error()
		return nil
	}
	delete(m.extras, msg.id)
	delete(m.kept, msg.id)
	if msg.id == m.chat.chat.ID {
		m.newChat(false)
	}
	m.list.current = m.chat.chat.ID
	if m.overlay == overlayChats {
		m.list.loading = true
		return listChats(m.b)
	}
	return nil
}
