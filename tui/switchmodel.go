package tui

import (
	"context"
	"errors"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/models"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/pull"
	"github.com/bulkhead-dev/bulkhead/tui/setup"
)

// Models lists the installed models and switches the hub's and the
// spokes' model (/model): at once for this window — other windows open
// now keep theirs — and for every bulkhead started later on the data
// directory (the chat, ask, doctor), until the config's hub.model or
// spokes.model changes or --model names another. bulkhead's client of
// the serving process that remembers the choice satisfies it.
type Models interface {
	// Installed lists Ollama's models with their capabilities.
	Installed(ctx context.Context) ([]llm.ModelInfo, error)
	// SetModel switches the hub and the spokes to name, and remembers it
	// for the bulkheads started later on the data directory (the config
	// file is not written; apps with a model of their own keep it).
	// While a turn runs it answers hub.ErrBusy.
	SetModel(ctx context.Context, name string) error
	// Current names the hub's model and the spokes'.
	Current() (hub, spoke string)
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
		ctx, cancel := context.WithTimeout(base, models.Timeout)
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
const noModels = "switching models is not available here — quit and run bulkhead --model NAME (the hub and the spokes)"

// openModels shows /model's list.
func (m *Model) openModels() tea.Cmd {
	if m.opts.Models == nil {
		m.notice = noModels
		return nil
	}
	h, s := m.opts.Models.Current()
	var cmd tea.Cmd
	m.models, cmd = models.New(m.th, m.w.base, m.opts.Models, h, s, m.width, m.height)
	m.overlay = overlayModels
	return cmd
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

// onModels hands the listing to /model's dialog and opens its picker,
// unless a permission dialog has the keys (the list came late): its keys
// are not the picker's, and the list answers ↑/↓ and enter without it.
func (m *Model) onModels(msg models.Loaded) tea.Cmd {
	if m.models == nil {
		return nil
	}
	m.models.Update(msg)
	return m.modelsPicker()
}

// modelsPicker opens /model's picker when the dialog shows and nothing
// else has the keys.
func (m *Model) modelsPicker() tea.Cmd {
	if m.models == nil || m.overlay != overlayModels || m.perm != nil {
		return nil
	}
	prev := m.leaveAllForms() // one form at a time
	return tea.Batch(prev, m.models.Picker())
}

// modelsKey hands a key to /model's dialog and acts on its outcome.
func (m *Model) modelsKey(msg tea.Msg) tea.Cmd {
	d := m.models
	if d == nil {
		m.closeModels()
		return nil
	}
	cmd, out := d.Update(msg)
	if out.Close {
		m.closeModels()
	}
	if out.Switch == "" {
		return cmd
	}
	if d.Uses(out.Switch) {
		m.notice = "the hub and the spokes use " + out.Switch + " already"
		return cmd
	}
	return tea.Batch(cmd, m.switchModel(out.Switch))
}

func (m *Model) closeModels() {
	m.models = nil
	if m.overlay == overlayModels {
		m.overlay = overlayNone
	}
}

// switchedNotice begins the notice of a switch made; remembered ends
// it: how long the choice holds (Models).
const (
	switchedNotice = "the hub and the spokes now use "
	remembered     = ", here and in the bulkheads started later on this data directory (ask and doctor too), until the config's hub.model or spokes.model changes or --model names another; the config file is unchanged, and apps with a model of their own keep it"
)

// onModelSet takes a switch's answer; a switch made while the setup
// panel shows checks the models again, so choosing an installed model
// there opens the chat.
func (m *Model) onModelSet(msg modelSetMsg) tea.Cmd {
	var inc *llm.IncapableError
	switch {
	case msg.err == nil:
		h, s := m.opts.Models.Current()
		m.bar.hubModel, m.bar.spokeModel = h, s
		m.notice = switchedNotice + msg.name + remembered
		if m.setup.opts != nil && m.setup.phase == setup.Models {
			return m.setupCheck()
		}
		return nil
	case errors.Is(msg.err, hub.ErrBusy):
		m.notice = "a turn is running — switch models once it ends (esc cancels it)"
		return nil
	case errors.Is(msg.err, errNoModel) && m.opts.Ollama != nil && m.pull == nil:
		// Not installed: offer to pull it, then switch.
		m.notice = ""
		return m.openPull(msg.name, pull.For{Switch: true, Why: "the hub and the spokes (/model)"})
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
