package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/apps/notes"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/headless"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// The two modes a model runs in.
const (
	ModeIsolated = "isolated" // bulkhead: the hub, a spoke per app, dialogs
	ModeVanilla  = "vanilla"  // the unsafe baseline: one context, nothing asked
)

// Policies that answer the dialogs of an isolated run.
const (
	// PolicyExpected, PolicyOnce and PolicyDeny are --on-prompt's: only
	// what the hub judged routine (expected, reversible, no concern) is
	// allowed; every dialog is allowed once, attacks included; none is.
	PolicyExpected = "expected"
	// PolicyJudged allows once what the plan declared and denies what the
	// hub says the user did not ask for: a person who accepts "cannot be
	// undone" and "carries financial data" for what they asked, and says
	// no to "NOT expected", to values that did not come from them, to
	// instruction-like content and to a choice among apps.
	PolicyJudged = "judged"
	PolicyOnce   = "once"
	PolicyDeny   = "deny"
)

// Policies lists the policies, the default first.
var Policies = []string{PolicyExpected, PolicyJudged, PolicyOnce, PolicyDeny}

// Options says what to run.
type Options struct {
	// Config is the user's: its Ollama host, limits, keep-alive and
	// context size are used; apps, rules, memory and folders are the
	// suite's own, in a fresh data directory and workspace per run.
	Config config.Config
	Models []string // at least one
	Modes  []string // default: isolated and vanilla
	Policy string   // default PolicyExpected
	Tasks  []string // task ids to run (default: all)
	// NoInjections runs the tasks without their attacked variants.
	NoInjections bool
	Suite        *Suite // default: Builtin()
	// Scratch is where each run's data directory and workspace are made
	// and removed (default: the system's temporary folder).
	Scratch string
	// RunTimeout bounds one run (default 5 minutes).
	RunTimeout time.Duration
	// Progress, if set, is told before each run and once at the end.
	Progress func(Progress)
	// Order is what is known of the model servers — which request goes
	// first, learned — shared by the runs as a user's data directory
	// keeps it across bulkheads (nil: one for this Run, learned anew).
	Order *hub.ServerOrder
}

// Progress is where a bench stands.
type Progress struct {
	Done, Total       int
	Model, Mode, Name string
}

// Result is one run: a task (and injection) by one model in one mode.
type Result struct {
	Model     string `json:"model"`
	Mode      string `json:"mode"`
	Run       string `json:"run"`
	Task      string `json:"task"`
	Injection string `json:"injection,omitempty"`
	Carrier   string `json:"carrier,omitempty"`
	// Completed: the task's check held of the state it left; Failure
	// says why not.
	Completed bool   `json:"completed"`
	Failure   string `json:"failure,omitempty"`
	// Attacked: the injection's goal happened.
	Attacked bool `json:"attacked,omitempty"`
	// Dialogs put to the policy; Needed, those for what the plan declared
	// (what the task itself asks for: the rest the hub found NOT expected);
	// Allowed, those the policy allowed.
	Dialogs int `json:"dialogs"`
	Needed  int `json:"needed"`
	Allowed int `json:"allowed"`
	// Model calls and tokens of the turn, from Ollama's own counters.
	// Calls counts a draft that was withdrawn (Withdrawn) if its call had
	// ended by then.
	Calls        int `json:"calls"`
	PromptTokens int `json:"prompt_tokens"`
	EvalTokens   int `json:"eval_tokens"`
	// FirstTokenMS is the time to the first answer token (-1: none came);
	// TotalMS the time to the end of the turn.
	FirstTokenMS float64 `json:"first_token_ms"`
	TotalMS      float64 `json:"total_ms"`
	// PromptMS is the time the server spent reading the turn's prompts
	// (prompt_eval_duration, every call together): a prompt whose prefix
	// the server had cached reads in a fraction of the time.
	PromptMS float64 `json:"prompt_ms"`
	// Planned: the hub planned the turn (isolated mode); Retried and
	// Fallback: its planner's first plan was unusable, or both were.
	Planned bool `json:"planned,omitempty"`
	// Withdrawn: a draft of the answer came and was withdrawn (the plan
	// needed apps): its words were no answer.
	Withdrawn bool   `json:"withdrawn,omitempty"`
	Retried   bool   `json:"retried,omitempty"`
	Fallback  bool   `json:"fallback,omitempty"`
	Error     string `json:"error,omitempty"`
}

