package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/apps/clock"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/apps/notes"
	"github.com/bulkhead-dev/bulkhead/apps/shell"
	"github.com/bulkhead-dev/bulkhead/config"
)

// Packs are names that enable several apps at once.
var Packs = map[string][]string{
	"builtin": {"files", "notes", "shell", "clock", "calc"},
	"demo":    {"metro_hail", "quick_ride", "mail", "drive", "health_companion", "travel_mate", "creative_muse", "symptom_solver"},
}

// Install builds the registry of the enabled apps (names or packs).
//
// MCP servers (config mcp:) are installed when enable names them or holds
// the pack "mcp" (every configured server); configuring one alone does not
// install it. Each is started once, in parallel, to list its tools (at
// most mcp.DefaultStartTimeout), then stopped: its spokes start their own
// instances on first use. The catalog is the built-in one plus the entries
// the enabled servers declare. A server that cannot be installed is an
// error, like an unknown name.
func Install(enable []string, workspace string, servers map[string]config.MCPServer, log *slog.Logger) (*apps.Registry, error) {
	var names []string
	for _, e := range enable {
		if e == "none" {
			continue
		}
		if e == "mcp" {
			for n := range servers {
				names = append(names, n)
			}
			continue
		}
		if pack, ok := Packs[e]; ok {
			names = append(names, pack...)
		} else {
			names = append(names, e)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	demos := map[string]apps.App{}
	for _, a := range demo.Apps() {
		demos[a.Manifest().Name] = a
	}
	var list []apps.App
	var errs []error
	mcpApps, cat, err := installMCP(names, servers, log)
	if err != nil {
		errs = append(errs, err)
	}
	for _, n := range names {
		if _, ok := servers[n]; ok {
			continue // installed by installMCP
		}
		switch n {
		case "files":
			list = append(list, files.New(workspace, files.Options{}))
		case "notes":
			list = append(list, notes.New())
		case "shell":
			list = append(list, shell.New(workspace, shell.Options{}))
		case "clock":
			list = append(list, clock.New(nil))
		case "calc":
			list = append(list, calc.New())
		default:
			if a, ok := demos[n]; ok {
				list = append(list, a)
			} else {
				errs = append(errs, fmt.Errorf("enable: no app or pack named %q (packs: builtin, demo, mcp)", n))
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return apps.NewRegistry(cat, append(list, mcpApps...)...)
}

// installMCP starts the enabled MCP servers to build their apps, over the
// built-in catalog extended by their entries.
func installMCP(names []string, servers map[string]config.MCPServer, log *slog.Logger) ([]apps.App, *apps.Catalog, error) {
	builtin := map[string]bool{"files": true, "notes": true, "shell": true, "clock": true, "calc": true}
	for _, a := range demo.Apps() {
		builtin[a.Manifest().Name] = true
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	entries := apps.Default().List()
	cfgs := map[string]mcp.Server{}
	var errs []error
	for _, n := range names {
		c, ok := servers[n]
		if !ok {
			continue
		}
		if builtin[n] {
			errs = append(errs, fmt.Errorf("mcp.%s: %q is the name of a built-in app; give the server another name", n, n))
			continue
		}
		s := mcp.Server{Command: c.Command, Args: c.Args, Env: c.Env, Dir: c.Dir, URL: c.URL, Model: c.Model, Tools: map[string]mcp.ToolConfig{}}
		for t, tc := range c.Tools {
			s.Tools[t] = mcp.ToolConfig{Functionality: tc.Functionality, Effect: apps.Effect(tc.Effect), Key: tc.Key}
		}
		for _, e := range c.Catalog {
			req, _ := json.Marshal(e.Request)
			resp, _ := json.Marshal(e.Response)
			s.Catalog = append(s.Catalog, mcp.CatalogEntry{Name: e.Name, Description: e.Description, Request: req, Response: resp, Effect: apps.Effect(e.Effect), Labels: e.Labels})
		}
		fs, err := mcp.CatalogEntries(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("mcp.%s.catalog: %w", n, err))
		}
		entries = append(entries, fs...)
		cfgs[n] = s
	}
	cat, err := apps.NewCatalog(entries...)
	if err != nil {
		return nil, nil, errors.Join(append(errs, err)...)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var out []apps.App
	for n, s := range cfgs {
		wg.Go(func() {
			a, err := mcp.New(n, s, cat, log)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			out = append(out, a)
		})
	}
	wg.Wait()
	return out, cat, errors.Join(errs...)
}
