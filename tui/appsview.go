package tui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Installed is the set of installed apps (*apps.Registry satisfies it).
type Installed interface {
	Names() []string
	App(name string) (apps.App, bool)
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

// mcpRefresher is an MCP app whose tool list can be listed live again
// (*mcp.App): it starts the server, lists and caches its tools.
type mcpRefresher interface {
	Refresh(ctx context.Context) mcp.Refreshed
}

// appInfo is one row of the apps screen, read off the UI loop.
type appInfo struct {
	name   string
	m      apps.Manifest
	source string // built-in, demo, MCP stdio, MCP http
	where  string // an MCP app's command line or URL
	tools  []mcp.ToolInfo
	model  string
	on     bool
}

// appsView is the apps screen: every installed app with where it comes
// from, its functions and their effects, clearance, labels, the model its
// spoke uses, whether a spoke of it works now, and space to enable or
// disable it (through Options.Apps).
type appsView struct {
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

// appsMsg answers loadApps and toggleApp.
type appsMsg struct {
	list    []appInfo
	sandbox *sandbox.Report
	working []string
	err     error
	msg     string
	msgErr  bool
}

func readApps(o Options, b Backend) appsMsg {
	var msg appsMsg
	msg.working = b.Working()
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
		if o.Apps != nil {
			in.on = o.Apps.Enabled(name)
		}
		msg.list = append(msg.list, in)
	}
	return msg
}

func loadApps(o Options, b Backend) tea.Cmd {
	return func() tea.Msg { return readApps(o, b) }
}

func toggleApp(o Options, b Backend, name string, on bool) tea.Cmd {
	return func() tea.Msg {
		err := o.Apps.SetEnabled(name, on)
		msg := readApps(o, b)
		switch {
		case err != nil:
			msg.msg, msg.msgErr = fmt.Sprintf("could not %s %s: %v", onOff(on, "enable", "disable"), name, err), true
		default:
			msg.msg = name + onOff(on, " enabled", " disabled: the planner no longer routes to it")
		}
		return msg
	}
}

// refreshApp lists an MCP app's tools live (off the UI loop: it starts the
// server) and says what changed.
func refreshApp(o Options, b Backend, name string) tea.Cmd {
	return func() tea.Msg {
		a, _ := o.Registry.App(name)
		r := a.(mcpRefresher).Refresh(context.Background())
		msg := readApps(o, b)
		switch {
		case r.Err != nil:
			msg.msg, msg.msgErr = fmt.Sprintf("could not refresh %s: %v", name, r.Err), true
		case r.Stale:
			msg.msg = fmt.Sprintf("%s: %s %s lists other tools now (%d); saved — start bulkhead again to use them", name, r.Server, r.Version, r.Tools)
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

func (m *Model) openApps() tea.Cmd {
	m.appsv = &appsView{}
	m.show(overlayApps)
	return loadApps(m.opts, m.b)
}

func (m *Model) closeApps() {
	m.appsv = nil
	m.hide(overlayApps)
}

func (m *Model) onApps(msg appsMsg) {
	if m.run == nil {
		m.bar.working = map[string]bool{}
	}
	for _, a := range msg.working {
		m.bar.working[a] = true
	}
	v := m.appsv
	if v == nil {
		return
	}
	v.list, v.loaded = msg.list, true
	if msg.sandbox != nil {
		v.sandbox = msg.sandbox
	}
	if msg.msg != "" {
		v.msg, v.msgErr = msg.msg, msg.msgErr
	}
	v.cursor = max(min(v.cursor, len(v.list)-1), 0)
}

// appsKey drives the apps screen.
func (m *Model) appsKey(msg tea.KeyPressMsg) tea.Cmd {
	v := m.appsv
	if v == nil {
		m.closeApps()
		return nil
	}
	s := msg.String()
	v.msg = ""
	if v.full {
		switch s {
		case "enter", "esc", "q":
			v.full = false
		case "up", "k":
			v.scroll = max(v.scroll-1, 0)
		case "down", "j":
			v.scroll++
		}
		return nil
	}
	switch s {
	case "esc", "q", "ctrl+a":
		m.closeApps()
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
			return nil
		}
		if m.opts.Apps == nil {
			v.msg, v.msgErr = "enable / disable is not available in this build", true
			return nil
		}
		a := v.list[v.cursor]
		return toggleApp(m.opts, m.b, a.name, !a.on)
	case "r":
		if v.cursor >= len(v.list) || !v.refreshable(m.opts) {
			v.msg, v.msgErr = "r lists an MCP app's tools again; this app has no server", true
			return nil
		}
		name := v.list[v.cursor].name
		v.msg, v.msgErr = "listing "+name+"'s tools (the server starts)…", false
		return refreshApp(m.opts, m.b, name)
	}
	return nil
}

// refreshable reports whether the selected app is an MCP app that r can
// refresh.
func (v *appsView) refreshable(o Options) bool {
	if v.cursor >= len(v.list) || o.Registry == nil {
		return false
	}
	a, _ := o.Registry.App(v.list[v.cursor].name)
	_, ok := a.(mcpRefresher)
	return ok
}

var appCols = []widget.Column{
	{Title: "APP", Min: 16, Max: 20},
	{Title: "SOURCE", Min: 9, Max: 9, Drop: 1},
	{Title: "EFFECTS", Min: 14, Max: 32},
	{Title: "FUNCTIONS", Min: 10, Drop: 4},
	{Title: "MODEL", Min: 11, Max: 20, Drop: 3},
	{Title: "STATE", Min: 7, Max: 7, Drop: 2},
	{Title: "ON", Min: 3, Max: 3},
}

// effectStyle colours an effect: read green, write amber, irreversible red.
func effectStyle(th style.Theme, e apps.Effect) lipgloss.Style {
	switch e {
	case apps.EffectRead:
		return th.OK
	case apps.EffectWrite:
		return th.Warn
	}
	return th.Err
}

// effects counts an app's functions by effect, worst first, and styles the
// count by the worst.
func effects(th style.Theme, fs []apps.Function) widget.Cell {
	n := map[apps.Effect]int{}
	worst := apps.EffectRead
	for _, f := range fs {
		n[f.Effect]++
		worst = apps.Stricter(worst, f.Effect)
	}
	var parts []string
	for _, e := range []apps.Effect{apps.EffectIrreversible, apps.EffectWrite, apps.EffectRead} {
		if n[e] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[e], e))
		}
	}
	return widget.Cell{Text: strings.Join(parts, ", "), St: effectStyle(th, worst)}
}

