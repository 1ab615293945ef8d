// Package permissions is the permission manager (ctrl+g, /permissions;
// /log for its second tab): a full screen with two tabs — the broker's
// grants with the config's rules (grants.go), and the action log
// (log.go) — a filter typed after /, a detail pane for the selected row
// (enter gives it the whole screen), revokes after a confirmation (r, R,
// X), the log's export as JSON Lines (e), and ctrl+y for trusted-session
// mode, which the root switches. What it shows comes from the broker
// through Cmds (Loaded); Update and View do no IO.
package permissions

import (
	"errors"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/screens"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Permissions is what the permission manager needs of the broker
// (*perm.Broker satisfies it).
type Permissions interface {
	Grants() []perm.Grant // every grant held, invalid ones flagged
	// RevokeReport and RevokeAllReport revoke, and say which apps'
	// processes held access the grants gave and were stopped.
	RevokeReport(id string) (perm.Revoked, error)
	RevokeAllReport(subject string) (perm.Revoked, error)
	Actions() ([]perm.Entry, error) // the action log, oldest first
	Trusted() bool
	SetTrusted(on bool)
}

// RuleView is one permission rule of the config, as the manager lists it
// (main fills Options.Rules from config.Config.Rules).
type RuleView struct {
	Effect, Kind, Subject, Object, Function string
	Where                                   string // the file and key it came from
}

// Tab is a tab of the permission manager.
type Tab int

const (
	Grants  Tab = iota // grants and config rules (grants.go)
	Log                // the action log (log.go)
	Changes            // change sets that wait for an answer (changes.go)
)

// Config is what the manager reads and where it exports.
type Config struct {
	Broker  Permissions
	Rules   []RuleView
	DataDir string // where e exports the log ("" = the system's temporary folder)
	Vanilla bool   // --vanilla: the second line says what the log holds
	Now     func() time.Time
	// Changes lists and decides the pending change sets; nil: the
	// changes tab says it is not available.
	Changes ChangeSets
}

// Screen is the permission manager's state; the root model routes
// messages to Update while it is open.
type Screen struct {
	c       Config
	th      style.Theme
	width   int                // the terminal's, for the confirmation
	ask     forms.Confirmation // the revoke's confirmation
	tab     Tab
	vanilla bool // --vanilla: the second line says what the log holds
	loaded  bool
	err     string // the broker could not be read
	msg     string // the outcome of the last action
	msgErr  bool
	grants  []perm.Grant
	rules   []RuleView
	log     []logRow // newest first
	trusted bool
	cursor  [3]int // by tab, an index into what the filter lets through
	// pending are the change sets that wait; sets those read for the
	// detail pane (reading the one being read).
	pending []hub.PendingSet
	sets    map[string]setRead
	reading string
	filter  widget.FilterBox
	confirm *revokeAs // a revoke waiting for its confirmation (form)
	full    bool      // the detail pane has the screen
	scroll  int       // its first line then
}

// revokeAs is a revoke — or a change set's accept or discard —
// waiting for its y.
type revokeAs struct {
	question, done string
	ids            []string // the grants to revoke; with all, every one
	all            bool
	set            string // a change set to decide
	accept         bool
}

// New opens the manager on tab, width cells wide; the Cmd reads the
// broker.
func New(th style.Theme, c Config, tab Tab, width int) (*Screen, tea.Cmd) {
	if c.Now == nil {
		c.Now = time.Now
	}
	g := &Screen{c: c, th: th, width: width, tab: tab, rules: c.Rules, vanilla: c.Vanilla, filter: widget.NewFilterBox(th), sets: map[string]setRead{}}
	return g, g.load()
}

// load reads the broker, and the pending change sets.
func (g *Screen) load() tea.Cmd {
	b, c := g.c.Broker, g.c.Changes
	return func() tea.Msg {
		msg := read(b)
		if c != nil {
			msg.pending, msg.pendingErr = c.Changes()
			msg.hasPending = true
		}
		return msg
	}
}

// Loaded is the broker's state, read off the UI loop, and the outcome of
// the action that led to it; the root keeps Trusted and hands the rest to
// Update.
type Loaded struct {
	grants     []perm.Grant
	actions    []perm.Entry
	pending    []hub.PendingSet
	pendingErr error
	hasPending bool // the change sets were read too
	Trusted    bool
	err        error
	msg        string
	msgErr     bool
}

func read(b Permissions) Loaded {
	acts, err := b.Actions()
	return Loaded{grants: b.Grants(), actions: acts, Trusted: b.Trusted(), err: err}
}

// Reload reads the broker and the change sets again (the root asks it
// when a turn decided something while the manager is open).
func (g *Screen) Reload() tea.Cmd { return g.load() }

// revokeCmd revokes, then reads the broker again. A grant gone meanwhile
// (its last use spent it) is not an error.
func revokeCmd(b Permissions, q revokeAs) tea.Cmd {
	return func() tea.Msg {
		var errs []error
		var stopped []string
		if q.all {
			r, err := b.RevokeAllReport("")
			errs, stopped = append(errs, err), append(stopped, r.Stopped...)
		}
		for _, id := range q.ids {
			r, err := b.RevokeReport(id)
			if err != nil && !errors.Is(err, perm.ErrUnknownGrant) {
				errs = append(errs, err)
			}
			stopped = append(stopped, r.Stopped...)
		}
		slices.Sort(stopped)
		msg := read(b)
		msg.msg = q.done + perm.StoppedWords(slices.Compact(stopped))
		if err := errors.Join(errs...); err != nil {
			msg.msg, msg.msgErr = "revoke failed: "+err.Error(), true
		}
		return msg
	}
}

// Update handles one message: a key, the wheel, a paste, a resize, what
// the screen's Cmds read, and the confirmation's own messages.
func (g *Screen) Update(msg tea.Msg) (tea.Cmd, screens.Outcome) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		g.width = msg.Width
	case Loaded:
		g.onLoaded(msg)
		if g.tab == Changes {
			_, cmd := g.selectedSet()
			return cmd, screens.Stay
		}
	case setRead:
		g.sets[msg.id] = msg
		if g.reading == msg.id {
			g.reading = ""
		}
	case Exported:
		g.onExport(msg)
	case tea.KeyPressMsg:
		return g.key(msg)
	case tea.MouseWheelMsg:
		g.wheel(msg)
	case tea.PasteMsg:
		if g.filter.Typing {
			return g.filter.Update(msg), screens.Stay
		}
		if g.ask.Open() {
			return g.formUpdate(msg), screens.Stay
		}
	default:
		if g.ask.Open() {
			return g.formUpdate(msg), screens.Stay
		}
	}
	return nil, screens.Stay
}

