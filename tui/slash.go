package tui

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/internal/suggest"
	permscreen "github.com/bulkhead-dev/bulkhead/tui/screens/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Slash commands. A message whose first word starts with "/" and holds no
// other "/" is a command attempt: it runs when it names a command, and
// otherwise it is neither sent to the model nor saved — the notice names
// the closest command and the words stay in the input to be fixed
// ("/privte my pin" must not reach anyone). A first word with a second
// "/" (/etc/hosts, //) is a path or text, and is sent as a query.
//
// While the input holds only a command word, a menu above the input lists
// the commands that begin with it: ↑/↓ choose, tab completes the chosen
// one (with a space when it takes an argument), enter runs it (or
// completes one that needs an argument; a whole command word typed runs
// as typed), esc closes the menu until the
// text changes. Every other key goes to the input.

// slashCmd is one command; the menu shows them in this order.
type slashCmd struct {
	name string
	arg  string // how its argument is written; "" when it takes none
	// needsArg: it does nothing without one (enter completes it).
	needsArg bool
	desc     string // our own words, one line
}

var slashCommands = []slashCmd{
	{name: "/help", desc: "keys and commands (? or f1)"},
	{name: "/new", desc: "a new chat (ctrl+n)"},
	{name: "/chats", desc: "the chats kept here (ctrl+o)"},
	{name: "/private", arg: "QUERY", needsArg: true, desc: "one query with no memory in and nothing kept"},
	{name: "/model", arg: "[NAME]", desc: "the installed models, or switch to NAME (remembered for later chats)"},
	{name: "/permissions", desc: "grants, rules and the action log (ctrl+g)"},
	{name: "/grants", desc: "the same as /permissions"},
	{name: "/log", desc: "the action log (ctrl+g, then tab)"},
	{name: "/apps", desc: "the installed apps: enable or disable them (ctrl+a)"},
	{name: "/memory", desc: "what the hub and each app remember (ctrl+e)"},
	{name: "/trusted", desc: "trusted-session mode on or off (ctrl+y)"},
}

// slashNames lists, for the help, the commands its key lines do not
// name already; /model only where models can be switched.
func slashNames(models bool) string {
	var names []string
	for _, c := range slashCommands {
		switch c.name {
		case "/model":
			if models {
				names = append(names, strings.TrimSpace(c.name+" "+c.arg))
			}
		case "/help", "/new", "/chats", "/log":
			names = append(names, strings.TrimSpace(c.name+" "+c.arg))
		}
	}
	return strings.Join(names, " ")
}

func lookupSlash(name string) (slashCmd, bool) {
	for _, c := range slashCommands {
		if c.name == name {
			return c, true
		}
	}
	return slashCmd{}, false
}

// slashWord reads q's command word and what follows it; ok is false when
// q is not a command attempt (no leading "/", or a path).
func slashWord(q string) (word, rest string, ok bool) {
	q = strings.TrimLeftFunc(q, unicode.IsSpace)
	if !strings.HasPrefix(q, "/") {
		return "", "", false
	}
	word = q
	if i := strings.IndexFunc(q, unicode.IsSpace); i >= 0 {
		word, rest = q[:i], strings.TrimSpace(q[i:])
	}
	if strings.Contains(word[1:], "/") {
		return "", "", false
	}
	return word, rest, true
}

// slash handles a message that is a command attempt (send): it runs a
// command, or says why not and keeps the input. It reports false for a
// message that is not one, and for /private, which send asks as a query.
func (m *Model) slash(q string) (tea.Cmd, bool) {
	word, rest, ok := slashWord(q)
	if !ok {
		return nil, false
	}
	c, known := lookupSlash(word)
	switch {
	case !known:
		m.notice = unknownCommand(word)
		return nil, true
	case c.name == "/private":
		return nil, false
	case rest != "" && c.arg == "":
		m.notice = c.name + " takes nothing after it — nothing was sent"
		return nil, true
	}
	m.input.reset()
	m.menu = slashMenu{}
	return m.runSlash(c, rest), true
}

// runSlash runs a known command with its argument.
func (m *Model) runSlash(c slashCmd, arg string) tea.Cmd {
	m.notice = ""
	switch c.name {
	case "/help":
		m.openHelp()
	case "/new":
		return m.newChat(false)
	case "/chats":
		return m.openChats()
	case "/model":
		if arg == "" {
			return m.openModels()
		}
		return m.switchModel(arg)
	case "/permissions", "/grants":
		return m.openManager(permscreen.Grants)
	case "/log":
		return m.openManager(permscreen.Log)
	case "/apps":
		return m.openApps()
	case "/memory":
		return m.openMemory()
	case "/trusted":
		return m.toggleTrusted()
	}
	return nil
}

// unknownCommand is the notice for a command word that names none.
func unknownCommand(word string) string {
	shown := word
	if utf8.RuneCountInString(shown) > 24 {
		shown = string([]rune(shown)[:24]) + "…"
	}
	msg := "unknown command " + shown
	if near := closestCommands(word); len(near) > 0 {
		msg += " — did you mean " + strings.Join(near, " or ") + "?"
	} else {
		msg += " — /help lists the commands"
	}
	return msg + " (nothing was sent)"
}