func (v *appsView) view(th style.Theme, w, h int, working map[string]bool, canSwitch bool) string {
	title := widget.TitleBar(th, w, "Apps", []string{widget.Plural(len(v.list), "app") + " installed", sandboxNote(v.sandbox)}, -1, "")
	second := " Every app runs alone, behind its own spoke · space enables / disables it"
	if !canSwitch {
		second = " Every app runs alone, behind its own spoke · enable / disable: not available"
	}
	lay := widget.SplitScreen(h, v.full)
	cells := make([][]widget.Cell, len(v.list))
	for i, a := range v.list {
		names := make([]string, len(a.m.Functions))
		for j, f := range a.m.Functions {
			names[j] = f.Name
		}
		state := widget.Cell{Text: "idle", St: th.Dim}
		if working[a.name] {
			state = widget.Cell{Text: "running", St: th.Working}
		}
		on := widget.Cell{Text: "on", St: th.OK}
		if !a.on {
			on = widget.Cell{Text: "off", St: th.Err}
		}
		cells[i] = []widget.Cell{widget.PlainCell(a.name), {Text: a.source, St: th.Dim}, effects(th, a.m.Functions),
			{Text: strings.Join(names, ", "), St: th.Dim}, {Text: a.model, St: th.Dim}, state, on}
	}
	widths := widget.FitColumns(appCols, w-2, cells)
	head := []string{widget.TableHead(th, appCols, widths, w)}
	var list []string
	first := widget.Window(len(v.list), lay.List, v.cursor)
	for i := first; i < len(v.list) && i < first+max(lay.List, 1); i++ {
		list = append(list, widget.TableRow(th, cells[i], widths, w, i == v.cursor))
	}
	switch {
	case !v.loaded:
		list = []string{th.Dim.Render("  loading…")}
	case len(v.list) == 0:
		list = []string{th.Dim.Render("  no apps installed — see the enable setting of your config")}
	}
	var pane []string
	label := "detail"
	if v.cursor < len(v.list) {
		a := v.list[v.cursor]
		label = a.name
		detail := widget.WrapLines(appDetail(th, a, working[a.name], v.sandbox), w-1)
		if v.full {
			v.scroll = max(min(v.scroll, len(detail)-lay.Detail), 0)
			detail = detail[v.scroll:]
			head, list = []string{widget.PaneRule(th, w, label)}, nil
		} else if lay.Detail > 0 {
			pane = []string{widget.PaneRule(th, w, label)}
		}
		if lay.Detail > 0 {
			pane = append(pane, widget.FitLines(detail, w, lay.Detail)...)
		}
	}
	if !v.full {
		list = widget.FitLines(list, w, lay.List)
	}
	keys := "↑/↓ move · space enable/disable · enter detail · esc close"
	if v.cursor < len(v.list) && strings.HasPrefix(v.list[v.cursor].source, "MCP") {
		keys = "↑/↓ move · space enable/disable · r refresh tools · enter detail · esc close"
	}
	if v.full {
		keys = "↑/↓ scroll · enter/esc back"
	}
	st := th.OK
	if v.msgErr {
		st = th.Err
	}
	return widget.Screen(w, h, []string{title, widget.FitLines([]string{th.Dim.Render(second)}, w, 1)[0]}, head, list, pane, []string{widget.Footer(th, w, keys, v.msg, st)})
}

