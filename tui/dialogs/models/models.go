// Package models is /model's dialog: the installed models that can call
// tools (and so serve the spokes), the ones the hub and the spokes use
// now marked, in a huh select once the list is read — enter
// chooses the one under the cursor, esc or q closes — and those that
// cannot call tools named below. Every name is Ollama's: drawn as text.
// What the user chose is the Outcome of Update; the switch itself is the
// root's (it may offer a pull first).
package models

import (
	"context"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/forms"
	"github.com/bulkhead-dev/bulkhead/tui/style"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Lister lists Ollama's installed models with their capabilities.
type Lister interface {
	Installed(ctx context.Context) ([]llm.ModelInfo, error)
}

// Timeout bounds a listing (and, in the root, a switch).
const Timeout = 15 * time.Second

// Dialog is /model's list.
type Dialog struct {
	th         style.Theme
	width      int
	height     int
	loading    bool
	err        string
	can        []string // able to call tools
	cannot     []string
	hub, spoke string
	cursor     int
	picker     *huh.Form // the select, once the list is read
	chosen     *string
}

// Outcome is what Update asks of the root: close the dialog, and switch
// the hub and the spokes to a model.
type Outcome struct {
	Close  bool
	Switch string
}

// Loaded answers the listing.
type Loaded struct {
	list []llm.ModelInfo
	err  error
}

// New opens the dialog, w by h cells of terminal, with the hub's and the
// spokes' model now; the Cmd lists the models (base bounds
// it with the UI's life).
func New(th style.Theme, base context.Context, ls Lister, hub, spoke string, w, h int) (*Dialog, tea.Cmd) {
	d := &Dialog{th: th, width: w, height: h, loading: true, hub: hub, spoke: spoke}
	return d, func() tea.Msg {
		ctx, cancel := context.WithTimeout(base, Timeout)
		defer cancel()
		list, err := ls.Installed(ctx)
		return Loaded{list: list, err: err}
	}
}

// roles names what model n serves now: "hub", "spokes", both or none.
func (d *Dialog) roles(n string) []string {
	var tags []string
	if llm.SameModel(n, d.hub) {
		tags = append(tags, "hub")
	}
	if llm.SameModel(n, d.spoke) {
		tags = append(tags, "spokes")
	}
	return tags
}

// Update handles one message: the listing, a key, a resize, and the
// picker's own messages.
func (d *Dialog) Update(msg tea.Msg) (tea.Cmd, Outcome) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		d.width, d.height = msg.Width, msg.Height
	case Loaded:
		d.onLoaded(msg)
	case tea.KeyPressMsg:
		return d.key(msg)
	default:
		if d.picker != nil {
			return d.pickerUpdate(msg)
		}
	}
	return nil, Outcome{}
}

func (d *Dialog) onLoaded(msg Loaded) {
	d.loading = false
	if msg.err != nil {
		d.err = msg.err.Error()
		return
	}
	d.can, d.cannot = nil, nil
	for _, x := range msg.list {
		if x.Can(llm.CapTools) {
			d.can = append(d.can, x.Name)
		} else {
			d.cannot = append(d.cannot, x.Name)
		}
	}
	if i := slices.IndexFunc(d.can, func(n string) bool { return llm.SameModel(n, d.spoke) }); i >= 0 {
		d.cursor = i
	}
}

// Picker puts the models able to call tools in a huh select, the current
// ones marked and the spokes' under the cursor. The root opens it once
// the list is read, unless something else has the keys (a permission
// dialog); without it the list answers ↑/↓ and enter itself.
func (d *Dialog) Picker() tea.Cmd {
	if len(d.can) == 0 || d.picker != nil {
		return nil
	}
	nw := 0
	for _, n := range d.can {
		nw = max(nw, ansi.StringWidth(widget.OneLine(n)))
	}
	opts := make([]huh.Option[string], len(d.can))
	for i, n := range d.can {
		name, tags := widget.OneLine(n), d.roles(n)
		label := name
		if len(tags) > 0 {
			label += strings.Repeat(" ", nw-ansi.StringWidth(name)) + "  ● " + strings.Join(tags, " · ")
		}
		opts[i] = huh.NewOption(label, n)
	}
	chosen := d.can[d.cursor]
	d.chosen = &chosen
	sel := huh.NewSelect[string]().
		Title("installed, able to call tools (hub and spokes can use them):").
		Options(opts...).Height(min(len(opts)+1, max(d.height-12, 3))).Value(&chosen)
	d.picker = forms.New(d.th, widget.DialogWidth(d.width)-4, sel)
	return d.picker.Init()
}

