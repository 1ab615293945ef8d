// Package apps is the apps screen (ctrl+a, /apps): every installed app
// with where it comes from, its functions and their effects, clearance,
// labels, the model its spoke uses, whether a spoke of it works now, and
// what the sandbox of out-of-process apps holds; space enables or
// disables an app, r lists an MCP app's tools again. What it shows comes
// through Cmds (Loaded); Update and View do no IO.
package apps

import (
	"context"
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	appkit "github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/tui/screens"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Installed is the set of installed apps (*apps.Registry satisfies it).
type Installed interface {
	Names() []string
	App(name string) (appkit.App, bool)
}

// AppSwitch enables and disables installed apps (the hub implements it: a
// disabled app's functionalities leave the planner's catalog).
type AppSwitch interface {
	Enabled(app string) bool
	SetEnabled(app string, on bool) error
}

// mcpTools is what an MCP app (*mcp.App) tells of itself.
type mcpTools interface {
	Tools() []mcp.ToolInfo
	Remote() bool
}

// mcpUnlisted is an enabled MCP server bulkhead runs without: it could
// not be started or listed (the serving process's client says so).
type mcpUnlisted interface {
	Unlisted() (why, fix string)
}

// mcpListing is an enabled MCP server being listed in the background
// (its server starting): since when, and whether it is.
type mcpListing interface {
	Listing() (since time.Time, on bool)
}

// relistEvery is how often the screen reads the apps again while a
// server is being listed, so that it shows it installed (or why not)
// once its listing ends.
const relistEvery = time.Second

// mcpRefresher is an MCP app whose tool list can be listed live again
// (*mcp.App): it starts the server, lists and caches its tools.
type mcpRefresher interface {
	Refresh(ctx context.Context) mcp.Refreshed
}

// appInfo is one row of the apps screen, read off the UI loop.
type appInfo struct {
	name   string
	m      appkit.Manifest
	source string // built-in, demo, MCP stdio, MCP http
	where  string // an MCP app's command line or URL
	tools  []mcp.ToolInfo
	model  string
	on     bool
	// unlisted: an MCP server that could not be listed, why and the fix.
	unlisted, fix string
	// listing: it is being listed in the background (its server
	// starting), since since.
	listing bool
	since   time.Time
}

// failed says whether a is an enabled MCP server that could not be
// started or listed (its listing over): enabled, but not running.
func (a appInfo) failed() bool { return a.unlisted != "" && !a.listing }

// Config is where the screen reads the apps from and what it may do.
type Config struct {
	Registry Installed // the installed apps (nil: none listed)
	// Sandbox is what a probe of the sandbox of out-of-process apps found
	// (the serving process's; called off the UI loop); nil: not shown.
	Sandbox func() sandbox.Report
	// Apps enables and disables apps; nil: the toggle says it is not
	// available.
	Apps AppSwitch
	// AppModel names the model an app's spoke uses (nil or "": the
	// manifest's, else SpokeModel).
	AppModel   func(app string) string
	AppSource  map[string]string // where each MCP app runs: its command line or URL
	SpokeModel string
	// Working names the apps a spoke of which works now.
	Working func() []string
}

// Screen is the apps screen's state; the root model routes messages to
// Update while it is open.
type Screen struct {
	c    Config
	list []appInfo
	// sandbox is what the serving process's probe of the sandbox found
	// (nil until it answers, or when Options.Sandbox is nil).
	sandbox *sandbox.Report
	loaded  bool
	err     string
	cursor  int
	msg     string
	msgErr  bool
	full    bool
	scroll  int
}

// Loaded answers the screen's reads (at open, after a toggle or a
// refresh); the root hands it to Update, and keeps Working for its
// status bar.
type Loaded struct {
	list    []appInfo
	sandbox *sandbox.Report
	Working []string // the apps a spoke of which works now
	err     error
	msg     string
	msgErr  bool
}

func read(o Config) Loaded {
	var msg Loaded
	if o.Working != nil {
		msg.Working = o.Working()
	}
	if o.Sandbox != nil {
		r := o.Sandbox()
		msg.sandbox = &r
	}
	if o.Registry == nil {
		return msg
	}
	for _, name := range o.Registry.Names() {
		a, ok := o.Registry.App(name)
		if !ok {
			continue
		}
		in := appInfo{name: name, m: a.Manifest(), source: "built-in", on: true}
		if in.m.Demo {
			in.source = "demo"
		}
		if t, ok := a.(mcpTools); ok {
			in.tools, in.source = t.Tools(), "MCP stdio"
			if t.Remote() {
				in.source = "MCP http"
			}
			in.where = o.AppSource[name]
			if u, ok := a.(mcpUnlisted); ok {
				if why, fix := u.Unlisted(); why != "" {
					// Enabled (the config's enable list names it), but not
					// installed: no switch of the hub's says otherwise.
					in.unlisted, in.fix, in.source = why, fix, "MCP · not listed"
				}
			}
			if l, ok := a.(mcpListing); ok {
				if since, on := l.Listing(); on {
					in.listing, in.since, in.source = true, since, "MCP · starting"
				}
			}
		}
		in.model = in.m.Model
		if o.AppModel != nil {
			if md := o.AppModel(name); md != "" {
				in.model = md
			}
		}
		if in.model == "" {
			in.model = o.SpokeModel
		}
		if o.Apps != nil && in.unlisted == "" {
			in.on = o.Apps.Enabled(name)
		}
		msg.list = append(msg.list, in)
	}
	return msg
}

func load(o Config) tea.Cmd {
	return func() tea.Msg { return read(o) }
}

func toggle(o Config, name string, on bool) tea.Cmd {
	return func() tea.Msg {
		err := o.Apps.SetEnabled(name, on)
		msg := read(o)
		switch {
		case err != nil:
			msg.msg, msg.msgErr = fmt.Sprintf("could not %s %s: %v", onOff(on, "enable", "disable"), name, err), true
		default:
			msg.msg = name + onOff(on, " enabled", " disabled: the planner no longer routes to it")
		}
		return msg
	}
}

// refresh lists an MCP app's tools live (off the UI loop: it starts the
// server) and says what changed. fix is how to list an app that is not
// listed ("" for one that is): a failure says it, since the screen has
// no one to ask for the network a first start may need.
func refresh(o Config, name, fix string) tea.Cmd {
	return func() tea.Msg {
		a, _ := o.Registry.App(name)
		r := a.(mcpRefresher).Refresh(context.Background())
		msg := read(o)
		switch {
		case r.Err != nil && fix != "":
			msg.msg, msg.msgErr = fmt.Sprintf("could not list %s: %v — %s", name, r.Err, fix), true
		case r.Err != nil:
			msg.msg, msg.msgErr = fmt.Sprintf("could not refresh %s: %v", name, r.Err), true
		case r.Stale:
			msg.msg = fmt.Sprintf("%s: %s %s lists other tools now (%d); saved, and used from the next request", name, r.Server, r.Version, r.Tools)
		case !r.Cached:
			// A server that was not listed: the serving process installs
			// it at once.
			msg.msg = fmt.Sprintf("%s: %s %s listed, %d tools; installed, and used from the next request", name, r.Server, r.Version, r.Tools)
		case r.Changed:
			msg.msg = fmt.Sprintf("%s: %s %s, %d tools, the same functions; tool list refreshed", name, r.Server, r.Version, r.Tools)
		default:
			msg.msg = fmt.Sprintf("%s: %s %s, %d tools; unchanged", name, r.Server, r.Version, r.Tools)
		}
		return msg
	}
}

func onOff(on bool, yes, no string) string {
	if on {
		return yes
	}
	return no
}

// New opens the screen; the Cmd reads the apps.
func New(c Config) (*Screen, tea.Cmd) {
	return &Screen{c: c}, load(c)
}

// Update handles one message: a key, what the screen's Cmds read. It
// reports screens.Close when the user leaves the screen.
func (v *Screen) Update(msg tea.Msg) (tea.Cmd, screens.Outcome) {
	switch msg := msg.(type) {
	case Loaded:
		v.onLoaded(msg)
		if slices.ContainsFunc(v.list, func(a appInfo) bool { return a.listing }) {
			// Read again (off the UI loop) until no listing runs.
			c := v.c
			return tea.Tick(relistEvery, func(time.Time) tea.Msg { return read(c) }), screens.Stay
		}
	case tea.KeyPressMsg:
		return v.key(msg)
	}
	return nil, screens.Stay
}

// Leave has nothing to end: the screen asks no confirmation.
func (v *Screen) Leave() tea.Cmd { return nil }

func (v *Screen) onLoaded(msg Loaded) {
	v.list, v.loaded = msg.list, true
	if msg.sandbox != nil {
		v.sandbox = msg.sandbox
	}
	if msg.msg != "" {
		v.msg, v.msgErr = msg.msg, msg.msgErr
	}
	v.cursor = max(min(v.cursor, len(v.list)-1), 0)
}

// key drives the screen.
func (v *Screen) key(msg tea.KeyPressMsg) (tea.Cmd, screens.Outcome) {
	s := msg.String()
	v.msg = ""
	if v.full {
		if widget.DetailKey(s, &v.scroll) {
			v.full = false
		}
		return nil, screens.Stay
	}
	switch s {
	case "esc", "q", "ctrl+a":
		return nil, screens.Close
	case "up", "k":
		v.cursor = max(v.cursor-1, 0)
	case "down", "j":
		v.cursor = max(min(v.cursor+1, len(v.list)-1), 0)
	case "enter":
		if len(v.list) > 0 {
			v.full, v.scroll = true, 0
		}
	case "space", " ":
		if v.cursor >= len(v.list) {
			return nil, screens.Stay
		}
		if v.c.Apps == nil {
			v.msg, v.msgErr = "enable / disable is not available in this build", true
			return nil, screens.Stay
		}
		a := v.list[v.cursor]
		if a.unlisted != "" {
			// Not installed: there is no app to switch until it is listed.
			v.msg, v.msgErr = fmt.Sprintf("%s is not listed, so there is nothing to enable yet: r lists it here when its server needs no network to start; else %s", a.name, listFix(a)), true
			return nil, screens.Stay
		}
		return toggle(v.c, a.name, !a.on), screens.Stay
	case "r":
		if v.cursor >= len(v.list) || !v.refreshable() {
			v.msg, v.msgErr = "r lists an MCP app's tools again; this app has no server", true
			return nil, screens.Stay
		}
		a := v.list[v.cursor]
		v.msg, v.msgErr = "listing "+a.name+"'s tools (the server starts)…", false
		if a.unlisted != "" {
			v.msg = "listing " + a.name + "'s tools (the server starts, with no network: none can be asked for here)…"
		}
		fix := ""
		if a.unlisted != "" {
			fix = listFix(a)
		}
		return refresh(v.c, a.name, fix), screens.Stay
	}
	return nil, screens.Stay
}

// listFix is how to list an app that is not listed: the serving
// process's fix, or the command every such server takes.
func listFix(a appInfo) string {
	if a.fix != "" {
		return a.fix
	}
	return fmt.Sprintf("run `bulkhead mcp add %s` on a terminal (it asks for the network the server needs)", a.name)
}

// refreshable reports whether the selected app is an MCP app that r can
// refresh.
func (v *Screen) refreshable() bool {
	if v.cursor >= len(v.list) || v.c.Registry == nil {
		return false
	}
	a, _ := v.c.Registry.App(v.list[v.cursor].name)
	_, ok := a.(mcpRefresher)
	return ok
}
