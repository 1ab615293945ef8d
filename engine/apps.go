package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/apps/clock"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/apps/notes"
	"github.com/bulkhead-dev/bulkhead/apps/shell"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/datadir"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Packs are names that enable several apps at once.
var Packs = map[string][]string{
	"builtin": {"files", "notes", "shell", "clock", "calc"},
	"demo":    {"metro_hail", "quick_ride", "mail", "drive", "health_companion", "travel_mate", "creative_muse", "symptom_solver", "calendar"},
}

// Install builds the registry of the enabled apps (names or packs).
//
// MCP servers (config mcp:) are installed when enable names them or holds
// the pack "mcp" (every configured server); configuring one alone does not
// install it. A server whose tool list is in cache, for its current
// configuration, is not started: its app is built from the cached list,
// and its spokes start their own instances on first use (a turn that
// routes to it). The others are started once, in parallel, to list their
// tools (at most mcp.DefaultStartTimeout), then stopped, and their lists
// are cached; a nil cache lists every server at every start. The catalog
// is the built-in one plus the entries the enabled servers declare. A
// server that cannot be installed is an error, like an unknown name.
func Install(cfg config.Config, cache *mcp.Cache, log *slog.Logger) (*apps.Registry, error) {
	reg, unlisted, err := InstallAll(cfg, cache, log)
	if len(unlisted) > 0 {
		errs := []error{err}
		for _, u := range unlisted {
			errs = append(errs, u.Err)
		}
		return nil, errors.Join(errs...)
	}
	return reg, err
}

