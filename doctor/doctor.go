// Package doctor checks that bulkhead can run here and says how to fix
// what cannot: the configuration, the Ollama server, the configured
// models (installed, and able to serve their role, as Ollama's /api/show
// capabilities say), the data directory, and the enabled MCP servers
// (each started and listed live, which refreshes its cached tool list).
// It is used by `bulkhead doctor`: Print writes the checks for a person,
// PrintJSON as one JSON document (`doctor --json`). Run is safe to call
// from several goroutines.
package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Check is one finding.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Note: it is not a failure, but worth saying (a server configured
	// and not enabled); printed with its Fix.
	Note bool `json:"note,omitempty"`
	// Detail says what was found; Fix what to do when not OK (or when a
	// Note).
	Detail string `json:"detail"`
	Fix    string `json:"fix,omitempty"`
}

// Options adds the checks that need more than the configuration.
type Options struct {
	// MCP starts every enabled MCP server, lists its tools, refreshes its
	// cached list and checks the app built from it (engine.RefreshMCP);
	// nil skips the MCP checks.
	MCP func(ctx context.Context, cfg config.Config) []mcp.Refreshed
	// Served says which process serves the data directory and how many
	// clients it has ("", false: none serves it); the database is then
	// that process's, and is not opened here.
	Served func(ctx context.Context) (string, bool)
	// ServedErr is why a process that serves the data directory could
	// not be asked ("" when none serves it, or it answered).
	ServedErr string
	// Relist, when a process serves the data directory, has it take the
	// tool lists the MCP checks just cached (serve.Client.Relist), once
	// they ran: it names the apps it installed from a new listing.
	Relist func(ctx context.Context) ([]string, error)
	// Sandbox probes the sandbox of out-of-process apps (nil:
	// sandbox.Probe with no grant).
	Sandbox func(ctx context.Context) sandbox.Report
	// Network says, once MCP ran, what became of the endpoints an app's
	// config names (nil: nothing is known), so that a server that could
	// not start without them gets the fix that gives them.
	Network func(app string) Network
}