// Run runs the suite and returns a result per model, mode and run, in that
// order. A run that fails (the model errs, the turn is cut) is a result
// with Error set, not completed; only a setup failure (no model given, a
// data directory that cannot be made) or a cancelled ctx is an error, with
// the results so far.
func Run(ctx context.Context, opts Options) ([]Result, error) {
	if len(opts.Models) == 0 {
		return nil, errors.New("no model to run the bench with")
	}
	if opts.Order == nil {
		opts.Order = hub.OpenServerOrder("")
	}
	modes := opts.Modes
	if len(modes) == 0 {
		modes = []string{ModeIsolated, ModeVanilla}
	}
	for _, m := range modes {
		if m != ModeIsolated && m != ModeVanilla {
			return nil, fmt.Errorf("unknown mode %q (isolated or vanilla)", m)
		}
	}
	policy := opts.Policy
	if policy == "" {
		policy = PolicyExpected
	}
	prompter, err := policyPrompter(policy)
	if err != nil {
		return nil, err
	}
	suite := Builtin()
	if opts.Suite != nil {
		suite = *opts.Suite
	}
	runs := suite.Cases(opts.Tasks, !opts.NoInjections)
	if len(runs) == 0 {
		return nil, fmt.Errorf("no task matches %s", strings.Join(opts.Tasks, ", "))
	}
	timeout := opts.RunTimeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	total := len(opts.Models) * len(modes) * len(runs)
	var out []Result
	for _, model := range opts.Models {
		for _, mode := range modes {
			for _, r := range runs {
				if opts.Progress != nil {
					opts.Progress(Progress{Done: len(out), Total: total, Model: model, Mode: mode, Name: r.Name()})
				}
				if err := ctx.Err(); err != nil {
					return out, err
				}
				rctx, cancel := context.WithTimeout(ctx, timeout)
				res, err := runOne(rctx, opts, suite.Env, model, mode, prompter, r)
				cancel()
				if err != nil {
					return out, err
				}
				if ctx.Err() != nil {
					return out, ctx.Err()
				}
				out = append(out, res)
			}
		}
	}
	if opts.Progress != nil {
		opts.Progress(Progress{Done: total, Total: total})
	}
	return out, nil
}

// policyPrompter is the policy of that name: the scripts' own
// (--on-prompt) for expected, once and deny, and judged, the bench's.
func policyPrompter(name string) (permissions.Prompter, error) {
	switch name {
	case PolicyJudged, PolicyExpected, PolicyOnce, PolicyDeny:
		return headless.OnPrompt(name)
	}
	return nil, fmt.Errorf("unknown policy %q (%s)", name, strings.Join(Policies, ", "))
}

// counting counts the dialogs put to a policy.
type counting struct {
	p permissions.Prompter

	mu                       sync.Mutex
	dialogs, needed, allowed int
}

func (c *counting) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	d, err := c.p.Prompt(ctx, r)
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dialogs++
	if headless.Declared(r) {
		c.needed++
	}
	if err == nil && d.Answer != permissions.AnswerDeny {
		c.allowed++
	}
	return d, err
}

// runOne runs r in a data directory and a workspace of its own.
func runOne(ctx context.Context, opts Options, base Env, model, mode string, policy permissions.Prompter, r Case) (Result, error) {
	res := Result{Model: model, Mode: mode, Run: r.Name(), Task: r.Task.ID, Carrier: r.Carrier, FirstTokenMS: -1}
	if r.Injection != nil {
		res.Injection = r.Injection.ID
	}
	text := ""
	if r.Injection != nil {
		text = r.Injection.Text
	}
	env := base.With(r.Carrier, text)

	dir, err := os.MkdirTemp(opts.Scratch, "bulkhead-bench-")
	if err != nil {
		return res, fmt.Errorf("bench scratch folder: %w", err)
	}
	defer os.RemoveAll(dir)
	ws := filepath.Join(dir, "workspace")
	if err := writeFiles(ws, env.Files); err != nil {
		return res, err
	}
	cfg := opts.Config
	cfg.File = ""
	cfg.DataDir = filepath.Join(dir, "data")
	cfg.Workspace = ws
	cfg.Enable = []string{"builtin", "demo"}
	cfg.MCP, cfg.Apps, cfg.Rules = nil, nil, nil
	cfg.Hub.Model, cfg.Spokes.Model = model, model
	// One turn per task: no long-term memory upkeep after it.
	cfg.Memory = config.Memory{}

	count := &counting{p: policy}
	e, err := engine.Open(ctx, cfg, engine.Options{Vanilla: mode == ModeVanilla, Prompter: count, Order: opts.Order})
	if err != nil {
		return res, fmt.Errorf("bench run %s: %w", r.Name(), err)
	}
	defer e.Close()
	seeded, err := seed(ctx, e.Store, env)
	if err != nil {
		return res, fmt.Errorf("bench run %s: set the apps up: %w", r.Name(), err)
	}
	chat, err := e.Hub.NewChat(false)
	if err != nil {
		return res, fmt.Errorf("bench run %s: %w", r.Name(), err)
	}
	start := time.Now()
	// The answer's first words: its first token, or the first piece of a
	// draft that was kept (a withdrawn draft's pieces were no answer).
	var first, drafted time.Time
	var usage llm.Usage
	turn, err := e.Hub.Ask(ctx, chat.ID, r.Task.Query, func(ev hub.Event) {
		switch ev.Kind {
		case hub.EventDraft:
			if drafted.IsZero() && ev.Text != "" {
				drafted = time.Now()
			}
		case hub.EventDraftWithdrawn:
			drafted, res.Withdrawn = time.Time{}, true
		case hub.EventToken:
			if first.IsZero() && ev.Text != "" {
				first = time.Now()
			}
		case hub.EventAnswer, hub.EventError:
			usage = ev.Usage
		case hub.EventPlan:
			if ev.Plan != nil && mode == ModeIsolated {
				res.Planned, res.Retried, res.Fallback = true, ev.Plan.Retried || ev.Plan.Fallback, ev.Plan.Fallback
			}
		}
	})
	res.TotalMS = ms(time.Since(start))
	if !drafted.IsZero() && (first.IsZero() || drafted.Before(first)) {
		first = drafted
	}
	if !first.IsZero() {
		res.FirstTokenMS = ms(first.Sub(start))
	}
	res.PromptMS = ms(usage.PromptDuration)
	if err != nil {
		res.Error = err.Error()
	} else if turn.Status != memory.StatusOK {
		res.Error = fmt.Sprintf("the turn ended %s: %s", turn.Status, turn.Error)
	}
	res.Calls, res.PromptTokens, res.EvalTokens = turn.Usage.Calls, turn.Usage.PromptTokens, turn.Usage.EvalTokens
	count.mu.Lock()
	res.Dialogs, res.Needed, res.Allowed = count.dialogs, count.needed, count.allowed
	count.mu.Unlock()

	st, err := readState(ctx, e.Store, ws, env, seeded)
	if err != nil {
		return res, fmt.Errorf("bench run %s: read the apps' state: %w", r.Name(), err)
	}
	st.Answer = turn.Answer
	if cerr := r.Task.Check(st); cerr != nil {
		res.Failure = cerr.Error()
	} else {
		res.Completed = true
	}
	if r.Injection != nil {
		res.Attacked = r.Injection.Succeeded(st)
	}
	return res, nil
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

func writeFiles(root string, files map[string]string) error {
	if err := os.MkdirAll(root, 0o700); err != nil {
		return fmt.Errorf("bench workspace: %w", err)
	}
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o700); err != nil {
			return fmt.Errorf("bench workspace: %w", err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			return fmt.Errorf("bench workspace: %w", err)
		}
	}
	return nil
}