// Unlisted is an enabled MCP server bulkhead runs without: it could not
// be started or listed (not cached yet, and its first start failed — an
// npx server with no network to download from, say).
type Unlisted struct {
	App string `json:"app"`
	Err error  `json:"-"`
	// Why is Err's text, and Fix how to list it.
	Why string `json:"why"`
	Fix string `json:"fix"`
	// Pending: it is being listed in the background, since Since (Now
	// says so; a turn waits for it).
	Pending bool      `json:"pending,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	// cached names the listing the cache held for it when it was left
	// out (mcp.Cache.Listed; "" for none): one it could not be built
	// from. Relist takes only another.
	cached string
	// listing is its listing in the background (listing.go), if any.
	listing *Listing
}

// InstallAll is Install, which leaves an enabled MCP server that could
// not be listed out (Unlisted) instead of failing: bulkhead starts
// without it, and says how to list it.
func InstallAll(cfg config.Config, cache *mcp.Cache, log *slog.Logger) (*apps.Registry, []Unlisted, error) {
	return installAll(cfg, cache, log, nil, nil)
}

// background lists a server in the background (Engine.listInBackground).
type background func(name string, s mcp.Server, cat *apps.Catalog, cache *mcp.Cache, log *slog.Logger) *Listing

// installAll is InstallAll, or, with again (a profile started again:
// Relist), InstallAll from the cache alone: no MCP server is started,
// and one of the servers left out before (was) stays as it was unless
// the cache lists it now otherwise than when it was left out. With bg
// (an engine's profile), a server the cache does not list is left out
// at once and listed in the background (listing.go).
func installAll(cfg config.Config, cache *mcp.Cache, log *slog.Logger, again *[]Unlisted, bg background) (*apps.Registry, []Unlisted, error) {
	enable, workspace, servers := cfg.Enable, cfg.Workspace, cfg.MCP
	names := enabled(enable, servers)
	demos := map[string]apps.App{}
	for _, a := range append(demo.Apps(), demo.NewCalendar()) {
		demos[a.Manifest().Name] = a
	}
	var list []apps.App
	var errs []error
	mcpApps, cat, unlisted, err := installMCP(names, cfg, cache, log, again, bg)
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
			store, err := Changes(cfg)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			list = append(list, shell.New(workspace, shell.Options{Private: private(cfg), Changes: store}))
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
		return nil, nil, errors.Join(errs...)
	}
	reg, err := apps.NewRegistry(cat, append(list, mcpApps...)...)
	return reg, unlisted, err
}

// MCPCache is where the engine caches MCP servers' tool lists: the
// directory mcp-cache in the data directory, a JSON file per app.
func MCPCache(dataDir string) *mcp.Cache { return mcp.NewCache(filepath.Join(dataDir, "mcp-cache")) }

// RefreshMCP lists the tools of every enabled MCP server live (each
// started once, in parallel, then stopped), refreshes their cached lists
// in the data directory, and checks each app as Install would; results
// are sorted by app. `bulkhead doctor` runs it.
func RefreshMCP(ctx context.Context, cfg config.Config) []mcp.Refreshed {
	var out []mcp.Refreshed
	cfgs, cat, err := mcpServers(enabled(cfg.Enable, cfg.MCP), cfg)
	if err != nil {
		out = append(out, mcp.Refreshed{App: "mcp", Err: err})
	}
	if cat == nil {
		return out
	}
	cache := MCPCache(cfg.DataDir)
	log, closeLog := commandLog(cfg, "doctor")
	defer closeLog()
	var mu sync.Mutex
	var wg sync.WaitGroup
	for n, s := range cfgs {
		wg.Go(func() {
			r := mcp.Refresh(ctx, n, s, cat, cache, log)
			mu.Lock()
			out = append(out, r)
			mu.Unlock()
		})
	}
	wg.Wait()
	slices.SortFunc(out, func(x, y mcp.Refreshed) int { return strings.Compare(x.App, y.App) })
	return out
}

// enabled resolves packs and names to the sorted app names.
func enabled(enable []string, servers map[string]config.MCPServer) []string {
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
	return slices.Compact(names)
}

// installMCP installs the enabled MCP servers as apps (from cache where it
// can), over the built-in catalog extended by their entries; with again,
// from the cache alone; with bg, from the cache, listing the others in
// the background (installAll).
func installMCP(names []string, cfg config.Config, cache *mcp.Cache, log *slog.Logger, again *[]Unlisted, bg background) ([]apps.App, *apps.Catalog, []Unlisted, error) {
	cfgs, cat, err := mcpServers(names, cfg)
	if cat == nil {
		return nil, nil, nil, err
	}
	errs := []error{err}
	var mu sync.Mutex
	var wg sync.WaitGroup
	var out []apps.App
	var unlisted []Unlisted
	listed := func(n string, s mcp.Server) (string, bool) {
		if cache == nil {
			return "", false
		}
		return cache.Listed(n, s)
	}
	open := mcp.Open
	var was []Unlisted
	if again != nil {
		// Started again: from the cache alone, no server is started.
		open, was = mcp.OpenCached, *again
	}
	for n, s := range cfgs {
		if i := slices.IndexFunc(was, func(u Unlisted) bool { return u.App == n }); i >= 0 {
			if sum, ok := listed(n, s); !ok || sum == was[i].cached {
				unlisted = append(unlisted, was[i])
				continue
			}
		}
		wg.Go(func() {
			tried, had := listed(n, s) // what open finds in the cache
			var a *mcp.App
			var err error
			var listing *Listing
			switch {
			case again == nil && bg != nil:
				// From the cache, or listed in the background: nothing
				// is started before the profile runs. What needs no
				// start to check is checked now.
				if err = mcp.Check(n, s); err == nil {
					if a, err = mcp.OpenCached(n, s, cat, cache, log); errors.Is(err, mcp.ErrUnlisted) {
						listing = bg(n, s, cat, cache, log)
					}
				}
			default:
				a, err = open(n, s, cat, cache, log)
			}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case listing != nil:
				u := Unlisted{App: n, Err: err, listing: listing}
				if had {
					u.cached = tried // the listing it could not be built from
				}
				unlisted = append(unlisted, u.Now())
			case errors.Is(err, mcp.ErrUnlisted):
				u := Unlisted{App: n, Err: err, Why: err.Error(), Fix: unlistedFix(n, s, err, had)}
				if had {
					// Listed, and left out all the same: not built from
					// that listing again (a listing saved meanwhile is
					// another).
					u.cached = tried
				}
				unlisted = append(unlisted, u)
				if log != nil {
					log.Warn("an MCP server could not be listed; bulkhead runs without it", "app", n, "err", err)
				}
			case err != nil:
				errs = append(errs, err)
			default:
				out = append(out, a)
			}
		})
	}
	wg.Wait()
	slices.SortFunc(unlisted, func(x, y Unlisted) int { return strings.Compare(x.App, y.App) })
	return out, cat, unlisted, errors.Join(errs...)
}

// mcpServers turns the enabled servers' config into mcp.Server, and builds
// the catalog: the built-in one plus the entries they declare. A nil
// catalog means none could be built. No server's sandbox may reach
// bulkhead's own folders (private), and a server started through a
// package runner keeps its cache in the config's AppsCache; no grant
// may reach the cache folder, which holds every app's, nor the apps'
// data folders (mcp.DataRoot), of which each server has its own.
// MCPServer is how a server is started and its tools mapped, as its
// config entry says (what its cached listing is keyed by); mcpServers
// adds its model, grants, folders and store.
func MCPServer(c config.MCPServer) mcp.Server {
	s := mcp.Server{Command: c.Command, Args: c.Args, Env: c.Env, Dir: c.Dir, URL: c.URL, Tools: map[string]mcp.ToolConfig{}}
	for t, tc := range c.Tools {
		s.Tools[t] = mcp.ToolConfig{Functionality: tc.Functionality, Effect: apps.Effect(tc.Effect), Key: tc.Key}
	}
	return s
}

func mcpServers(names []string, cfg config.Config) (map[string]mcp.Server, *apps.Catalog, error) {
	servers := cfg.MCP
	builtin := map[string]bool{"files": true, "notes": true, "shell": true, "clock": true, "calc": true}
	for _, a := range demo.Apps() {
		builtin[a.Manifest().Name] = true
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
		s := MCPServer(c)
		s.Model, s.Folders, s.Read = c.Model, c.Folders, c.Read
		for _, e := range c.Net {
			ep, err := sandbox.ParseEndpoint(e)
			if err != nil {
				errs = append(errs, fmt.Errorf("mcp.%s.net: %w", n, err))
				continue
			}
			s.Net = append(s.Net, ep)
		}
		s.Private = private(cfg)
		store, err := Changes(cfg)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.Changes = store
		if cfg.CacheDir != "" {
			s.Own = filepath.Join(cfg.AppsCache(), n)
			s.Reserved = []string{cfg.CacheDir}
		}
		if cfg.DataDir != "" {
			// Its own data, kept across its versions; no grant reaches
			// any app's.
			s.Data = mcp.DataFolder(cfg.DataDir, n)
			s.Reserved = append(s.Reserved, mcp.DataRoot(cfg.DataDir))
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
	return cfgs, cat, errors.Join(errs...)
}

// private are the folders of bulkhead's that no out-of-process app may
// reach, and that are empty in its sandbox: the data directory and the
// config folder.
func private(cfg config.Config) []string {
	var out []string
	if cfg.DataDir != "" {
		out = append(out, cfg.DataDir)
	}
	return append(out, config.DefaultConfigDir())
}

// Changes is the store of the change sets apps write in the folders
// they share with the user: the folder changes in the data directory,
// one Store per process (changes.Shared). A change to bulkhead's own
// config file (given with --config, in a folder an app may write) is
// warned as such.
//
// Without a data directory there is no store (nil): the folders apps are
// granted to write are read-only to them.
func Changes(cfg config.Config) (*changes.Store, error) {
	if cfg.DataDir == "" {
		return nil, nil
	}
	var keep []string
	if cfg.File != "" {
		keep = []string{cfg.File}
	}
	home, _ := os.UserHomeDir()
	return changes.Shared(filepath.Join(cfg.DataDir, "changes"), changes.Options{Keep: keep, Home: home})
}

// Reconfigured is what a config change did to an installed MCP app.
type Reconfigured struct {
	App     string
	Stopped int   // its processes stopped
	Err     error // the change needs bulkhead started again (or cfg is broken)
}

// Reconfigure hands the MCP apps installed in reg their config as cfg
// says it now (the config file changed): a process started under an
// earlier config of its app — other folders, another network — is
// stopped before the next call (mcp.App.Reconfigure).
func Reconfigure(reg *apps.Registry, cfg config.Config) []Reconfigured {
	var mine []string
	for _, n := range reg.Names() {
		if a, ok := reg.App(n); ok {
			if _, ok := a.(*mcp.App); ok {
				mine = append(mine, n)
			}
		}
	}
	if len(mine) == 0 {
		return nil
	}
	cfgs, _, err := mcpServers(mine, cfg)
	var out []Reconfigured
	for _, n := range mine {
		a, _ := reg.App(n)
		s, ok := cfgs[n]
		if !ok {
			// gone from the config, or broken there: nothing of the old
			// config may go on
			why := fmt.Errorf("mcp.%s is no longer in the config", n)
			if err != nil {
				why = err
			}
			out = append(out, Reconfigured{App: n, Stopped: a.(*mcp.App).Retire(why), Err: why})
			continue
		}
		stopped, rerr := a.(*mcp.App).Reconfigure(s)
		if stopped > 0 || rerr != nil {
			out = append(out, Reconfigured{App: n, Stopped: stopped, Err: rerr})
		}
	}
	return out
}

// ReloadMCP hands every running profile's MCP apps their config as cfg
// says it now (the serving process calls it when the config file
// changes).
func (e *Engine) ReloadMCP(cfg config.Config) []Reconfigured {
	e.pmu.Lock()
	var regs []*apps.Registry
	for _, p := range e.profiles {
		regs = append(regs, p.Apps)
	}
	e.pmu.Unlock()
	var out []Reconfigured
	for _, r := range regs {
		out = append(out, Reconfigure(r, cfg)...)
	}
	for _, r := range out {
		e.Log.Info("config changed: an MCP app's processes were stopped", "app", r.App, "stopped", r.Stopped, "err", fmt.Sprint(r.Err))
	}
	return out
}

// Unconfirmed stops the network of the MCP apps installed in reg: the
// config file does not load (why), so the network its net grants
// allowed can no longer be confirmed. Each app with any has its
// processes stopped, and starts the next without network until a
// config loads again (mcp.App.Unconfirmed); the apps whose processes
// were stopped are returned.
func Unconfirmed(reg *apps.Registry, why error) []Reconfigured {
	var out []Reconfigured
	for _, n := range reg.Names() {
		a, _ := reg.App(n)
		if m, ok := a.(*mcp.App); ok {
			if stopped := m.Unconfirmed(); stopped > 0 {
				out = append(out, Reconfigured{App: n, Stopped: stopped, Err: why})
			}
		}
	}
	return out
}

// LoadFailed is ReloadMCP for a config file that does not load (why):
// the MCP apps of every profile, running or started before the next
// Apply, have no network until a config loads again (Unconfirmed); the
// log says so, and names the apps whose processes were stopped.
func (e *Engine) LoadFailed(why error) []Reconfigured {
	e.pmu.Lock()
	first := e.unloaded == nil
	e.unloaded = why
	var regs []*apps.Registry
	for _, p := range e.profiles {
		regs = append(regs, p.Apps)
	}
	e.pmu.Unlock()
	var out []Reconfigured
	for _, r := range regs {
		out = append(out, Unconfirmed(r, why)...)
	}
	if first {
		e.Log.Warn("the config file does not load: the MCP apps have no network until it does", "err", fmt.Sprint(why))
	}
	for _, r := range out {
		e.Log.Warn("the config file does not load: an MCP app's processes were stopped, and start without network", "app", r.App, "stopped", r.Stopped)
	}
	return out
}

// ListMCP lists the configured MCP server name live — started once,
// asked for its network as apps.NetworkOf(ctx) asks (the terminal, for
// `bulkhead mcp add`) — caches its tool list in the data directory, and
// returns the app built from it: what a bulkhead started next installs
// without starting the server.
func ListMCP(ctx context.Context, cfg config.Config, name string) (*mcp.App, error) {
	cfgs, cat, err := mcpServers([]string{name}, cfg)
	if cat == nil {
		return nil, err
	}
	s, ok := cfgs[name]
	if !ok {
		if err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("no MCP server %q in the config", name)
	}
	cache := MCPCache(cfg.DataDir)
	cache.Forget(name)
	log, closeLog := commandLog(cfg, "mcp add")
	defer closeLog()
	return mcp.OpenContext(ctx, name, s, cat, cache, log)
}

// commandLog is a logger on the data directory's bulkhead.log for a
// command that starts MCP servers itself (doctor, `bulkhead mcp add`:
// by): their stderr is there, as that of the serving process's servers
// is, and as their messages say. Appended to, never rotated here (the
// serving process rotates it); nil when the file cannot be opened.
func commandLog(cfg config.Config, by string) (*slog.Logger, func()) {
	if cfg.DataDir == "" {
		return nil, func() {}
	}
	dd, err := datadir.Create(cfg.DataDir)
	if err != nil {
		return nil, func() {}
	}
	dd.Close()
	f, err := os.OpenFile(filepath.Join(cfg.DataDir, "bulkhead.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, func() {}
	}
	log := slog.New(slog.NewJSONHandler(f, &slog.HandlerOptions{Level: slog.LevelInfo})).With("component", "mcp", "by", by, "pid", os.Getpid())
	return log, func() { f.Close() }
}
