package tui

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/huh/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Models lists the installed models and switches the hub's and the
// spokes' model for the rest of this session (/model) — other windows and
// scripts keep theirs; the serving process's client satisfies it.
type Models interface {
	// Installed lists Ollama's models with their capabilities.
	Installed(ctx context.Context) ([]llm.ModelInfo, error)
	// SetModel switches the hub and the spokes to name for this session
	// (the config file is not written; apps with a model of their own
	// keep it). While a turn runs it answers hub.ErrBusy.
	SetModel(ctx context.Context, name string) error
	// Current names the hub's model and the spokes'.
	Current() (hub, spoke string)
}

// modelsTimeout bounds a listing or a switch.
const modelsTimeout = 15 * time.Second

// modelsDialog is /model's list: the installed models that can call
// tools (and so serve the spokes), the current ones marked; enter
// switches to the one under the cursor.
type modelsDialog struct {
	loading    bool
	err        string
	can        []string // able to call tools
	cannot     []string
	hub, spoke string
	cursor     int
}

// roles names what model n serves now: "hub", "spokes", both or none.
func (d *modelsDialog) roles(n string) []string {
	var tags []string
	if llm.SameModel(n, d.hub) {
		tags = append(tags, "hub")
	}
	if llm.SameModel(n, d.spoke) {
		tags = append(tags, "spokes")
	}
	return tags
}

// modelsMsg answers listModels.
type modelsMsg struct {
	list []llm.ModelInfo
	err  error
}

// modelSetMsg answers switchModel; tools lists the installed models that
// can call tools, for a refusal.
type modelSetMsg struct {
	name  string
	err   error
	tools []string
}

// errNoModel and errNoTools are the refusals switchModel makes itself.
var (
	errNoModel = errors.New("is not installed")
	errNoTools = errors.New("cannot call tools, which every app's spoke needs")
)

func listModels(base context.Context, ms Models) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(base, modelsTimeout)
		defer cancel()
		list, err := ms.Installed(ctx)
		return modelsMsg{list: list, err: err}
	}
}

// toolModels names the models of list that can call tools.
func toolModels(list []llm.ModelInfo) []string {
	var out []string
	for _, m := range list {
		if m.Can(llm.CapTools) {
			out = append(out, m.Name)
		}
	}
	return out
}

// switchModel checks that name is installed and can call tools, then
// asks for the switch.
func switchModel(base context.Context, ms Models, name string) tea.Cmd {
	return func() tea.Msg {
		ctx, cancel := context.WithTimeout(base, modelsTimeout)
		defer cancel()
		list, err := ms.Installed(ctx)
		if err != nil {
			return modelSetMsg{name: name, err: err}
		}
		i := slices.IndexFunc(list, func(m llm.ModelInfo) bool { return m.Name == name })
		if i < 0 {
			i = slices.IndexFunc(list, func(m llm.ModelInfo) bool { return llm.SameModel(m.Name, name) })
		}
		switch {
		case i < 0:
			return modelSetMsg{name: name, err: errNoModel, tools: toolModels(list)}
		case !list[i].Can(llm.CapTools):
			return modelSetMsg{name: name, err: errNoTools, tools: toolModels(list)}
		}
		name = list[i].Name
		return modelSetMsg{name: name, err: ms.SetModel(ctx, name), tools: toolModels(list)}
	}
}

// noModels is /model's answer where models cannot be switched.
const noModels = "switching models is not available here — quit and run bulkhead --model NAME (the hub and every spoke)"

// openModels shows /model's list.
func (m *Model) openModels() tea.Cmd {
	if m.opts.Models == nil {
		m.notice = noModels
		return nil
	}
	h, s := m.opts.Models.Current()
	m.models = &modelsDialog{loading: true, hub: h, spoke: s}
	m.overlay = overlayModels
	return listModels(m.w.base, m.opts.Models)
}

// switchModel starts /model NAME.
func (m *Model) switchModel(name string) tea.Cmd {
	if m.opts.Models == nil {
		m.notice = noModels
		return nil
	}
	if m.run != nil {
		m.notice = "a turn is running — switch models once it ends (esc cancels it)"
		return nil
	}
	m.notice = "switching to " + name + "…"
	return switchModel(m.w.base, m.opts.Models, name)
}