// Tab is the tab showing.
func (g *Screen) Tab() Tab { return g.tab }

// SetTrusted shows trusted-session mode as the root switched it, with
// what the switch said.
func (g *Screen) SetTrusted(on bool, said string) {
	g.trusted = on
	g.msg, g.msgErr = said, false
}

func (g *Screen) onLoaded(msg Loaded) {
	g.loaded, g.err = true, ""
	if msg.err != nil {
		g.err = "could not read the action log: " + msg.err.Error()
	}
	g.grants, g.trusted = msg.grants, msg.Trusted
	g.log = logRows(msg.actions)
	if msg.pendingErr != nil && g.err == "" {
		g.err = "could not list the change sets: " + msg.pendingErr.Error()
	}
	if msg.hasPending {
		g.pending, g.sets = msg.pending, map[string]setRead{}
	}
	if msg.msg != "" {
		g.msg, g.msgErr = msg.msg, msg.msgErr
	}
	g.clamp(g.c.Now())
}

// rows is how many rows the current tab lists.
func (g *Screen) rows(now time.Time) int {
	switch g.tab {
	case Grants:
		return len(g.grantItems(now))
	case Changes:
		return len(g.changeItems())
	}
	return len(g.logItems())
}

func (g *Screen) clamp(now time.Time) {
	n := g.rows(now)
	g.cursor[g.tab] = max(min(g.cursor[g.tab], n-1), 0)
}

// key drives the manager. While the filter is typed it takes the keys
// (enter keeps it, esc clears it); an open confirmation takes them too.
func (g *Screen) key(msg tea.KeyPressMsg) (tea.Cmd, screens.Outcome) {
	s := msg.String()
	now := g.c.Now()
	if g.filter.Typing {
		cmd, edited := g.filter.Key(msg)
		if edited {
			g.cursor[g.tab] = 0
			return cmd, screens.Stay
		}
		g.clamp(now)
		return nil, screens.Stay
	}
	if g.ask.Open() {
		return g.formUpdate(msg), screens.Stay
	}
	g.msg = ""
	if g.full {
		if widget.DetailKey(s, &g.scroll) {
			g.full = false
		}
		return nil, screens.Stay
	}
	n := g.rows(now)
	cur := &g.cursor[g.tab]
	switch s {
	case "esc":
		if g.filter.Value() != "" {
			g.filter.Clear()
			g.clamp(now)
			return nil, screens.Stay
		}
		return nil, screens.Close
	case "q", "ctrl+g":
		return nil, screens.Close
	case "tab", "right":
		g.tab = (g.tab + 1) % 3
		g.clamp(now)
	case "shift+tab", "left":
		g.tab = (g.tab + 2) % 3
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
		return g.filter.Start(), screens.Stay
	case "enter":
		if n > 0 {
			g.full, g.scroll = true, 0
		}
	case "ctrl+y":
		return nil, screens.ToggleTrusted
	case "r", "R", "X":
		if g.tab == Grants {
			g.askRevoke(s, now)
			if g.confirm != nil {
				return g.confirmRevoke(), screens.Stay
			}
		}
	case "e":
		if g.tab == Log {
			return exportLog(g.logItems(), g.c.DataDir, now), screens.Stay
		}
	case "a", "d":
		if g.tab == Changes {
			return g.askDecide(s), screens.Stay
		}
	}
	if g.tab == Changes {
		_, cmd := g.selectedSet()
		return cmd, screens.Stay
	}
	return nil, screens.Stay
}