// closestCommands are the commands word most likely meant: those it
// begins (up to three), else those nearest by edit distance, if near.
func closestCommands(word string) []string {
	if word == "/" {
		return nil
	}
	names := make([]string, len(slashCommands))
	for i, c := range slashCommands {
		names[i] = c.name
	}
	return suggest.Closest(word, names, true)
}

// slashMenu is the command menu's state; what it lists follows from the
// input's text.
type slashMenu struct {
	word      string // the command word sel was chosen for
	sel       int
	dismissed string // esc closed the menu on this text
}

// menuWord is the command word being typed, when the input holds only
// that; "" when the menu has nothing to do, or no room to show.
func (m *Model) menuWord() string {
	if m.overlay != overlayNone || m.width < 20 || m.convHeight() < 3 {
		return ""
	}
	v := m.input.value()
	if !strings.HasPrefix(v, "/") || strings.ContainsFunc(v, unicode.IsSpace) || strings.Contains(v[1:], "/") || v == m.menu.dismissed {
		return ""
	}
	return v
}

// menuItems lists the commands that begin with the word being typed.
func (m *Model) menuItems() (string, []slashCmd) {
	w := m.menuWord()
	if w == "" {
		return "", nil
	}
	var out []slashCmd
	for _, c := range slashCommands {
		if strings.HasPrefix(c.name, w) && (c.name != "/model" || m.opts.Models != nil) {
			out = append(out, c)
		}
	}
	return w, out
}

// menuChoice is the index of the chosen item among n for word w.
func (m *Model) menuChoice(w string, n int) int {
	if m.menu.word != w || m.menu.sel >= n {
		return 0
	}
	return m.menu.sel
}

// menuKey drives the menu while it shows; ok is false for a key it
// leaves to the rest of the UI.
func (m *Model) menuKey(msg tea.KeyPressMsg) (tea.Cmd, bool) {
	w, items := m.menuItems()
	if len(items) == 0 {
		return nil, false
	}
	sel := m.menuChoice(w, len(items))
	switch {
	case msg.String() == "up":
		m.menu.word, m.menu.sel = w, (sel+len(items)-1)%len(items)
	case msg.String() == "down":
		m.menu.word, m.menu.sel = w, (sel+1)%len(items)
	case msg.String() == "tab":
		m.complete(items[sel])
	case key.Matches(msg, m.keys.Send):
		if _, whole := lookupSlash(w); whole {
			return nil, false // a whole command: send runs it
		}
		if items[sel].needsArg {
			m.complete(items[sel])
			return nil, true
		}
		m.input.set(items[sel].name)
		return m.send(), true
	case key.Matches(msg, m.keys.Cancel):
		m.menu.dismissed = m.input.value()
	default:
		return nil, false
	}
	return nil, true
}

// complete puts c in the input, with a space when it takes an argument.
func (m *Model) complete(c slashCmd) {
	v := c.name
	if c.arg != "" {
		v += " "
	}
	m.input.set(v)
	m.menu = slashMenu{}
}

// menuMax is the most commands the menu shows at once.
const menuMax = 8

// withMenu draws the menu over the bottom of the conversation, just above
// the rule, when it shows; top is the screen above the status bar.
func (m Model) withMenu(top string) string {
	w, items := m.menuItems()
	if len(items) == 0 {
		return top
	}
	lines := strings.Split(top, "\n")
	conv := m.convHeight()
	if len(lines) < 1+conv {
		return top
	}
	box := strings.Split(m.menuView(w, items, min(conv, menuMax+3)), "\n")
	at := 1 + conv - len(box)
	if at < 1 {
		return top
	}
	for i, l := range box {
		if pad := m.width - ansi.StringWidth(l); pad > 0 {
			l += strings.Repeat(" ", pad)
		}
		lines[at+i] = l
	}
	return strings.Join(lines, "\n")
}

// menuView is the menu in a frame at most height lines tall: the chosen
// command highlighted, the window scrolled to keep it in sight, and the
// keys on the last line when there is room.
func (m Model) menuView(w string, items []slashCmd, height int) string {
	sel := m.menuChoice(w, len(items))
	rows := max(height-2, 1)
	hint := rows > len(items) || rows > 3
	if hint {
		rows--
	}
	rows = min(rows, len(items))
	first := min(max(sel-rows+1, 0), len(items)-rows)
	width := min(m.width, 76)
	inner := max(width-4, 1)
	nameW := 0
	for _, c := range items {
		nameW = max(nameW, ansi.StringWidth(c.name+" "+c.arg))
	}
	var lines []string
	for i := first; i < first+rows; i++ {
		c := items[i]
		name := strings.TrimSpace(c.name + " " + c.arg)
		line := name + strings.Repeat(" ", nameW-ansi.StringWidth(name)) + "  " + c.desc
		line = ansi.Truncate(line, inner, "…")
		if i == sel {
			lines = append(lines, m.th.Selected.Render(line+strings.Repeat(" ", max(inner-ansi.StringWidth(line), 0))))
			continue
		}
		lines = append(lines, m.th.Key.Render(name)+ansi.Cut(line, ansi.StringWidth(name), inner))
	}
	if hint {
		more := ""
		if len(items) > rows {
			more = fmt.Sprintf(" · %d/%d", sel+1, len(items))
		}
		lines = append(lines, m.th.Dim.Render(ansi.Truncate("↑/↓ choose · tab complete · enter run · esc close"+more, inner, "…")))
	}
	return widget.Box(m.th, lines, width, height)
}