func (m *Model) onModels(msg modelsMsg) {
	d := m.models
	if d == nil {
		return
	}
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

// modelsPicker puts the models able to call tools in a huh select, the
// current ones marked and the spokes' under the cursor: enter switches to
// the one chosen, esc closes.
func (m *Model) modelsPicker() tea.Cmd {
	d := m.models
	if d == nil || len(d.can) == 0 || m.overlay != overlayModels || m.form != nil {
		// The list came while a dialog (or another form) is open: its keys
		// are not the picker's. The list answers ↑/↓ and enter without it.
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
	sel := huh.NewSelect[string]().
		Title("installed, able to call tools (hub and spokes can use them):").
		Options(opts...).Height(min(len(opts)+1, max(m.height-12, 3))).Value(&chosen)
	return m.openForm(formModels, widget.DialogWidth(m.width)-4, func(m *Model, completed bool) tea.Cmd {
		d := m.models
		m.closeModels()
		if !completed || d == nil {
			return nil
		}
		if llm.SameModel(chosen, d.hub) && llm.SameModel(chosen, d.spoke) {
			m.notice = "the hub and the spokes use " + chosen + " already"
			return nil
		}
		return m.switchModel(chosen)
	}, sel)
}

// switchedNotice begins the notice of a switch made.
const switchedNotice = "the hub and the spokes now use "

// onModelSet takes a switch's answer; a switch made while the setup
// panel shows checks the models again, so choosing an installed model
// there opens the chat.
func (m *Model) onModelSet(msg modelSetMsg) tea.Cmd {
	var inc *llm.IncapableError
	switch {
	case msg.err == nil:
		h, s := m.opts.Models.Current()
		m.bar.hubModel, m.bar.spokeModel = h, s
		m.notice = switchedNotice + msg.name + " for this session (the config file is unchanged; apps with a model of their own keep it)"
		if m.setup.opts != nil && m.setup.phase == setupModels {
			return m.setupCheck()
		}
		return nil
	case errors.Is(msg.err, hub.ErrBusy):
		m.notice = "a turn is running — switch models once it ends (esc cancels it)"
		return nil
	case errors.Is(msg.err, errNoModel) && m.opts.Ollama != nil && m.pull == nil:
		// Not installed: offer to pull it, then switch.
		m.notice = ""
		m.pull = newPullDialog(msg.name, "", 0)
		m.pull.switchTo, m.pull.why = true, "this session (/model)"
		m.show(overlayPull)
		return nil
	case errors.Is(msg.err, errNoModel), errors.Is(msg.err, errNoTools):
		m.notice = "cannot switch: " + msg.name + " " + msg.err.Error()
	case errors.As(msg.err, &inc):
		m.notice = "cannot switch: " + msg.name + " " + errNoTools.Error()
	default:
		m.notice = "cannot switch to " + msg.name + ": " + msg.err.Error()
		return nil
	}
	if len(msg.tools) > 0 {
		m.notice += " — installed models that can: " + strings.Join(msg.tools, ", ")
	} else {
		m.notice += " — no installed model can call tools; pull one (ollama pull qwen3:1.7b)"
	}
	return nil
}

// modelsKey drives /model's list.
func (m *Model) modelsKey(msg tea.KeyPressMsg) tea.Cmd {
	d := m.models
	if m.formOf(formModels) != nil {
		if msg.String() == "q" {
			m.closeForm()
			m.closeModels()
			return nil
		}
		return m.formUpdate(msg)
	}
	switch msg.String() {
	case "esc", "q":
		m.closeModels()
	case "up", "k":
		if d != nil && len(d.can) > 0 {
			d.cursor = (d.cursor + len(d.can) - 1) % len(d.can)
		}
	case "down", "j", "tab":
		if d != nil && len(d.can) > 0 {
			d.cursor = (d.cursor + 1) % len(d.can)
		}
	case "enter":
		if d == nil || d.loading || len(d.can) == 0 {
			m.closeModels()
			return nil
		}
		name := d.can[d.cursor]
		m.closeModels()
		if llm.SameModel(name, d.hub) && llm.SameModel(name, d.spoke) {
			m.notice = "the hub and the spokes use " + name + " already"
			return nil
		}
		return m.switchModel(name)
	}
	return nil
}

func (m *Model) closeModels() {
	if m.formOf(formModels) != nil {
		m.closeForm()
	}
	m.models = nil
	if m.overlay == overlayModels {
		m.overlay = overlayNone
	}
}

// modelsView draws /model's list. Every name is Ollama's: drawn as text.
func (m Model) modelsView(width, height int) string {
	th, d := m.th, m.models
	lines := []string{th.BoxTitle.Render("Models") + th.Dim.Render(" · ↑/↓ choose · enter switch · esc close")}
	switch {
	case d == nil:
	case d.loading:
		lines = append(lines, th.Dim.Render("asking Ollama…"))
	case d.err != "":
		lines = append(lines, th.Err.Render(widget.OneLine(d.err)))
	case len(d.can) == 0:
		lines = append(lines, "No installed model can call tools; pull one, for example: ollama pull qwen3:1.7b")
	case m.formOf(formModels) != nil:
		lines = append(lines, strings.Split(strings.TrimRight(m.formView(formModels), "\n"), "\n")...)
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
	if d != nil && len(d.cannot) > 0 {
		lines = append(lines, th.Dim.Render("cannot call tools: "+widget.OneLine(strings.Join(d.cannot, ", "))))
	}
	lines = append(lines, "", th.Dim.Render("/model NAME also switches. A switch lasts for this session: the config file is not changed, and apps with a model of their own keep it."))
	return widget.Box(th, lines, widget.DialogWidth(width), height)
}