// spokes opens the namespaces of the apps a run sets up and reads, as
// the hub opens them for each app's spoke (hub.SpokeOwner).
func spokes(st *memory.Store) (map[string]*memory.Namespace, error) {
	out := map[string]*memory.Namespace{}
	for _, app := range []string{"mail", "drive", "calendar", "notes", "health_companion", "travel_mate"} {
		ns, err := st.Namespace(hub.SpokeOwner(app))
		if err != nil {
			return nil, err
		}
		out[app] = ns
	}
	return out, nil
}

// seed writes env into the apps' namespaces, before any app has used
// them, and returns the ids of the notes it added.
func seed(ctx context.Context, st *memory.Store, env Env) ([]string, error) {
	kv, err := spokes(st)
	if err != nil {
		return nil, err
	}
	nf := memory.ErrNotFound
	if err := errors.Join(demo.SeedMail(kv["mail"], nf, env.Inbox), demo.SeedDrive(kv["drive"], nf, env.Docs),
		demo.SeedCalendar(kv["calendar"], nf, env.Events)); err != nil {
		return nil, err
	}
	var ids []string
	app := notes.New()
	for _, n := range env.Notes {
		args, _ := json.Marshal(map[string]string{"title": n.Title, "body": n.Body})
		out, err := app.Call(ctx, apps.Call{Function: "add", Args: args, Memory: kv["notes"], NotFound: nf})
		if err != nil {
			return nil, err
		}
		var v struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(out, &v); err != nil {
			return nil, err
		}
		ids = append(ids, v.ID)
	}
	return ids, nil
}

// readState reads what the apps hold after a run.
func readState(ctx context.Context, st *memory.Store, ws string, env Env, seeded []string) (State, error) {
	var s State
	kv, err := spokes(st)
	if err != nil {
		return s, err
	}
	nf := memory.ErrNotFound
	var errs [6]error
	s.Inbox, errs[0] = demo.Inbox(kv["mail"], nf)
	s.Sent, errs[1] = demo.Sent(kv["mail"], nf)
	s.Appointments, errs[2] = demo.SymptomLog(kv["health_companion"], nf)
	s.Trips, errs[3] = demo.Bookings(kv["travel_mate"], nf)
	s.Events, errs[4] = demo.Events(kv["calendar"], nf)
	var out json.RawMessage
	out, errs[5] = notes.New().Call(ctx, apps.Call{Function: "search", Args: json.RawMessage(`{"query":""}`), Memory: kv["notes"], NotFound: nf})
	if err := errors.Join(errs[:]...); err != nil {
		return s, err
	}
	var list struct {
		Notes []Note `json:"notes"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return s, err
	}
	s.Notes = list.Notes
	for _, n := range s.Notes {
		if !slices.Contains(seeded, n.ID) {
			s.Added = append(s.Added, n)
		}
	}
	s.Files, s.Written = map[string]string{}, map[string]string{}
	err = filepath.WalkDir(ws, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ws, p)
		rel = filepath.ToSlash(rel)
		s.Files[rel] = string(b)
		if was, ok := env.Files[rel]; !ok || was != string(b) {
			s.Written[rel] = string(b)
		}
		return nil
	})
	return s, err
}
