package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
)

// chatList is the chats overlay: every chat, newest first (the hub's
// order), private ones marked, with a y/n confirm before a delete.
type chatList struct {
	chats   []hub.Chat
	loading bool
	err     string
	cursor  int
	// confirmView is the huh confirmation ("delete …?") drawn in the
	// list's foot while it asks (form.go); the Model sets it.
	confirmView string
	current     string // the chat on screen, marked in the list
}

func (l *chatList) move(d int) {
	if len(l.chats) == 0 {
		l.cursor = 0
		return
	}
	l.cursor = (l.cursor + d + len(l.chats)) % len(l.chats)
}

func (l *chatList) selected() (hub.Chat, bool) {
	if l.cursor < 0 || l.cursor >= len(l.chats) {
		return hub.Chat{}, false
	}
	return l.chats[l.cursor], true
}

// setChats replaces the list, keeping the cursor on the same chat when it
// is still there.
func (l *chatList) setChats(chats []hub.Chat) {
	prev, had := l.selected()
	l.chats, l.loading, l.err = chats, false, ""
	l.cursor = 0
	for i, c := range chats {
		if (had && c.ID == prev.ID) || (!had && c.ID == l.current) {
			l.cursor = i
		}
	}
}

// view draws the list inside a box at most width wide and height tall.
func (l chatList) view(th theme, width, height int, now time.Time) string {
	inner := max(width-4, 1)   // border and padding
	rows := max(height-2-3, 1) // border, title, blank, help line
	var body []string
	switch {
	case l.loading:
		body = append(body, th.dim.Render("loading…"))
	case l.err != "":
		body = append(body, th.err.Render("✗ ")+oneLine(l.err))
	case len(l.chats) == 0:
		body = append(body, th.dim.Render("no chats yet — n starts one"))
	default:
		first := 0
		if l.cursor >= rows {
			first = l.cursor - rows + 1
		}
		for i := first; i < len(l.chats) && i < first+rows; i++ {
			body = append(body, l.row(th, l.chats[i], i == l.cursor, inner, now))
		}
	}
	foot := th.dim.Render(listHelp)
	if l.confirmView != "" {
		foot = l.confirmView
	}
	content := []string{th.boxTitle.Render("Chats"), ""}
	content = append(content, body...)
	content = append(content, "", foot)
	return box(th, content, width, height)
}

func (l chatList) row(th theme, c hub.Chat, sel bool, inner int, now time.Time) string {
	mark := "  "
	if c.ID == l.current {
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
		return th.selected.Render(ansi.Truncate(line, inner, ""))
	}
	if c.Private {
		return ansi.Truncate(mark+title+th.private.Render(tag)+strings.Repeat(" ", pad)+th.dim.Render(age), inner, "")
	}
	return ansi.Truncate(mark+title+strings.Repeat(" ", pad)+th.dim.Render(age), inner, "")
}

func titleOf(c hub.Chat) string {
	if strings.TrimSpace(c.Title) == "" {
		return "(untitled)"
	}
	return oneLine(c.Title)
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
	switch s {
	case "esc", "ctrl+o", "q":
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
	f := confirmField("delete “"+titleOf(c)+"”?", "Delete", "Keep", dialogWidth(m.width)-4, &yes)
	id := c.ID
	return m.openForm(formChats, dialogWidth(m.width)-4, func(m *Model, completed bool) tea.Cmd {
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
