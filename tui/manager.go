package tui

import (
	"errors"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Permissions is what the permission manager needs of the broker
// (*permissions.Broker satisfies it).
type Permissions interface {
	Grants() []permissions.Grant // every grant held, invalid ones flagged
	Revoke(id string) error
	RevokeAll(subject string) error
	Actions() ([]permissions.Entry, error) // the action log, oldest first
	Trusted() bool
	SetTrusted(on bool)
}

// RuleView is one permission rule of the config, as the manager lists it
// (main fills Options.Rules from config.Config.Rules).
type RuleView struct {
	Effect, Kind, Subject, Object, Function string
	Where                                   string // the file and key it came from
}

// mgrTab is a tab of the permission manager.
type mgrTab int

const (
	tabGrants mgrTab = iota // grants and config rules (grants.go)
	tabLog                  // the action log (actionlog.go)
)

// manager is the permission manager: a full screen with two tabs, a
// filter typed after /, a detail pane for the selected row (enter gives
// it the whole screen), and y/n questions before a revoke. What it shows
// comes from the broker through Cmds (permsMsg); it does no IO itself.
type manager struct {
	tab     mgrTab
	vanilla bool // --vanilla: the second line says what the log holds
	loaded  bool
	err     string // the broker could not be read
	msg     string // the outcome of the last action
	msgErr  bool
	grants  []permissions.Grant
	rules   []RuleView
	log     []logRow // newest first
	trusted bool
	cursor  [2]int // by tab, an index into what the filter lets through
	filter  widget.FilterBox
	confirm *revokeAs // a revoke waiting for its confirmation (a huh form, form.go)
	full    bool      // the detail pane has the screen
	scroll  int       // its first line then
}

// revokeAs is a revoke waiting for its y.
type revokeAs struct {
	question, done string
	ids            []string // the grants to revoke; with all, every one
	all            bool
}

func newManager(th style.Theme, tab mgrTab, rules []RuleView) *manager {
	return &manager{tab: tab, rules: rules, filter: widget.NewFilterBox(th)}
}

// permsMsg is the broker's state, read off the UI loop, and the outcome
// of the action that led to it.
type permsMsg struct {
	grants  []permissions.Grant
	actions []permissions.Entry
	trusted bool
	err     error
	msg     string
	msgErr  bool
}

func readPerms(b Permissions) permsMsg {
	acts, err := b.Actions()
	return permsMsg{grants: b.Grants(), actions: acts, trusted: b.Trusted(), err: err}
}

func loadPerms(b Permissions) tea.Cmd {
	return func() tea.Msg { return readPerms(b) }
}

// revokeCmd revokes, then reads the broker again. A grant gone meanwhile
// (its last use spent it) is not an error.
func revokeCmd(b Permissions, q revokeAs) tea.Cmd {
	return func() tea.Msg {
		var errs []error
		if q.all {
			errs = append(errs, b.RevokeAll(""))
		}
		for _, id := range q.ids {
			if err := b.Revoke(id); err != nil && !errors.Is(err, permissions.ErrUnknownGrant) {
				errs = append(errs, err)
			}
		}
		msg := readPerms(b)
		msg.msg = q.done
		if err := errors.Join(errs...); err != nil {
			msg.msg, msg.msgErr = "revoke failed: "+err.Error(), true
		}
		return msg
	}
}

// openManager shows the permission manager on tab and reads the broker.
func (m *Model) openManager(tab mgrTab) tea.Cmd {
	if m.opts.Broker == nil {
		m.notice = "the permission manager is not available here"
		return nil
	}
	m.mgr = newManager(m.th, tab, m.opts.Rules)
	m.mgr.vanilla = m.opts.Vanilla
	m.show(overlayManager)
	return loadPerms(m.opts.Broker)
}

func (m *Model) closeManager() {
	m.mgr = nil
	m.hide(overlayManager)
}

func (m *Model) onPerms(msg permsMsg) {
	m.trusted = msg.trusted
	g := m.mgr
	if g == nil {
		return
	}
	g.loaded, g.err = true, ""
	if msg.err != nil {
		g.err = "could not read the action log: " + msg.err.Error()
	}
	g.grants, g.trusted = msg.grants, msg.trusted
	g.log = logRows(msg.actions)
	if msg.msg != "" {
		g.msg, g.msgErr = msg.msg, msg.msgErr
	}
	g.clamp(m.now())
}

// toggleTrusted turns trusted-session mode on or off (ctrl+y, /trusted).
func (m *Model) toggleTrusted() tea.Cmd {
	b := m.opts.Broker
	if b == nil {
		m.notice = "trusted-session mode is not available here"
		return nil
	}
	on := !b.Trusted()
	b.SetTrusted(on)
	m.trusted = on
	m.notice = "trusted session off: every request asks again"
	if on {
		m.notice = "trusted session on: expected, reversible requests no longer ask — ctrl+y ends it"
	}
	if m.mgr != nil {
		m.mgr.trusted = on
		m.mgr.msg, m.mgr.msgErr = m.notice, false
	}
	return nil
}

// rows is how many rows the current tab lists.
func (g *manager) rows(now time.Time) int {
	if g.tab == tabGrants {
		return len(g.grantItems(now))
	}
	return len(g.logItems())
}

func (g *manager) clamp(now time.Time) {
	n := g.rows(now)
	g.cursor[g.tab] = max(min(g.cursor[g.tab], n-1), 0)
}

// managerKey drives the manager. While the filter is typed it takes the
// keys (enter keeps it, esc clears it); a y/n question takes the next key.
func (m *Model) managerKey(msg tea.KeyPressMsg) tea.Cmd {
	g := m.mgr
	if g == nil {
		m.closeManager()
		return nil
	}
	s := msg.String()
	now := m.now()
	if g.filter.Typing {
		cmd, edited := g.filter.Key(msg)
		if edited {
			g.cursor[g.tab] = 0
			return cmd
		}
		g.clamp(now)
		return nil
	}
	if g.confirm != nil && m.formOf(formGrants) != nil {
		return m.formUpdate(msg)
	}
	g.msg = ""
	if g.full {
		switch s {
		case "enter", "esc", "q":
			g.full = false
		case "up", "k":
			g.scroll = max(g.scroll-1, 0)
		case "down", "j":
			g.scroll++
		case "pgup":
			g.scroll = max(g.scroll-10, 0)
		case "pgdown", "space":
			g.scroll += 10
		}
		return nil
	}
	n := g.rows(now)
	cur := &g.cursor[g.tab]
	switch s {
	case "esc":
		if g.filter.Value() != "" {
			g.filter.Clear()
			g.clamp(now)
			return nil
		}
		m.closeManager()
	case "q", "ctrl+g":
		m.closeManager()
	case "tab", "shift+tab", "left", "right":
		g.tab = 1 - g.tab
		g.clamp(now)
	case "up", "k":
		*cur = max(*cur-1, 0)
	case "down", "j":
		*cur = max(min(*cur+1, n-1), 0)
	case "pgup":
		*cur = max(*cur-10, 0)
	case "pgdown":
		*cur = max(min(*cur+10, n-1), 0)
	case "home", "g":
		*cur = 0
	case "end", "G":
		*cur = max(n-1, 0)
	case "/":
		return g.filter.Start()
	case "enter":
		if n > 0 {
			g.full, g.scroll = true, 0
		}
	case "ctrl+y":
		return m.toggleTrusted()
	case "r", "R", "X":
		if g.tab == tabGrants {
			g.askRevoke(s, now)
			if g.confirm != nil {
				return m.confirmRevoke()
			}
		}
	case "e":
		if g.tab == tabLog {
			return exportLog(g.logItems(), m.opts.DataDir, now)
		}
	}
	return nil
}

// managerWheel moves the cursor, or scrolls the full detail pane.
func (m *Model) managerWheel(msg tea.MouseWheelMsg) {
	g := m.mgr
	if g == nil {
		return
	}
	d := 1
	if msg.Button == tea.MouseWheelUp {
		d = -1
	}
	if g.full {
		g.scroll = max(g.scroll+d, 0)
		return
	}
	g.cursor[g.tab] = max(min(g.cursor[g.tab]+d, g.rows(m.now())-1), 0)
}

// keysHelp is the footer of the tab showing, in few words when narrow.
func (g *manager) keysHelp(w int) string {
	var long, short string
	switch {
	case g.filter.Typing:
		return "type to filter · enter keep · esc clear"
	case g.full:
		return "↑/↓ pgup/pgdn scroll · enter/esc back"
	case g.tab == tabGrants:
		long = "↑/↓ move · / filter · r revoke · R revoke all of its app · X revoke all · enter detail · tab action log · ctrl+y trusted · esc close"
		short = "/ filter · r revoke · R all of app · X all · enter detail · tab log · esc close"
	default:
		long = "↑/↓ move · / search · e export JSON Lines · enter detail · tab grants · ctrl+y trusted · esc close"
		short = "/ search · e export · enter detail · tab grants · ctrl+y trusted · esc close"
	}
	if len([]rune(long)) < w {
		return long
	}
	return short
}

// view draws the manager in w by h cells.
func (g *manager) view(th style.Theme, w, h int, now time.Time, confirmView string) string {
	grants := g.grantItems(now)
	count := func(name string, n, total int) string {
		if g.filter.Value() == "" {
			return fmt.Sprintf("%s %d", name, total)
		}
		return fmt.Sprintf("%s %d of %d", name, n, total)
	}
	shown := 0
	for _, it := range grants {
		if it.g != nil {
			shown++
		}
	}
	tabs := []string{count("Grants", shown, len(g.grants)), count("Action log", len(g.logItems()), len(g.log))}
	badge := th.Dim.Render("trusted session off ")
	if g.trusted {
		badge = th.TrustedBadge().Render(" TRUSTED SESSION ")
	}
	title := widget.TitleBar(th, w, "Permissions", tabs, int(g.tab), badge)

	second := th.Dim.Render(" Every grant (this session's and permanent), then the rules of your config.")
	if g.tab == tabLog {
		second = th.Dim.Render(" Every request, its decision and who decided; notes of the hub. Newest first.")
	}
	if g.vanilla {
		second = th.Unsafe.Render(" UNSAFE: vanilla ") + th.Dim.Render(" nothing is asked in this mode: every call it makes is logged here, decided by “vanilla”; grants and rules are not consulted.")
	}
	if f := g.filter.Line(w); f != "" {
		second = f
	}
	second = widget.FitLines([]string{second}, w, 1)[0]

	lay := widget.SplitScreen(h, g.full)
	var head, list, detail []string
	var label string
	if g.tab == tabGrants {
		head, list, detail, label = g.grantsBody(th, w, lay, now, grants)
	} else {
		head, list, detail, label = g.logBody(th, w, lay, now)
	}
	if !g.loaded {
		list = []string{th.Dim.Render("  loading…")}
	}
	var pane []string
	if lay.Detail > 0 {
		if g.full {
			g.scroll = max(min(g.scroll, len(detail)-lay.Detail), 0)
			detail = detail[g.scroll:]
		} else {
			pane = []string{widget.PaneRule(th, w, label)}
		}
		pane = append(pane, widget.FitLines(detail, w, lay.Detail)...)
	}
	if g.full {
		head = []string{widget.PaneRule(th, w, label)}
		list = nil
	} else {
		list = widget.FitLines(list, w, lay.List)
	}
	msg, st := g.msg, th.OK
	switch {
	case g.confirm != nil && confirmView != "":
		// The huh confirmation, drawn whole: footer would cut its buttons.
		return widget.Screen(w, h, []string{title, second}, head, list, pane, []string{" " + confirmView})
	case g.confirm != nil:
		msg, st = g.confirm.question, th.Err
	case g.msgErr:
		st = th.Err
	case msg == "" && g.err != "":
		msg, st = g.err, th.Err
	}
	return widget.Screen(w, h, []string{title, second}, head, list, pane, []string{widget.Footer(th, w, g.keysHelp(w), msg, st)})
}

// appOf is the app a grant is about: who asked, or the app the hub runs
// or shares data with.
func appOf(g permissions.Grant) string {
	if g.Subject == "hub" || g.Subject == "" {
		return g.Object
	}
	return g.Subject
}

// involves reports whether grant g concerns app.
func involves(g permissions.Grant, app string) bool {
	return app != "" && (g.Subject == app || g.Object == app)
}

// confirmRevoke asks the manager's pending revoke as a huh confirmation
// in its footer: y or enter on Revoke revokes, n, esc or Keep keep.
func (m *Model) confirmRevoke() tea.Cmd {
	g := m.mgr
	q := *g.confirm
	yes := false
	f := forms.Confirm(q.question, "Revoke", "Keep", m.width-2, &yes)
	return m.openForm(formGrants, m.width-2, func(m *Model, completed bool) tea.Cmd {
		if m.mgr != nil {
			m.mgr.confirm = nil
		}
		if completed && yes {
			return revokeCmd(m.opts.Broker, q)
		}
		if m.mgr != nil {
			m.mgr.msg, m.mgr.msgErr = "nothing revoked", false
		}
		return nil
	}, f)
}
