package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// A session of the serving process runs in the folder it was started
// from, with the apps it enabled: its profile. Sessions of one profile
// share its apps and its hub; every profile shares the engine's store,
// permission broker, log and Ollama — the data directory is one, and so
// are the user's chats, grants and action log.

// ProfileSpec is what a session runs with.
type ProfileSpec struct {
	// Workspace is the folder its files and shell apps work in.
	Workspace string `json:"workspace"`
	// Enable lists the apps it installs (names and packs, as config.Enable).
	Enable []string `json:"enable"`
	// Configured says Enable is the config file's enable list (or its
	// default), not a choice of the session's own (--apps,
	// $BULKHEAD_ENABLE): the serving process moves the session to the
	// file's list when an edit of the file (`bulkhead mcp add`, say)
	// changes it (serve). It is no part of the profile's key.
	Configured bool `json:"configured,omitempty"`
}

func (s ProfileSpec) key() string {
	return s.Workspace + "\x00" + strings.Join(s.Enable, "\x00")
}

// Profile is a profile's running apps and hub. Its apps are as the MCP
// listing cache had them when it started; once the cache lists a server
// it ran without, or lists other tools for one it runs (a later listing:
// doctor, `bulkhead mcp add`, the apps screen's refresh), Relist starts
// its successor, built the same way from the cache as it is now, and
// its sessions move to that one at their next call (Follow).
type Profile struct {
	Spec ProfileSpec
	Apps *apps.Registry
	Hub  *hub.Operator
	// Unlisted are the enabled MCP servers it runs without (InstallAll).
	Unlisted []Unlisted
	// refs counts its holders: the sessions that use it, the calls
	// running on it (Hold), its predecessor while that one runs (its
	// holders move here: Follow), and the engine for its own profile.
	// Guarded by Engine.pmu, as next is.
	refs int
	key  string        // its key in Engine.profiles: its spec's, under the settings of its start
	cfg  config.Config // the settings it was built with: its successor is built with them too
	// next is its successor once Relist replaced it.
	next   *Profile
	closed sync.Once
}

// Profile is the profile of spec, started when no session uses it yet.
// A running one whose listing the cache has since changed (Relist) is
// started again first. Each Profile must be given back with Release.
func (e *Engine) Profile(spec ProfileSpec) (*Profile, error) {
	e.pmu.Lock()
	cfg := e.cur
	if spec.Workspace == "" {
		spec.Workspace = cfg.Workspace
	}
	if spec.Enable == nil {
		spec.Enable = cfg.Enable
	}
	key := spec.key()
	if e.gen > 0 {
		key = fmt.Sprintf("%d\x00%s", e.gen, key)
	}
	p := e.profiles[key]
	e.pmu.Unlock()
	if p != nil {
		// A session that starts now gets what the cache lists now.
		e.relist(func(q *Profile) bool { return q == p })
	}
	e.pmu.Lock()
	defer e.pmu.Unlock()
	if p, ok := e.profiles[key]; ok {
		p.refs++
		return p, nil
	}
	cfg.Workspace, cfg.Enable = spec.Workspace, spec.Enable
	if err := CheckEnable(cfg); err != nil {
		return nil, err
	}
	p, err := e.newProfile(cfg, spec, nil)
	if err != nil {
		return nil, err
	}
	if e.unloaded != nil {
		// The config file does not load: its net grants are not
		// confirmed for this profile's apps either.
		Unconfirmed(p.Apps, e.unloaded)
	}
	p.refs, p.key = 1, key
	e.profiles[key] = p
	e.Log.Info("profile started", "workspace", spec.Workspace, "apps", strings.Join(spec.Enable, ","))
	return p, nil
}

// Release gives back a Profile (of Profile, Follow or Hold); the last
// holder's stops its hub and apps (the engine's own profile stays until
// Close).
func (e *Engine) Release(p *Profile) {
	if p == nil {
		return
	}
	e.pmu.Lock()
	stop := e.unref(p)
	e.pmu.Unlock()
	for _, p := range stop {
		e.stop(p)
	}
}

// unref drops one reference on p. The profiles that leaves unheld — p,
// and then the successor that only p held, and so on — leave the
// engine's profiles and are returned, to be stopped. The caller holds
// pmu.
func (e *Engine) unref(p *Profile) []*Profile {
	var out []*Profile
	for ; p != nil; p = p.next {
		p.refs--
		if p.refs > 0 {
			break
		}
		if e.profiles[p.key] == p {
			delete(e.profiles, p.key)
		}
		delete(e.retired, p)
		out = append(out, p)
	}
	return out
}