// wheel moves the cursor, or scrolls the full detail pane.
func (g *Screen) wheel(msg tea.MouseWheelMsg) {
	d := 1
	if msg.Button == tea.MouseWheelUp {
		d = -1
	}
	if g.full {
		g.scroll = max(g.scroll+d, 0)
		return
	}
	g.cursor[g.tab] = max(min(g.cursor[g.tab]+d, g.rows(g.c.Now())-1), 0)
}

// keysHelp is the footer of the tab showing, in few words when narrow.
func (g *Screen) keysHelp(w int) string {
	var long, short string
	switch {
	case g.filter.Typing:
		return "type to filter · enter keep · esc clear"
	case g.full:
		return "↑/↓ pgup/pgdn scroll · enter/esc back"
	case g.tab == Grants:
		long = "↑/↓ move · / filter · r revoke · R revoke all of its app · X revoke all · enter detail · tab action log · ctrl+y trusted · esc close"
		short = "/ filter · r revoke · R all of app · X all · enter detail · tab log · esc close"
	case g.tab == Changes:
		long = "↑/↓ move · / filter · a apply the set · d discard it · enter detail (its diffs) · tab grants · esc close"
		short = "a apply · d discard · enter detail · tab grants · esc close"
	default:
		long = "↑/↓ move · / search · e export JSON Lines · enter detail · tab grants · ctrl+y trusted · esc close"
		short = "/ search · e export · enter detail · tab grants · ctrl+y trusted · esc close"
	}
	if len([]rune(long)) < w {
		return long
	}
	return short
}

// View draws the manager in w by h cells.
func (g *Screen) View(th style.Theme, w, h int, now time.Time) string {
	confirmView := g.ask.View()
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
	tabs := []string{count("Grants", shown, len(g.grants)), count("Action log", len(g.logItems()), len(g.log)), count("Changes", len(g.changeItems()), len(g.pending))}
	badge := th.Dim.Render("trusted session off ")
	if g.trusted {
		badge = th.TrustedBadge().Render(" TRUSTED SESSION ")
	}
	title := widget.TitleBar(th, w, "Permissions", tabs, int(g.tab), badge)

	second := th.Dim.Render(" Every grant (this session's and permanent), then the rules of your config.")
	switch g.tab {
	case Log:
		second = th.Dim.Render(" Every request, its decision and who decided; notes of the hub. Newest first.")
	case Changes:
		second = th.Dim.Render(" What apps wrote in your folders and you have not answered: nothing of it is there until you apply it.")
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
	switch g.tab {
	case Grants:
		head, list, detail, label = g.grantsBody(th, w, lay, now, grants)
	case Changes:
		head, list, detail, label = g.changesBody(th, w, lay, now)
	default:
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
func appOf(g perm.Grant) string {
	if g.Subject == "hub" || g.Subject == "" {
		return g.Object
	}
	return g.Subject
}

// involves reports whether grant g concerns app.
func involves(g perm.Grant, app string) bool {
	return app != "" && (g.Subject == app || g.Object == app)
}

// confirmRevoke asks the pending revoke as a huh confirmation in the
// footer: y or enter on Revoke revokes, n, esc or Keep keep.
func (g *Screen) confirmRevoke() tea.Cmd {
	return g.ask.Ask(g.th, g.confirm.question, "Revoke", "Keep", g.width-2)
}

// formUpdate gives msg to the confirmation and acts on its answer.
func (g *Screen) formUpdate(msg tea.Msg) tea.Cmd {
	cmd, done, yes := g.ask.Update(msg)
	if !done {
		return cmd
	}
	return tea.Batch(cmd, g.answer(yes))
}

// answer ends the confirmation: revoke, or say nothing was.
func (g *Screen) answer(revoke bool) tea.Cmd {
	q := g.confirm
	g.ask.Close()
	g.confirm = nil
	switch {
	case revoke && q != nil && q.set != "":
		return decideCmd(g.c.Broker, g.c.Changes, q.set, q.accept)
	case revoke && q != nil:
		return revokeCmd(g.c.Broker, *q)
	case q != nil && q.set != "":
		g.msg, g.msgErr = "nothing changed", false
		return nil
	}
	g.msg, g.msgErr = "nothing revoked", false
	return nil
}

// Leave ends an open confirmation as esc would: a dialog's form is about
// to take the keys.
func (g *Screen) Leave() tea.Cmd {
	if !g.ask.Open() {
		return nil
	}
	return g.answer(false)
}
