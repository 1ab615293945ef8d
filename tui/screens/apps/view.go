package apps

import (
	"fmt"
	"slices"
	"strings"

	"charm.land/lipgloss/v2"

	appkit "github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/sandbox"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// The apps screen as drawn: the table and an app's details.

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
func effectStyle(th style.Theme, e appkit.Effect) lipgloss.Style {
	switch e {
	case appkit.EffectRead:
		return th.OK
	case appkit.EffectWrite:
		return th.Warn
	}
	return th.Err
}

// effects counts an app's functions by effect, worst first, and styles the
// count by the worst.
func effects(th style.Theme, fs []appkit.Function) widget.Cell {
	n := map[appkit.Effect]int{}
	worst := appkit.EffectRead
	for _, f := range fs {
		n[f.Effect]++
		worst = appkit.Stricter(worst, f.Effect)
	}
	var parts []string
	for _, e := range []appkit.Effect{appkit.EffectIrreversible, appkit.EffectWrite, appkit.EffectRead} {
		if n[e] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[e], e))
		}
	}
	return widget.Cell{Text: strings.Join(parts, ", "), St: effectStyle(th, worst)}
}

// View draws the screen in w by h cells; working names the apps a spoke
// of which works now (the status bar's).
func (v *Screen) View(th style.Theme, w, h int, working map[string]bool) string {
	canSwitch := v.c.Apps != nil
	title := widget.TitleBar(th, w, "Apps", []string{v.count(), sandboxNote(v.sandbox)}, -1, "")
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
		switch {
		case a.listing:
			state = widget.Cell{Text: "listing", St: th.Working}
		case a.failed():
			state = widget.Cell{Text: "failed", St: th.Err}
		case working[a.name]:
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
		keys = "↑/↓ pgup/pgdn scroll · enter/esc back"
	}
	st := th.OK
	if v.msgErr {
		st = th.Err
	}
	return widget.Screen(w, h, []string{title, widget.FitLines([]string{th.Dim.Render(second)}, w, 1)[0]}, head, list, pane, []string{widget.Footer(th, w, keys, v.msg, st)})
}

// count is the title's count: the apps installed, then the enabled MCP
// servers being started or that failed to (not installed).
func (v *Screen) count() string {
	installed, starting, failed := 0, 0, 0
	for _, a := range v.list {
		switch {
		case a.listing:
			starting++
		case a.failed():
			failed++
		default:
			installed++
		}
	}
	out := widget.Plural(installed, "app") + " installed"
	if starting > 0 {
		out += fmt.Sprintf(" · %d starting", starting)
	}
	if failed > 0 {
		out += fmt.Sprintf(" · %d enabled but failed to start", failed)
	}
	return out
}

// appDetail is one app in full. App-authored descriptions are not shown.
func appDetail(th style.Theme, a appInfo, running bool, sb *sandbox.Report) []widget.Styled {
	state := "idle"
	if running {
		state = "running (a spoke of it works now)"
	}
	on := onOff(a.on, "enabled", "disabled")
	switch {
	case a.listing:
		state = "starting"
	case a.failed():
		state, on = "failed", "enabled, but not running: its server could not be started or listed"
	}
	head := fmt.Sprintf("%s · %s app · model %s · %s · %s", widget.Clean(a.name), widget.Clean(a.source), widget.Clean(a.model), state, on)
	out := []widget.Styled{{Text: head, St: th.BoxTitle}}
	if a.listing {
		out = append(out, widget.Styled{Text: "being listed since " + a.since.Format("15:04:05") + ": " + widget.Clean(a.unlisted), St: th.Working},
			widget.Styled{Text: "then: " + widget.Clean(a.fix)})
		return out
	}
	if a.unlisted != "" {
		out = append(out, widget.Styled{Text: "not listed: " + widget.Clean(a.unlisted), St: th.Warn},
			widget.Styled{Text: "fix: " + widget.Clean(a.fix)})
		return out
	}
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
	slices.SortStableFunc(fs, func(x, y appkit.Function) int { return strings.Compare(x.Name, y.Name) })
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