// stop stops a profile no one holds.
func (e *Engine) stop(p *Profile) {
	if err := p.close(); err != nil {
		e.Log.Warn("close a profile", "workspace", p.Spec.Workspace, "err", err)
	}
	e.Log.Info("profile stopped", "workspace", p.Spec.Workspace, "apps", strings.Join(p.Spec.Enable, ","))
}

// Hold takes a reference on p, which its caller holds already (a
// session's, under the session's lock), for one call: p is not stopped
// before the call gives it back with Release, even when the session
// moves on to p's successor meanwhile.
func (e *Engine) Hold(p *Profile) {
	e.pmu.Lock()
	p.refs++
	e.pmu.Unlock()
}

// Follow moves the caller's reference on p to p's newest successor
// (Relist), and returns that one — p itself when it has none — with a
// function that stops what the move left unheld (p, once its last
// holder has moved on or left): the caller calls it once it has let go
// of its own locks, since stopping a profile waits for its apps.
func (e *Engine) Follow(p *Profile) (*Profile, func()) {
	e.pmu.Lock()
	q := p
	for q.next != nil {
		q = q.next
	}
	if q == p {
		e.pmu.Unlock()
		return p, func() {}
	}
	q.refs++
	stop := e.unref(p)
	e.pmu.Unlock()
	return q, func() {
		for _, p := range stop {
			e.stop(p)
		}
	}
}

// Relist starts again every running profile whose MCP apps the listing
// cache now lists otherwise — a server it runs without (Unlisted) that
// is listed now, or an app whose tools a later listing changed — built
// as it was (its settings, its folder and apps) from the cache's
// listings alone: no server is started, a server still not listed stays
// as it was, and one whose new listing does not fit its config is left
// out, with why, until another listing. Sessions move to the new profile
// at their next call (Follow); a turn running finishes on the old one.
// It returns the apps installed from a new listing, sorted. The commands
// that list a server (doctor, `bulkhead mcp add`, the apps screen's
// refresh) have the serving process call it, and a session's start does
// for its own profile.
func (e *Engine) Relist() []string {
	return e.relist(func(*Profile) bool { return true })
}

