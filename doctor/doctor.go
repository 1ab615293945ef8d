// Package doctor checks that bulkhead can run here and says how to fix
// what cannot: the configuration, the Ollama server, the configured
// models, the data directory, and the enabled MCP servers (each started
// and listed live, which refreshes its cached tool list). It is used by
// `bulkhead doctor`. Run is safe to call from several goroutines.
package doctor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// Check is one finding.
type Check struct {
	Name string
	OK   bool
	// Detail says what was found; Fix what to do when not OK.
	Detail, Fix string
}

// Options adds the checks that need more than the configuration.
type Options struct {
	// MCP starts every enabled MCP server, lists its tools, refreshes its
	// cached list and checks the app built from it (engine.RefreshMCP);
	// nil skips the MCP checks.
	MCP func(ctx context.Context, cfg config.Config) []mcp.Refreshed
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
	out = append(out, dataDir(cfg.DataDir)...)
	if opts.MCP != nil {
		out = append(out, mcpChecks(opts.MCP(ctx, cfg), cfg)...)
	}
	return out
}

// mcpChecks says, for each enabled MCP server, whether it started and
// listed its tools, and what became of its cached list.
func mcpChecks(rs []mcp.Refreshed, cfg config.Config) []Check {
	var out []Check
	where := cfg.File
	if where == "" {
		where = "the configuration"
	}
	for _, r := range rs {
		name := "MCP server " + r.App
		if r.Err != nil {
			fix := fmt.Sprintf("check mcp.%s in %s; its command must start an MCP server that speaks stdio (or its url one that speaks streamable HTTP)", r.App, where)
			if r.Server != "" {
				fix = fmt.Sprintf("fix mcp.%s in %s to fit the tools the server lists (see the detail)", r.App, where)
			}
			out = append(out, Check{Name: name, Detail: r.Err.Error(), Fix: fix})
			continue
		}
		cache := "tool list cached"
		switch {
		case r.Changed:
			cache = "tool list changed since it was cached; cache refreshed (a running bulkhead uses it once it starts again)"
		case r.Cached:
			cache = "cached tool list up to date"
		}
		out = append(out, Check{Name: name, OK: true, Detail: fmt.Sprintf("%s %s, %d tools; %s", r.Server, r.Version, r.Tools, cache)})
	}
	return out
}

func dataDir(dir string) []Check {
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
		if !c.OK {
			mark, ok = "✗", false
		}
		fmt.Fprintf(w, "%s %s: %s\n", mark, termtext.OneLine(c.Name), termtext.OneLine(c.Detail))
		if !c.OK && c.Fix != "" {
			fmt.Fprintf(w, "    fix: %s\n", termtext.OneLine(c.Fix))
		}
	}
	return ok
}
