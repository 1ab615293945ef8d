package engine

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
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
}

func (s ProfileSpec) key() string {
	return s.Workspace + "\x00" + strings.Join(s.Enable, "\x00")
}

// Profile is a profile's running apps and hub.
type Profile struct {
	Spec ProfileSpec
	Apps *apps.Registry
	Hub  *hub.Operator
	// Unlisted are the enabled MCP servers it runs without (InstallAll).
	Unlisted []Unlisted
	refs     int    // sessions using it (guarded by Engine.pmu)
	key      string // its key in Engine.profiles: its spec's, under the settings of its start
}

// Profile is the profile of spec, started when no session uses it yet.
// Each Profile must be given back with Release.
func (e *Engine) Profile(spec ProfileSpec) (*Profile, error) {
	e.pmu.Lock()
	defer e.pmu.Unlock()
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
	if p, ok := e.profiles[key]; ok {
		p.refs++
		return p, nil
	}
	cfg.Workspace, cfg.Enable = spec.Workspace, spec.Enable
	if err := CheckEnable(cfg); err != nil {
		return nil, err
	}
	p, err := e.newProfile(cfg, spec)
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

// Release gives back a Profile; the last session's stops its hub and
// apps (the engine's own profile stays until Close).
func (e *Engine) Release(p *Profile) {
	if p == nil {
		return
	}
	e.pmu.Lock()
	p.refs--
	last := p.refs == 0
	if last {
		delete(e.profiles, p.key)
	}
	e.pmu.Unlock()
	if last {
		if err := p.close(); err != nil {
			e.Log.Warn("close a profile", "workspace", p.Spec.Workspace, "err", err)
		}
		e.Log.Info("profile stopped", "workspace", p.Spec.Workspace, "apps", strings.Join(p.Spec.Enable, ","))
	}
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

// newProfile installs spec's apps and builds a hub over them.
func (e *Engine) newProfile(cfg config.Config, spec ProfileSpec) (*Profile, error) {
	log := e.Log
	cfg.Workspace, cfg.Enable = spec.Workspace, spec.Enable
	reg, unlisted, err := InstallAll(cfg, MCPCache(cfg.DataDir), log.With("component", "mcp"))
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
	return &Profile{Spec: spec, Apps: reg, Hub: op, Unlisted: unlisted, key: spec.key()}, nil
}

// close stops the profile's hub and spokes and its apps' shared instances.
func (p *Profile) close() error {
	return errors.Join(p.Hub.Close(), closeApps(p.Apps))
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