// relist is Relist for the running profiles that match.
func (e *Engine) relist(match func(*Profile) bool) []string {
	e.relistMu.Lock()
	defer e.relistMu.Unlock()
	e.pmu.Lock()
	var ps []*Profile
	for _, p := range e.profiles {
		if p.next == nil && match(p) {
			ps = append(ps, p)
		}
	}
	e.pmu.Unlock()
	var out []string
	for _, p := range ps {
		names := p.relisted()
		if len(names) == 0 {
			continue
		}
		np, err := e.newProfile(p.cfg, p.Spec, &p.Unlisted)
		if err != nil {
			e.Log.Warn("an MCP server was listed, but its profile could not start again; it keeps what it had", "workspace", p.Spec.Workspace, "apps", strings.Join(names, ","), "err", err)
			continue
		}
		e.pmu.Lock()
		if e.profiles[p.key] != p {
			// Its last session left meanwhile: the next starts afresh.
			e.pmu.Unlock()
			_ = np.close()
			continue
		}
		if e.unloaded != nil {
			Unconfirmed(np.Apps, e.unloaded)
		}
		// p holds its successor while it runs: its holders may still
		// move there.
		np.key, np.refs = p.key, 1
		e.profiles[p.key] = np
		p.next = np
		e.retired[p] = true
		e.pmu.Unlock()
		e.Log.Info("MCP servers listed: their profile started again, and its sessions move to it at their next call", "workspace", p.Spec.Workspace, "apps", strings.Join(names, ","))
		for _, n := range names {
			if _, ok := np.Apps.App(n); ok {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// relisted names the MCP apps whose listing in the cache differs from
// what p runs: an unlisted server listed now (by another listing than
// one it could not be built from), or an app's tools changed.
func (p *Profile) relisted() []string {
	var out []string
	if len(p.Unlisted) > 0 {
		names := make([]string, len(p.Unlisted))
		for i, u := range p.Unlisted {
			names[i] = u.App
		}
		cfgs, _, _ := mcpServers(names, p.cfg)
		cache := MCPCache(p.cfg.DataDir)
		for _, u := range p.Unlisted {
			if s, ok := cfgs[u.App]; ok {
				if sum, ok := cache.Listed(u.App, s); ok && sum != u.cached {
					out = append(out, u.App)
				}
			}
		}
	}
	for _, n := range p.Apps.Names() {
		if a, ok := p.Apps.App(n); ok {
			if m, ok := a.(*mcp.App); ok && m.Outdated() {
				out = append(out, n)
			}
		}
	}
	return out
}

// ListUnlisted starts the MCP server name that p runs without, lists its
// tools and caches them (asking its network as apps.NetworkOf(ctx)
// does: with no one to ask, it has none), then has the profiles that
// run without it install it (Relist). The apps screen's refresh of an
// unlisted server does this.
func (e *Engine) ListUnlisted(ctx context.Context, p *Profile, name string) mcp.Refreshed {
	if !slices.ContainsFunc(p.Unlisted, func(u Unlisted) bool { return u.App == name }) {
		return mcp.Refreshed{App: name, Err: fmt.Errorf("%s is not an MCP server this session runs without", name)}
	}
	cfgs, cat, err := mcpServers([]string{name}, p.cfg)
	s, ok := cfgs[name]
	if cat == nil || !ok {
		if err == nil {
			err = fmt.Errorf("no MCP server %q in the config", name)
		}
		return mcp.Refreshed{App: name, Err: err}
	}
	r := mcp.Refresh(ctx, name, s, cat, MCPCache(p.cfg.DataDir), e.Log.With("component", "mcp"))
	if r.Err == nil {
		e.Relist()
	}
	return r
}

// Profiles lists the profiles running now.
func (e *Engine) Profiles() []ProfileSpec {
	e.pmu.Lock()
	defer e.pmu.Unlock()
	var out []ProfileSpec
	for _, p := range e.profiles {
		out = append(out, p.Spec)
	}
	slices.SortFunc(out, func(a, b ProfileSpec) int { return strings.Compare(a.key(), b.key()) })
	return out
}

// newProfile installs spec's apps and builds a hub over them; with again
// (a profile started again, with what it left out: Relist), from the
// MCP listing cache alone.
func (e *Engine) newProfile(cfg config.Config, spec ProfileSpec, again *[]Unlisted) (*Profile, error) {
	log := e.Log
	cfg.Workspace, cfg.Enable = spec.Workspace, spec.Enable
	reg, unlisted, err := installAll(cfg, MCPCache(cfg.DataDir), log.With("component", "mcp"), again, e.listInBackground)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrApps, err)
	}
	hubNS, keyFile := e.hubNS, e.keyFile
	store, err := Changes(cfg)
	if err != nil {
		closeApps(reg)
		return nil, err
	}
	op, err := hub.New(hub.Options{
		Changes:  store,
		Store:    e.Store,
		HubModel: hubModel{e.models},
		SpokeModel: func(app string) (spokes.Model, error) {
			return e.models.spokeModel(app)
		},
		History:      cfg.Hub.History,
		SpokeHistory: cfg.Spokes.History,
		Logger:       log.With("component", "hub"),
		Apps:         reg,
		Broker:       e.Broker,
		Vanilla:      e.vanilla,
		Draft:        cfg.Draft,
		Order:        e.order,
		Workspace:    cfg.Workspace,
		Memory:       memoryOptions(cfg.Memory, hubModel{e.models}),
		CallsPerTurn: cfg.Limits.ToolCallsPerTurn,
		BeforeTurn:   func() error { return checkDisk(cfg.DataDir, cfg.Limits.DiskFloorMB) },
		// A private turn's broker reads the stored grants and writes
		// nothing: its action log and grants live in a memory.Scratch. It
		// follows the Broker's trusted-session mode as it is when the turn
		// starts.
		PrivateBroker: func() (*permissions.Broker, error) {
			b, err := permissions.NewBroker(permissions.Options{
				Store: memory.NewScratch(hubNS), NotFound: memory.ErrNotFound, KeyFile: keyFile,
				Rules: e.Broker.Rules(), Prompter: e.prompter, Logger: log.With("component", "permissions", "private", true),
				Grants: e.Broker, // stored grants, and their uses, stay the main broker's
			})
			if err == nil {
				b.SetTrusted(e.Broker.Trusted())
			}
			return b, err
		},
	})
	if err != nil {
		closeApps(reg)
		return nil, err
	}
	return &Profile{Spec: spec, Apps: reg, Hub: op, Unlisted: unlisted, key: spec.key(), cfg: cfg}, nil
}

// close stops the profile's hub and spokes and its apps' shared
// instances, once.
func (p *Profile) close() error {
	var err error
	p.closed.Do(func() { err = errors.Join(p.Hub.Close(), closeApps(p.Apps)) })
	return err
}

// closeApps closes out-of-process apps' shared instances (the --vanilla
// path); spokes closed their own already.
func closeApps(reg *apps.Registry) error {
	if reg == nil {
		return nil
	}
	var errs []error
	for _, name := range reg.Names() {
		if a, ok := reg.App(name); ok {
			if c, ok := a.(io.Closer); ok {
				errs = append(errs, c.Close())
			}
		}
	}
	return errors.Join(errs...)
}
