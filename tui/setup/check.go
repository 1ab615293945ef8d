// Package setup is the setup panel's checks and drawing: what `bulkhead
// doctor` checks of Ollama and the configured models — the server
// answers, each model is installed and can serve its role (completion
// for the hub, tools for a spoke) — run as a Cmd (Run → Result), and the
// panel that shows what fails with the fix in place of the conversation
// (View). When the panel checks, counts down, offers a pull or goes is
// the root model's (tui/setup.go): this package holds no state of its own.
package setup

import (
	"context"
	"errors"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/llm"
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
// offered for pull at once (the pull dialog, tui/dialogs/pull); when the pull
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

// Phase is where the setup panel stands.
type Phase int

const (
	Ready    Phase = iota // no panel: every check passed (or no Options.Setup)
	Checking              // the first check is in flight
	Down                  // Ollama does not answer; the next check counts down
	Models                // a configured model is missing or cannot serve its role
)

// CapWords are the capabilities roles need, in words.
var CapWords = map[string]string{
	llm.CapTools:      "call tools",
	llm.CapCompletion: "write text (completion)",
	llm.CapThinking:   "think",
}

// Role is one use of a model: who uses it, the config key that sets it,
// and the capability it needs.
type Role struct{ Name, Key, Need string }

// Check is one configured model to check, and what the last check
// found of it.
type Check struct {
	Model   string
	Roles   []Role
	Missing bool
	lacks   []string // capabilities its roles need that the model has not
	need    string   // the strictest need of its roles
	alts    []string // installed models that have need
	hubAlts []string // installed models that can be the hub, when a missing one's need is more
	err     string   // the check itself failed
}

// Blocking reports whether the chat cannot answer at all with this
// model: the hub's or the spokes' (plain chat's) model is missing, or the
// hub's cannot write text.
func (c Check) Blocking() bool {
	for _, r := range c.Roles {
		core := r.Key == "hub.model" || r.Key == "spokes.model"
		if core && c.Missing || r.Key == "hub.model" && slices.Contains(c.lacks, llm.CapCompletion) {
			return true
		}
	}
	return false
}

// Problem reports whether the model cannot serve every role it has.
func (c Check) Problem() bool { return c.Missing || len(c.lacks) > 0 || c.err != "" }

// Result is the answer to one check.
type Result struct {
	Gen     int // the check's number: an older one is ignored
	Version string
	Err     error  // Ollama does not answer
	Binary  string // where the ollama binary is ("" not found), when it does not
	Models  []Check
}

// Run asks the server for its version, then each model whether it
// is installed and what it can do, off the UI loop.
// Server is what a check asks of Ollama (*llm.Client satisfies it).
type Server interface {
	Version(ctx context.Context) (string, error)
	HasModel(ctx context.Context, model string) (bool, error)
	Capabilities(ctx context.Context, model string) ([]string, error)
	ModelsThatCan(ctx context.Context, capability string) ([]string, error)
}

func Run(base context.Context, o Server, gen int, want []Check, find func() string) tea.Cmd {
	return func() tea.Msg {
		msg := Result{Gen: gen}
		ctx, cancel := context.WithTimeout(base, 3*time.Second)
		msg.Version, msg.Err = o.Version(ctx)
		cancel()
		if msg.Err != nil {
			msg.Binary = find()
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
			has, err := o.HasModel(ctx, c.Model)
			var caps []string
			if err == nil && has {
				caps, err = o.Capabilities(ctx, c.Model)
			}
			var unreachable *llm.UnreachableError
			switch {
			case errors.As(err, &unreachable):
				return Result{Gen: gen, Err: err, Binary: find()}
			case err != nil:
				c.err = err.Error()
			case !has:
				c.Missing = true
			case len(caps) > 0: // an Ollama that does not say is taken at its word
				for _, r := range c.Roles {
					if !slices.Contains(caps, r.Need) && !slices.Contains(c.lacks, r.Need) {
						c.lacks = append(c.lacks, r.Need)
					}
				}
			}
			if c.Missing || len(c.lacks) > 0 {
				c.need = llm.CapCompletion
				for _, r := range c.Roles {
					if r.Need != llm.CapCompletion {
						c.need = r.Need
					}
				}
				c.alts = can(c.need)
				if c.Missing && c.need != llm.CapCompletion && slices.ContainsFunc(c.Roles, func(r Role) bool { return r.Key == "hub.model" }) {
					c.hubAlts = can(llm.CapCompletion)
				}
			}
			msg.Models = append(msg.Models, c)
		}
		return msg
	}
}

// PullCancelled is why a model is not pulled when esc stopped its pull.
const PullCancelled = "pull cancelled"
