package tui

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/dialogs/pull"
	"github.com/bulkhead-dev/bulkhead/tui/setup"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// setupState is the panel's state; Model keeps it by value.
type setupState struct {
	opts     *Setup
	phase    setup.Phase
	gen      int // the check or countdown running; older answers are ignored
	checking bool
	wait     int // seconds until the next check
	tries    int // checks in a row that found Ollama down
	down     error
	binary   string // where ollama is installed ("" not found)
	version  string
	models   []setup.Check
	// declined holds the models not to offer for pull again until ctrl+r:
	// "" the user said no, else why the pull failed.
	declined map[string]string
	hidden   bool // esc put away a panel that blocks nothing
	wasDown  bool // Ollama was found down since the chat was last ready
}

func newSetup(opts Options) setupState {
	if opts.Setup == nil || opts.Ollama == nil {
		return setupState{}
	}
	return setupState{opts: opts.Setup, phase: setup.Checking, gen: 1, checking: true, declined: map[string]string{}}
}

// shows reports whether the panel takes the conversation's place.
func (s *setupState) shows() bool {
	switch s.phase {
	case setup.Checking, setup.Down:
		return true
	case setup.Models:
		return !s.hidden || s.blocks()
	}
	return false
}

// blocks reports whether a query cannot be answered now.
func (s *setupState) blocks() bool {
	switch s.phase {
	case setup.Checking, setup.Down:
		return true
	case setup.Models:
		return slices.ContainsFunc(s.models, setup.Check.Blocking)
	}
	return false
}

// setupTickMsg is one second of the countdown to the next check.
type setupTickMsg struct{ gen int }

// setupRoles lists the configured models and who uses each: the hub,
// the spokes, and every installed app whose spoke has a model of its own.
func (m Model) setupRoles() []setup.Check {
	var out []setup.Check
	add := func(model string, r setup.Role) {
		if model == "" {
			return
		}
		if i := slices.IndexFunc(out, func(c setup.Check) bool { return c.Model == model }); i >= 0 {
			out[i].Roles = append(out[i].Roles, r)
			return
		}
		out = append(out, setup.Check{Model: model, Roles: []setup.Role{r}})
	}
	spokes := m.spokeModelNow()
	hubModel := m.b.HubModel()
	if m.opts.Models != nil {
		if h, _ := m.opts.Models.Current(); h != "" {
			hubModel = h // /model switched it
		}
	}
	add(hubModel, setup.Role{Name: "the hub", Key: "hub.model", Need: llm.CapCompletion})
	add(spokes, setup.Role{Name: "the spokes", Key: "spokes.model", Need: llm.CapTools})
	if m.opts.Registry != nil && m.opts.AppModel != nil {
		for _, app := range m.opts.Registry.Names() {
			if md := m.opts.AppModel(app); md != "" && md != spokes {
				key := "apps." + app + ".model"
				if m.opts.AppModelKey != nil {
					key = m.opts.AppModelKey(app)
				}
				add(md, setup.Role{Name: app + "'s spoke", Key: key, Need: llm.CapTools})
			}
		}
	}
	return out
}

// spokeModelNow is the spokes' model now: the configured one until
// /model switches it (Options.Models).
func (m Model) spokeModelNow() string {
	if m.opts.Models != nil {
		if _, s := m.opts.Models.Current(); s != "" {
			return s
		}
	}
	return m.opts.SpokeModel
}

// setupCheck starts a check now.
func (m *Model) setupCheck() tea.Cmd {
	s := &m.setup
	s.gen++
	s.checking, s.wait = true, 0
	return m.setupCmd()
}

// setupCmd is the check numbered by the current gen (Init's is 1).
func (m Model) setupCmd() tea.Cmd {
	find := m.setup.opts.FindOllama
	if find == nil {
		find = func() string { p, _ := exec.LookPath("ollama"); return p }
	}
	return setup.Run(m.w.base, m.opts.Ollama, m.setup.gen, m.setupRoles(), find)
}

// setupDelay is how long to wait before checking a down Ollama again:
// every 2 s at first, backing off to every 10 s.
func setupDelay(tries int) int {
	switch {
	case tries <= 10:
		return 2
	case tries <= 40:
		return 5
	}
	return 10
}

// countdown waits secs seconds, shown, before the next check.
func (m *Model) countdown(secs int) tea.Cmd {
	s := &m.setup
	s.gen++
	s.checking, s.wait = false, secs
	if m.after == nil {
		return nil // tests tick by hand
	}
	return m.after(time.Second, setupTickMsg{gen: s.gen})
}

func (m *Model) onSetupTick(msg setupTickMsg) tea.Cmd {
	s := &m.setup
	if msg.gen != s.gen || s.checking || s.phase == setup.Ready {
		return nil
	}
	if s.wait--; s.wait > 0 {
		if m.after == nil {
			return nil
		}
		return m.after(time.Second, setupTickMsg{gen: s.gen})
	}
	return m.setupCheck()
}