// Loading reports whether the list is still being read.
func (d *Dialog) Loading() bool { return d.loading }

// Picking reports whether the picker is open.
func (d *Dialog) Picking() bool { return d.picker != nil }

// Leave closes the picker as esc would (the list stays, and answers ↑/↓
// and enter itself).
func (d *Dialog) Leave() tea.Cmd {
	d.picker = nil
	return nil
}

func (d *Dialog) pickerUpdate(msg tea.Msg) (tea.Cmd, Outcome) {
	f, cmd, ended := forms.Update(d.picker, msg)
	d.picker = f
	switch ended {
	case forms.Submitted:
		d.picker = nil
		return cmd, Outcome{Close: true, Switch: *d.chosen}
	case forms.Left:
		d.picker = nil
		return cmd, Outcome{Close: true}
	}
	return cmd, Outcome{}
}

// key drives the list: the picker while it is open (q closes), else ↑/↓
// and enter.
func (d *Dialog) key(msg tea.KeyPressMsg) (tea.Cmd, Outcome) {
	if d.picker != nil {
		if msg.String() == "q" {
			d.picker = nil
			return nil, Outcome{Close: true}
		}
		return d.pickerUpdate(msg)
	}
	switch msg.String() {
	case "esc", "q":
		return nil, Outcome{Close: true}
	case "up", "k":
		if len(d.can) > 0 {
			d.cursor = (d.cursor + len(d.can) - 1) % len(d.can)
		}
	case "down", "j", "tab":
		if len(d.can) > 0 {
			d.cursor = (d.cursor + 1) % len(d.can)
		}
	case "enter":
		if d.loading || len(d.can) == 0 {
			return nil, Outcome{Close: true}
		}
		return nil, Outcome{Close: true, Switch: d.can[d.cursor]}
	}
	return nil, Outcome{}
}

// Uses reports whether the hub and the spokes both use name already.
func (d *Dialog) Uses(name string) bool {
	return llm.SameModel(name, d.hub) && llm.SameModel(name, d.spoke)
}

// View draws the list in a box at most width wide and height tall.
func (d *Dialog) View(th style.Theme, width, height int) string {
	lines := []string{th.BoxTitle.Render("Models") + th.Dim.Render(" · ↑/↓ choose · enter switch · esc close")}
	switch {
	case d.loading:
		lines = append(lines, th.Dim.Render("asking Ollama…"))
	case d.err != "":
		lines = append(lines, th.Err.Render(widget.OneLine(d.err)))
	case len(d.can) == 0:
		lines = append(lines, "No installed model can call tools; pull one, for example: ollama pull qwen3:1.7b")
	case d.picker != nil:
		lines = append(lines, strings.Split(strings.TrimRight(d.picker.View(), "\n"), "\n")...)
	default:
		lines = append(lines, th.Dim.Render("installed, able to call tools (hub and spokes can use them):"))
		nw := 0
		for _, n := range d.can {
			nw = max(nw, ansi.StringWidth(widget.OneLine(n)))
		}
		for i, n := range d.can {
			name, tags := widget.OneLine(n), d.roles(n)
			mark := "  "
			if len(tags) > 0 {
				mark = "● "
			}
			line := mark + name + strings.Repeat(" ", nw-ansi.StringWidth(name)) + "  " + strings.Join(tags, " · ")
			if i == d.cursor {
				line = th.Selected.Render(line)
			}
			lines = append(lines, line)
		}
	}
	if len(d.cannot) > 0 {
		lines = append(lines, th.Dim.Render("cannot call tools: "+widget.OneLine(strings.Join(d.cannot, ", "))))
	}
	lines = append(lines, "", th.Dim.Render("/model NAME also switches. A switch holds here and in the bulkheads started later on this data directory, until the config's hub.model or spokes.model changes or --model names another: the config file is not changed, and apps with a model of their own keep it."))
	return widget.Box(th, lines, widget.DialogWidth(width), height)
}