// appDetail is one app in full. App-authored descriptions are not shown.
func appDetail(th style.Theme, a appInfo, running bool, sb *sandbox.Report) []widget.Styled {
	state := "idle"
	if running {
		state = "running (a spoke of it works now)"
	}
	head := fmt.Sprintf("%s · %s app · model %s · %s · %s", widget.Clean(a.name), widget.Clean(a.source), widget.Clean(a.model), state, onOff(a.on, "enabled", "disabled"))
	out := []widget.Styled{{Text: head, St: th.BoxTitle}}
	if a.where != "" {
		out = append(out, widget.Styled{Text: "runs:   " + widget.Clean(a.where)})
	}
	list := func(xs []string) string {
		if len(xs) == 0 {
			return "none"
		}
		return widget.Clean(strings.Join(xs, ", "))
	}
	out = append(out, widget.Styled{Text: "clearance: " + list(a.m.Clearance) + " · output labels: " + list(a.m.Labels)})
	if len(a.m.Hosts) > 0 {
		out = append(out, widget.Styled{Text: "network: " + list(a.m.Hosts) + " (each put to you first, as a network permission)"})
	} else if outOfProcess(a) {
		out = append(out, widget.Styled{Text: "network: none (no endpoint in its config)"})
	}
	if outOfProcess(a) {
		out = append(out, sandboxLines(th, sb)...)
	}
	provides := map[string]string{}
	for fn, own := range a.m.Provides {
		provides[own] = fn
	}
	tools := map[string]mcp.ToolInfo{}
	for _, t := range a.tools {
		tools[t.Function] = t
	}
	out = append(out, widget.Styled{Text: "functions:"})
	fs := slices.Clone(a.m.Functions)
	slices.SortStableFunc(fs, func(x, y apps.Function) int { return strings.Compare(x.Name, y.Name) })
	for _, f := range fs {
		e := string(f.Effect)
		line := "  " + effectStyle(th, f.Effect).Render(e+strings.Repeat(" ", max(12-len(e), 0))) + " " + widget.Clean(f.Name)
		var notes []string
		if t, ok := tools[f.Name]; ok {
			notes = append(notes, "tool "+widget.Clean(t.Tool))
			if t.Annotated != f.Effect {
				notes = append(notes, "annotated "+string(t.Annotated))
			}
			if t.OpenWorld {
				notes = append(notes, "open world")
			}
		}
		if fn := provides[f.Name]; fn != "" {
			notes = append(notes, "provides "+fn)
		}
		if len(notes) > 0 {
			line += th.Dim.Render(" — " + strings.Join(notes, " · "))
		}
		out = append(out, widget.Styled{Text: line})
	}
	return out
}

// sandboxNote says in the apps screen's title whether the operating-system
// bulkhead of out-of-process apps holds (`bulkhead doctor` says more).
func sandboxNote(r *sandbox.Report) string {
	if r == nil {
		return "sandbox: checking…"
	}
	return r.Summary()
}

// outOfProcess says whether an app runs in a process of its own, behind
// the sandbox: a stdio MCP server, the shell's commands.
func outOfProcess(a appInfo) bool { return a.source == "MCP stdio" || a.name == "shell" }

// sandboxLines name each layer of the sandbox and whether it held.
func sandboxLines(th style.Theme, r *sandbox.Report) []widget.Styled {
	if r == nil {
		return []widget.Styled{{Text: "sandbox: being checked", St: th.Dim}}
	}
	if r.Err != "" {
		return []widget.Styled{{Text: "sandbox: not checked — " + widget.Clean(r.Err), St: th.Err}}
	}
	out := []widget.Styled{{Text: "sandbox (its process, as the probe found it):"}}
	for _, l := range r.Layers {
		mark, st := "✓", th.OK
		if !l.Holds {
			mark, st = "✗ degraded", th.Err
		}
		line := fmt.Sprintf("  %s %s — %s (%s)", mark, l.Name, l.Detail, l.By)
		if len(l.Reached) > 0 {
			line += "; reached: " + strings.Join(l.Reached, ", ")
		}
		out = append(out, widget.Styled{Text: widget.Clean(line), St: st})
	}
	return out
}
