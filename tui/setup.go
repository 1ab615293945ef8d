package tui

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/tui/dialogs/pull"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Setup turns on the setup panel: the first screen, which checks at start
// — and again whenever Ollama is found down — what `bulkhead doctor`
// checks of the server and the configured models, and shows what fails
// with the fix in place of the conversation. It re-checks by itself, so
// the chat opens as soon as Ollama answers and the models are there, with
// no restart.
//
// While Ollama is down (or the hub's or the spokes' model is missing)
// enter sends nothing: the text stays in the input. A missing model is
// offered for pull at once (the pull dialog, pull.go); when the pull
// fails (offline) or is declined, the panel lists the installed models
// that can serve the role and how to choose one. A model that lacks what
// its role needs (tools for the spokes, completion for the hub) is named
// with the role, and the same list.
type Setup struct {
	// Host is the Ollama server the UI checks (the hub's), as configured.
	Host string
	// HostFrom says where Host came from: "--ollama-host",
	// "$OLLAMA_HOST", "$BULKHEAD_OLLAMA_HOST", a config file's path, or
	// "default" (config.Config.From["ollama.host"]).
	HostFrom string
	// ConfigFile is the config file to name in the fixes: the one read,
	// else where bulkhead looks for one.
	ConfigFile string
	// FindOllama says where the ollama binary is installed, "" when it
	// is not (nil: `ollama` on PATH). It runs in a Cmd, never in Update.
	FindOllama func() string
}

// setupPhase is where the setup panel stands.
type setupPhase int

const (
	setupReady    setupPhase = iota // no panel: every check passed (or no Options.Setup)
	setupChecking                   // the first check is in flight
	setupDown                       // Ollama does not answer; the next check counts down
	setupModels                     // a configured model is missing or cannot serve its role
)

// Capabilities per role, and the words for them.
var capWords = map[string]string{
	llm.CapTools:      "call tools",
	llm.CapCompletion: "write text (completion)",
	llm.CapThinking:   "think",
}

// role is one use of a model: who uses it, the config key that sets it,
// and the capability it needs.
type role struct{ name, key, need string }

// modelCheck is what the last check found of one configured model.
type modelCheck struct {
	model   string
	roles   []role
	missing bool
	lacks   []string // capabilities its roles need that the model has not
	need    string   // the strictest need of its roles
	alts    []string // installed models that have need
	hubAlts []string // installed models that can be the hub, when a missing one's need is more
	err     string   // the check itself failed
}

// blocking reports whether the chat cannot answer at all with this
// model: the hub's or the spokes' (plain chat's) model is missing, or the
// hub's cannot write text.
func (c modelCheck) blocking() bool {
	for _, r := range c.roles {
		core := r.key == "hub.model" || r.key == "spokes.model"
		if core && c.missing || r.key == "hub.model" && slices.Contains(c.lacks, llm.CapCompletion) {
			return true
		}
	}
	return false
}

func (c modelCheck) problem() bool { return c.missing || len(c.lacks) > 0 || c.err != "" }

// setupState is the panel's state; Model keeps it by value.
type setupState struct {
	opts     *Setup
	phase    setupPhase
	gen      int // the check or countdown running; older answers are ignored
	checking bool
	wait     int // seconds until the next check
	tries    int // checks in a row that found Ollama down
	down     error
	binary   string // where ollama is installed ("" not found)
	version  string
	models   []modelCheck
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
	return setupState{opts: opts.Setup, phase: setupChecking, gen: 1, checking: true, declined: map[string]string{}}
}

// shows reports whether the panel takes the conversation's place.
func (s *setupState) shows() bool {
	switch s.phase {
	case setupChecking, setupDown:
		return true
	case setupModels:
		return !s.hidden || s.blocks()
	}
	return false
}

// blocks reports whether a query cannot be answered now.
func (s *setupState) blocks() bool {
	switch s.phase {
	case setupChecking, setupDown:
		return true
	case setupModels:
		return slices.ContainsFunc(s.models, modelCheck.blocking)
	}
	return false
}

// setupMsg is the answer to one check.
type setupMsg struct {
	gen     int
	version string
	err     error // Ollama does not answer
	binary  string
	models  []modelCheck
}

// setupTickMsg is one second of the countdown to the next check.
type setupTickMsg struct{ gen int }