// onSetup takes a check's answer: down counts down to the next check;
// up goes on to the models, offering a pull for a missing one; all well
// opens the chat.
func (m *Model) onSetup(msg setup.Result) tea.Cmd {
	s := &m.setup
	if msg.Gen != s.gen {
		return nil
	}
	s.checking = false
	m.bar.ollama = ollamaState{checked: true, version: msg.Version, err: msg.Err}
	if msg.Err != nil {
		s.phase, s.down, s.binary = setup.Down, msg.Err, msg.Binary
		s.tries++
		s.wasDown = true
		return m.countdown(setupDelay(s.tries))
	}
	s.tries, s.down, s.version, s.models = 0, nil, msg.Version, msg.Models
	if !slices.ContainsFunc(s.models, setup.Check.Problem) {
		if s.phase != setup.Ready && s.phase != setup.Checking || s.wasDown {
			if !strings.HasPrefix(m.notice, "pulled ") && !strings.HasPrefix(m.notice, switchedNotice) {
				m.notice = "Ollama " + widget.OneLine(s.version) + " answers"
			}
			m.notice += " — the chat is ready"
			if m.input.value() != "" {
				m.notice += "; enter sends what you typed"
			}
		}
		s.phase, s.wasDown, s.hidden = setup.Ready, false, false
		return nil
	}
	s.phase = setup.Models
	offer := m.offerPull()
	if s.blocks() && m.pull == nil {
		// Notice an `ollama pull` run elsewhere.
		return m.countdown(5)
	}
	return offer
}

// offerPull opens the pull dialog for the first missing model not
// declined, unless another dialog is up.
func (m *Model) offerPull() tea.Cmd {
	if m.pull != nil || m.overlay != overlayNone {
		return nil
	}
	for _, c := range m.setup.models {
		if _, no := m.setup.declined[c.Model]; !c.Missing || no {
			continue
		}
		return m.openPull(c.Model, pull.For{Setup: true, Why: setup.RoleNames(c.Roles)})
	}
	return nil
}

// setupPullEnded follows a pull the panel offered: declined (err is
// errDeclined), cancelled or failed, the model is not offered again
// until ctrl+r and the panel lists the models to choose from instead;
// pulled, the models are checked again.
func (m *Model) setupPullEnded(model string, err error) tea.Cmd {
	s := &m.setup
	switch {
	case err == nil:
		m.notice = "pulled " + widget.OneLine(model)
		return m.setupCheck()
	case errors.Is(err, errDeclined):
		s.declined[model] = ""
	case errors.Is(err, context.Canceled):
		s.declined[model] = setup.PullCancelled
	default:
		s.declined[model] = err.Error()
	}
	offer := m.offerPull()
	if m.pull == nil && s.blocks() {
		return m.countdown(5)
	}
	return offer
}

// errDeclined is the answer n to a pull the panel offered.
var errDeclined = errors.New("declined")

// setupNow is ctrl+r while the panel shows: check at once, and offer
// again the pulls declined or failed.
func (m *Model) setupNow() tea.Cmd {
	clear(m.setup.declined)
	if m.setup.checking {
		return nil
	}
	return m.setupCheck()
}

// setupHide is esc on a panel that blocks nothing: the chat comes back.
func (m *Model) setupHide() bool {
	s := &m.setup
	if s.phase != setup.Models || s.hidden || s.blocks() {
		return false
	}
	s.hidden = true
	return true
}

// setupRefuses says why a query cannot be sent now ("" when it can),
// and puts a panel that blocks nothing away: the turn takes its place.
func (m *Model) setupRefuses() string {
	s := &m.setup
	if !s.blocks() {
		s.hidden = s.phase == setup.Models
		return ""
	}
	switch s.phase {
	case setup.Checking:
		return "not sent: checking Ollama first — your text stays here"
	case setup.Down:
		return "not sent: Ollama is not answering — your text stays here; enter sends it once Ollama answers"
	}
	for _, c := range s.models {
		if c.Blocking() {
			why := "is not installed"
			if !c.Missing {
				why = "cannot " + setup.CapWords[llm.CapCompletion]
			}
			return fmt.Sprintf("not sent: %s (%s) %s — see above; your text stays here", widget.OneLine(c.Model), setup.RoleNames(c.Roles), why)
		}
	}
	return ""
}

// setupLost goes back to the panel when Ollama is found down after the
// chat was ready: by the status bar's check, or by a turn that could not
// reach it.
func (m *Model) setupLost(err error) tea.Cmd {
	s := &m.setup
	if s.opts == nil || s.phase == setup.Down || s.checking {
		return nil
	}
	s.phase, s.down, s.hidden, s.wasDown = setup.Down, err, false, true
	s.tries = 1
	return m.countdown(setupDelay(s.tries))
}

// setupHealth follows the status bar's periodic check.
func (m *Model) setupHealth(msg healthMsg) tea.Cmd {
	s := &m.setup
	if s.opts == nil || !msg.checked {
		return nil
	}
	switch {
	case msg.err != nil && s.phase == setup.Ready:
		return m.setupLost(msg.err)
	case msg.err == nil && s.phase == setup.Down && !s.checking:
		return m.setupCheck() // up between two of our checks
	}
	return nil
}

// Setup turns on the setup panel (tui/setup): the first screen, which
// checks Ollama and the configured models and shows what fails, with the
// fix, in place of the conversation until it works.
type Setup = setup.Setup

// convView is the conversation pane, or the setup panel in its place.
func (m Model) convView() string {
	if m.setup.shows() {
		return m.setupPane()
	}
	return m.chat.View()
}

// setupPane is the panel, exactly the conversation pane's size.
func (m Model) setupPane() string {
	s := &m.setup
	return setup.View(m.th, setup.Panel{
		Opts: s.opts, Phase: s.phase, Checking: s.checking, Wait: s.wait, Down: s.down,
		Binary: s.binary, Version: s.version, Models: s.models, Declined: s.declined,
		Blocks: s.blocks(), Pulling: m.pull != nil, CanSwitch: m.opts.Models != nil,
		Spinner: spinnerFrames[0],
	}, m.width, m.convHeight())
}