// Run performs every check; it never stops at the first failure.
func Run(ctx context.Context, cfg config.Config, opts Options) []Check {
	var out []Check
	src := "built-in defaults (no config file)"
	if cfg.File != "" {
		src = cfg.File
	}
	out = append(out, Check{Name: "configuration", OK: true, Detail: src})

	var hosts []string
	for _, owner := range append([]string{"hub", "spokes"}, appNames(cfg)...) {
		if h := cfg.LLM(owner).Host; !slices.Contains(hosts, h) {
			hosts = append(hosts, h)
		}
	}
	reachable := map[string]bool{}
	for _, host := range hosts {
		c, err := llm.New(llm.Config{Host: host, Model: "probe"}, nil)
		if err != nil {
			out = append(out, Check{Name: "ollama " + host, Detail: err.Error(), Fix: "set ollama.host to an http(s) URL"})
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		v, err := c.Version(cctx)
		cancel()
		if err != nil {
			out = append(out, Check{Name: "ollama " + host, Detail: err.Error(),
				Fix: "start it with `ollama serve` (install: https://ollama.com/download), or set ollama.host / OLLAMA_HOST"})
			continue
		}
		reachable[host] = true
		out = append(out, Check{Name: "ollama " + host, OK: true, Detail: "version " + v})
	}

	type use struct{ model, host string }
	seen := map[use]bool{}
	for _, owner := range append([]string{"hub", "spokes"}, appNames(cfg)...) {
		lc := cfg.LLM(owner)
		u := use{lc.Model, lc.Host}
		if seen[u] || !reachable[lc.Host] {
			continue
		}
		seen[u] = true
		c, err := llm.New(lc, nil)
		if err != nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		has, err := c.HasModel(cctx, lc.Model)
		cancel()
		name := fmt.Sprintf("model %s on %s", lc.Model, lc.Host)
		switch {
		case err != nil:
			out = append(out, Check{Name: name, Detail: err.Error(), Fix: "check the Ollama server's log"})
		case !has:
			out = append(out, Check{Name: name, Detail: "not installed", Fix: fmt.Sprintf("ollama pull %s", lc.Model)})
		default:
			out = append(out, Check{Name: name, OK: true, Detail: "installed"})
		}
	}
	out = append(out, roleChecks(ctx, cfg, reachable)...)
	probe := opts.Sandbox
	if probe == nil {
		probe = func(ctx context.Context) sandbox.Report { return sandbox.Probe(ctx, sandbox.Policy{}) }
	}
	out = append(out, sandboxChecks(probe(ctx))...)
	if by, ok := servedBy(ctx, opts); ok {
		out = append(out, Check{Name: "data directory", OK: true, Detail: cfg.DataDir}, Check{Name: "memory database", OK: true, Detail: by})
	} else {
		out = append(out, dataDir(cfg.DataDir, opts.ServedErr)...)
	}
	if opts.MCP != nil {
		out = append(out, mcpChecks(opts.MCP(ctx, cfg), cfg, opts.Network)...)
		if opts.Relist != nil {
			out = append(out, relisted(opts.Relist(ctx)))
		}
	}
	return append(out, notEnabled(cfg)...)
}

// A role is one use of a model: the hub, the spokes, or one app's spoke
// with a model or host of its own; key is the config key that sets it
// and need the capability it needs of its model.
type role struct{ name, key, need, model, host string }

// roles lists the configured roles: the hub needs completion (its plans
// are structured output), every spoke needs tools (an app's functions are
// its tools). No role asks for thinking: the hub's calls turn it off and
// the spokes leave it to the model, so a model that thinks is shown to.
func roles(cfg config.Config) []role {
	hub, spokes := cfg.LLM("hub"), cfg.LLM("spokes")
	out := []role{
		{"hub", "hub.model", llm.CapCompletion, hub.Model, hub.Host},
		{"spokes", "spokes.model", llm.CapTools, spokes.Model, spokes.Host},
	}
	for _, app := range appNames(cfg) {
		lc := cfg.LLM(app)
		if lc.Model == spokes.Model && lc.Host == spokes.Host {
			continue
		}
		key := "apps." + app + ".model"
		if _, ok := cfg.Apps[app]; !ok || cfg.Apps[app].Model == "" && cfg.MCP[app].Model != "" {
			key = "mcp." + app + ".model"
		}
		out = append(out, role{app + "'s spoke", key, llm.CapTools, lc.Model, lc.Host})
	}
	return out
}

// capWords says what a capability lets a model do.
var capWords = map[string]string{
	llm.CapTools:      "call tools",
	llm.CapCompletion: "write text (completion)",
	llm.CapThinking:   "think",
}

// needWhy says why a role needs a capability.
var needWhy = map[string]string{
	llm.CapTools:      "a spoke needs: an app's functions are its tools",
	llm.CapCompletion: "the hub needs: its plans are structured output",
}

// roleChecks asks the server (/api/show) what each installed configured
// model can do and says whether it can serve its role; one that cannot
// is named with its role, the installed models that can, and the key or
// flag that chooses another. A missing model is left to the model check.
func roleChecks(ctx context.Context, cfg config.Config, reachable map[string]bool) []Check {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	clients := map[string]*llm.Client{}
	file := cfg.File
	if file == "" {
		file = config.DefaultFile()
	}
	var out []Check
	for _, r := range roles(cfg) {
		if !reachable[r.host] {
			continue
		}
		c := clients[r.host]
		if c == nil {
			var err error
			if c, err = llm.New(llm.Config{Host: r.host, Model: r.model}, nil); err != nil {
				continue
			}
			clients[r.host] = c
		}
		name := fmt.Sprintf("role %s (%s = %s)", r.name, r.key, r.model)
		if r.host != cfg.Ollama.Host {
			name += " on " + r.host
		}
		caps, err := c.Capabilities(ctx, r.model)
		var missing *llm.ModelMissingError
		switch {
		case errors.As(err, &missing):
			continue
		case err != nil:
			out = append(out, Check{Name: name, Detail: "could not ask what it can do: " + err.Error(), Fix: "check the Ollama server's log"})
			continue
		case len(caps) == 0:
			out = append(out, Check{Name: name, OK: true, Detail: "Ollama does not say what it can do (an older server); taken as able"})
			continue
		case slices.Contains(caps, r.need):
			detail := "can " + capWords[r.need]
			if slices.Contains(caps, llm.CapThinking) {
				detail += "; thinks (shown with ctrl+t)"
			}
			out = append(out, Check{Name: name, OK: true, Detail: detail})
			continue
		}
		alts, err := c.ModelsThatCan(ctx, r.need)
		fix := "no installed model can " + capWords[r.need] + ": pull one that can, e.g. `ollama pull " + config.DefaultModel + "`"
		switch {
		case err != nil:
			fix = "choose a model that can " + capWords[r.need]
		case len(alts) > 0:
			fix = "installed models that can " + capWords[r.need] + ": " + strings.Join(alts, ", ")
		}
		how := "; choose one with `bulkhead --model NAME` (the hub and every spoke), or set " + r.key + " in " + file
		if !strings.HasPrefix(r.key, "hub.") && !strings.HasPrefix(r.key, "spokes.") {
			how = "; choose one by setting " + r.key + " in " + file
		} else if from := cfg.From[r.key]; from != "" && from != "default" && from != file {
			how += " (now set by " + from + ")"
		}
		out = append(out, Check{Name: name, Detail: "cannot " + capWords[r.need] + ", which " + needWhy[r.need] + " (Ollama lists: " + strings.Join(caps, ", ") + ")", Fix: fix + how})
	}
	return out
}

// servedBy asks opts.Served, if set.
func servedBy(ctx context.Context, opts Options) (string, bool) {
	if opts.Served == nil {
		return "", false
	}
	return opts.Served(ctx)
}

func dataDir(dir, servedErr string) []Check {
	name := "data directory " + dir
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return []Check{{Name: name, Detail: err.Error(), Fix: "set data_dir (--data-dir, BULKHEAD_DATA_DIR) to a directory you can write"}}
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return []Check{{Name: name, Detail: "not writable: " + err.Error(), Fix: "fix its permissions or set data_dir to a directory you can write"}}
	}
	f.Close()
	os.Remove(f.Name())
	out := []Check{{Name: name, OK: true, Detail: "writable"}}
	st, err := memory.Open(filepath.Join(dir, "db"), memory.Options{})
	switch {
	case errors.Is(err, memory.ErrInUse) && servedErr != "":
		out = append(out, Check{Name: "memory database", Detail: "held by the process serving this data directory, which did not answer this doctor: " + servedErr,
			Fix: "close the bulkhead windows and scripts on this data directory: the serving process exits once none has been connected for its --idle time, and the next bulkhead starts one of its own build; or use another --data-dir"})
	case errors.Is(err, memory.ErrInUse):
		out = append(out, Check{Name: "memory database", Detail: "in use by another bulkhead process", Fix: "close the other bulkhead, or use another --data-dir"})
	case err != nil:
		out = append(out, Check{Name: "memory database", Detail: err.Error(), Fix: "move the damaged " + filepath.Join(dir, "db") + " aside; bulkhead starts a new one"})
	default:
		st.Close()
		out = append(out, Check{Name: "memory database", OK: true, Detail: "opens"})
	}
	return out
}