// setupRoles lists the configured models and who uses each: the hub,
// the spokes, and every installed app whose spoke has a model of its own.
func (m Model) setupRoles() []modelCheck {
	var out []modelCheck
	add := func(model string, r role) {
		if model == "" {
			return
		}
		if i := slices.IndexFunc(out, func(c modelCheck) bool { return c.model == model }); i >= 0 {
			out[i].roles = append(out[i].roles, r)
			return
		}
		out = append(out, modelCheck{model: model, roles: []role{r}})
	}
	spokes := m.spokeModelNow()
	hubModel := m.b.HubModel()
	if m.opts.Models != nil {
		if h, _ := m.opts.Models.Current(); h != "" {
			hubModel = h // /model switched it
		}
	}
	add(hubModel, role{"the hub", "hub.model", llm.CapCompletion})
	add(spokes, role{"the spokes", "spokes.model", llm.CapTools})
	if m.opts.Registry != nil && m.opts.AppModel != nil {
		for _, app := range m.opts.Registry.Names() {
			if md := m.opts.AppModel(app); md != "" && md != spokes {
				add(md, role{app + "'s spoke", "apps." + app + ".model", llm.CapTools})
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
	return checkSetup(m.w.base, m.opts.Ollama, m.setup.gen, m.setupRoles(), find)
}

// checkSetup asks the server for its version, then each model whether it
// is installed and what it can do, off the UI loop.
func checkSetup(base context.Context, o Ollama, gen int, want []modelCheck, find func() string) tea.Cmd {
	return func() tea.Msg {
		msg := setupMsg{gen: gen}
		ctx, cancel := context.WithTimeout(base, 3*time.Second)
		msg.version, msg.err = o.Version(ctx)
		cancel()
		if msg.err != nil {
			msg.binary = find()
			return msg
		}
		ctx, cancel = context.WithTimeout(base, 30*time.Second)
		defer cancel()
		lists := map[string][]string{}
		can := func(cp string) []string {
			if l, ok := lists[cp]; ok {
				return l
			}
			l, _ := o.ModelsThatCan(ctx, cp)
			lists[cp] = l
			return l
		}
		for _, c := range want {
			has, err := o.HasModel(ctx, c.model)
			var caps []string
			if err == nil && has {
				caps, err = o.Capabilities(ctx, c.model)
			}
			var unreachable *llm.UnreachableError
			switch {
			case errors.As(err, &unreachable):
				return setupMsg{gen: gen, err: err, binary: find()}
			case err != nil:
				c.err = err.Error()
			case !has:
				c.missing = true
			case len(caps) > 0: // an Ollama that does not say is taken at its word
				for _, r := range c.roles {
					if !slices.Contains(caps, r.need) && !slices.Contains(c.lacks, r.need) {
						c.lacks = append(c.lacks, r.need)
					}
				}
			}
			if c.missing || len(c.lacks) > 0 {
				c.need = llm.CapCompletion
				for _, r := range c.roles {
					if r.need != llm.CapCompletion {
						c.need = r.need
					}
				}
				c.alts = can(c.need)
				if c.missing && c.need != llm.CapCompletion && slices.ContainsFunc(c.roles, func(r role) bool { return r.key == "hub.model" }) {
					c.hubAlts = can(llm.CapCompletion)
				}
			}
			msg.models = append(msg.models, c)
		}
		return msg
	}
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
	if msg.gen != s.gen || s.checking || s.phase == setupReady {
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
func (m *Model) onSetup(msg setupMsg) tea.Cmd {
	s := &m.setup
	if msg.gen != s.gen {
		return nil
	}
	s.checking = false
	m.bar.ollama = ollamaState{checked: true, version: msg.version, err: msg.err}
	if msg.err != nil {
		s.phase, s.down, s.binary = setupDown, msg.err, msg.binary
		s.tries++
		s.wasDown = true
		return m.countdown(setupDelay(s.tries))
	}
	s.tries, s.down, s.version, s.models = 0, nil, msg.version, msg.models
	if !slices.ContainsFunc(s.models, modelCheck.problem) {
		if s.phase != setupReady && s.phase != setupChecking || s.wasDown {
			if !strings.HasPrefix(m.notice, "pulled ") && !strings.HasPrefix(m.notice, switchedNotice) {
				m.notice = "Ollama " + widget.OneLine(s.version) + " answers"
			}
			m.notice += " — the chat is ready"
			if m.input.value() != "" {
				m.notice += "; enter sends what you typed"
			}
		}
		s.phase, s.wasDown, s.hidden = setupReady, false, false
		return nil
	}
	s.phase = setupModels
	m.offerPull()
	if s.blocks() && m.pull == nil {
		// Notice an `ollama pull` run elsewhere.
		return m.countdown(5)
	}
	return nil
}

// offerPull opens the pull dialog for the first missing model not
// declined, unless another dialog is up.
func (m *Model) offerPull() {
	if m.pull != nil || m.overlay != overlayNone {
		return
	}
	for _, c := range m.setup.models {
		if _, no := m.setup.declined[c.model]; !c.missing || no {
			continue
		}
		m.pull = pull.New(c.model, pull.For{Setup: true, Why: roleNames(c.roles)})
		m.show(overlayPull)
		return
	}
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
		s.declined[model] = pullCancelled
	default:
		s.declined[model] = err.Error()
	}
	m.offerPull()
	if m.pull == nil && s.blocks() {
		return m.countdown(5)
	}
	return nil
}

// errDeclined is the answer n to a pull the panel offered.
var errDeclined = errors.New("declined")

// pullCancelled is why a model is not pulled when esc stopped its pull.
const pullCancelled = "pull cancelled"

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
	if s.phase != setupModels || s.hidden || s.blocks() {
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
		s.hidden = s.phase == setupModels
		return ""
	}
	switch s.phase {
	case setupChecking:
		return "not sent: checking Ollama first — your text stays here"
	case setupDown:
		return "not sent: Ollama is not answering — your text stays here; enter sends it once Ollama answers"
	}
	for _, c := range s.models {
		if c.blocking() {
			why := "is not installed"
			if !c.missing {
				why = "cannot " + capWords[llm.CapCompletion]
			}
			return fmt.Sprintf("not sent: %s (%s) %s — see above; your text stays here", widget.OneLine(c.model), roleNames(c.roles), why)
		}
	}
	return ""
}

// setupLost goes back to the panel when Ollama is found down after the
// chat was ready: by the status bar's check, or by a turn that could not
// reach it.
func (m *Model) setupLost(err error) tea.Cmd {
	s := &m.setup
	if s.opts == nil || s.phase == setupDown || s.checking {
		return nil
	}
	s.phase, s.down, s.hidden, s.wasDown = setupDown, err, false, true
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
	case msg.err != nil && s.phase == setupReady:
		return m.setupLost(msg.err)
	case msg.err == nil && s.phase == setupDown && !s.checking:
		return m.setupCheck() // up between two of our checks
	}
	return nil
}