func appNames(cfg config.Config) []string {
	var out []string
	for name := range cfg.Apps {
		out = append(out, name)
	}
	for name := range cfg.MCP {
		if _, dup := cfg.Apps[name]; !dup {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Print writes the checks, one line each with a fix under each failure,
// and reports whether all passed. A detail can be the server's words (its
// version, its error), so each field is printed on its line with control
// characters shown as visible escapes (internal/termtext).
func Print(w io.Writer, checks []Check) bool {
	ok := true
	for _, c := range checks {
		mark := "✓"
		switch {
		case !c.OK:
			mark, ok = "✗", false
		case c.Note:
			mark = "•"
		}
		fmt.Fprintf(w, "%s %s: %s\n", mark, termtext.OneLine(c.Name), termtext.OneLine(c.Detail))
		if (!c.OK || c.Note) && c.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", termtext.OneLine(c.Fix))
		}
	}
	return ok
}

// Report is what PrintJSON writes: OK is false when a check failed.
type Report struct {
	OK     bool    `json:"ok"`
	Checks []Check `json:"checks"`
}

// PrintJSON writes the checks as one JSON document (Report), indented,
// and reports whether all passed. A string that holds a control
// character shows it as a visible escape (internal/termtext.JSON), as
// Print does.
func PrintJSON(w io.Writer, checks []Check) (bool, error) {
	r := Report{OK: true, Checks: checks}
	if r.Checks == nil {
		r.Checks = []Check{}
	}
	for _, c := range checks {
		r.OK = r.OK && c.OK
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return r.OK, err
	}
	_, err = w.Write(append(termtext.JSON(b), '\n'))
	return r.OK, err
}
