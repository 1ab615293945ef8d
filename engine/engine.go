// Package engine assembles a running bulkhead from a typed configuration:
// the log file, the memory store, the Ollama server (started as a child
// when it is local, installed and not running), the hub's model client and
// the operator. It is the one place that knows how the parts fit; main
// wires flags to it, the TUI and the headless runner use what it built.
//
// An Engine is built once per process and closed once; its parts are safe
// for concurrent use as their own packages describe.
package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/calc"
	"github.com/bulkhead-dev/bulkhead/apps/clock"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/apps/notes"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/datadir"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Engine is a running bulkhead core.
type Engine struct {
	Config config.Config
	Store  *memory.Store
	Hub    *hub.Operator
	// Ollama is the hub's model client, also used for server checks.
	Ollama *llm.Client
	Log    *slog.Logger
	// Apps are the installed apps of the engine's own profile, Hub its
	// hub (a serving process runs a profile per folder and app set:
	// Profile) — as they were at Open: sessions of that profile move to
	// its successor once Relist starts it again, and these stay, for the
	// store's chats and the process's own model switch; Broker decides
	// permissions.
	Apps   *apps.Registry
	Broker *permissions.Broker
	// OllamaErr is why the Ollama server could not be reached or started,
	// if so; the engine still opens so the UI can say it.
	OllamaErr error

	models *models // the hub and spoke models (models.go)
	server *llm.Server
	// What is known of the sessions' Ollama servers (OllamaErrIn):
	// whether the process's own answered since OllamaErr, and the
	// `ollama serve` started for a session's other host, by host.
	omu      sync.Mutex
	ollamaUp bool
	starts   map[string]*hostStart
	start    bool // Options.StartOllama
	logFile  io.Closer
	prompter *switchPrompter // the one Broker and every private broker ask

	// What every profile's hub is built with (profile.go).
	hubNS   *memory.Namespace
	keyFile string
	// order is what was learned of each model server: which request goes
	// first (kept in the data directory, for bulkheads started later).
	order   *hub.ServerOrder
	vanilla bool

	pmu sync.Mutex
	// cur is the settings now: Config's, then what Apply applied; gen
	// counts Apply's, and a profile is shared only by sessions that
	// started under one.
	cur      config.Config
	gen      int
	profiles map[string]*Profile // by Profile.key; the engine's own among them
	// retired are the profiles Relist replaced that a session or a call
	// still holds (the engine's own among them, once replaced: Apps and
	// Hub stay its).
	retired  map[*Profile]bool
	relistMu sync.Mutex // one Relist at a time

	// The MCP servers listed in the background (listing.go), by
	// listingKey; bgCtx ends them at Close, and bg counts them.
	lmu      sync.Mutex
	listings map[string]*Listing
	bgCtx    context.Context
	bgCancel context.CancelFunc
	bg       sync.WaitGroup
	// unloaded is why the config file last failed to load (LoadFailed),
	// until Apply: while set, a profile's MCP apps start without network.
	unloaded error
}

// Options tunes Open.
type Options struct {
	// StartOllama starts `ollama serve` when nothing answers at a local
	// host and the binary is on PATH.
	StartOllama bool
	// Vanilla builds the unsafe single-context baseline.
	Vanilla bool
	// Prompter answers permission requests (the TUI's dialog, a headless
	// policy); nil denies whatever would need asking.
	Prompter permissions.Prompter
	// Order is what is known of the model servers (which request goes
	// first); nil: what the data directory keeps (servers.json).
	Order *hub.ServerOrder
}

// Open builds the engine. A data directory held by another bulkhead gives
// an error matching memory.ErrInUse.
func Open(ctx context.Context, cfg config.Config, opts Options) (*Engine, error) {
	// The user's alone: made 0700, and refused when another user owns it
	// or could write it.
	dd, err := datadir.Create(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	dd.Close()
	lf, err := openLog(cfg)
	if err != nil {
		return nil, err
	}
	log := slog.New(slog.NewJSONHandler(lf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	e := &Engine{Config: cfg, Log: log, logFile: lf, prompter: &switchPrompter{}, order: opts.Order, start: opts.StartOllama, starts: map[string]*hostStart{},
		listings: map[string]*Listing{}}
	e.bgCtx, e.bgCancel = context.WithCancel(context.Background())
	if e.order == nil {
		e.order = hub.OpenServerOrder(filepath.Join(cfg.DataDir, "servers.json"))
	}
	e.prompter.set(opts.Prompter)

	e.Store, err = memory.Open(filepath.Join(cfg.DataDir, "db"), memory.Options{Logger: log.With("component", "memory")})
	if err != nil {
		lf.Close()
		if errors.Is(err, memory.ErrInUse) {
			return nil, fmt.Errorf("%w; close the other bulkhead, or give this one another --data-dir", err)
		}
		return nil, err
	}

	if opts.StartOllama {
		e.server, e.OllamaErr = llm.EnsureServer(ctx, cfg.Ollama.Host, llm.EnsureOptions{Log: logWriter{log.With("component", "ollama-serve")}})
		if e.server != nil {
			log.Info("started ollama serve", "host", cfg.Ollama.Host)
		}
	}

	hubNS, err := e.Store.Namespace("hub")
	if err != nil {
		e.Close()
		return nil, err
	}
	rules := brokerRules(cfg.Rules)
	keyFile := filepath.Join(cfg.DataDir, "grants.key")
	e.Broker, err = permissions.NewBroker(permissions.Options{
		Store: hubNS, NotFound: memory.ErrNotFound, KeyFile: keyFile,
		Rules: rules, Prompter: e.prompter, Logger: log.With("component", "permissions"),
	})
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("%w: %v", config.ErrInvalid, err)
	}

	if !opts.Vanilla {
		if n, err := e.Broker.SeedDefaults(DefaultGrants()); err != nil {
			log.Warn("default grants", "err", err)
		} else if n > 0 {
			log.Info("default grants added", "grants", n)
		}
	}
	e.Ollama, err = llm.New(cfg.LLM("hub"), nil)
	if err != nil {
		e.Close()
		return nil, fmt.Errorf("hub model: %w", err)
	}
	e.models = newModels(cfg, e.Ollama)
	e.hubNS, e.keyFile, e.vanilla = hubNS, keyFile, opts.Vanilla
	e.cur = cfg
	e.profiles, e.retired = map[string]*Profile{}, map[*Profile]bool{}
	// Under pmu: a server it lists in the background that is listed at
	// once finds it among the profiles (Relist).
	e.pmu.Lock()
	def, err := e.newProfile(cfg, ProfileSpec{Workspace: cfg.Workspace, Enable: cfg.Enable}, nil)
	if err != nil {
		e.pmu.Unlock()
		e.Close()
		return nil, err
	}
	def.refs = 1 // the process's own: never closed before the engine
	e.profiles[def.key] = def
	e.Apps, e.Hub = def.Apps, def.Hub
	e.pmu.Unlock()
	return e, nil
}

// DefaultGrants are the grants a data directory starts with: the hub may
// run a built-in app for each of its functionalities that only reads (the
// time, a sum, listing, reading and searching files and notes) without an
// exec dialog. Whatever writes or cannot be undone still asks, and none
// covers an MCP server or a demo app. Listed and revoked in the
// permission manager like any grant; one revoked is not given again.
func DefaultGrants() []permissions.Grant {
	cat := apps.Default()
	var out []permissions.Grant
	for _, a := range []apps.App{calc.New(), clock.New(nil), files.New(os.TempDir(), files.Options{}), notes.New()} {
		m := a.Manifest()
		for _, fn := range slices.Sorted(maps.Keys(m.Provides)) {
			if f, ok := cat.Get(fn); ok && f.Effect == apps.EffectRead {
				out = append(out, permissions.Grant{Kind: permissions.KindExec, Subject: "hub", Object: m.Name, Function: fn})
			}
		}
	}
	return out
}

// ErrApps is matched by Open's error when the configured apps cannot be
// installed (an MCP server that does not start, a catalog entry that does
// not compile): the configuration must change, as with config.ErrInvalid.
var ErrApps = errors.New("the configured apps cannot be installed")

// MemoryDefaults is the long-term memory the engine runs with: summaries
// and entities on, background work after 2 s without a turn, and up to
// 5 s at Close for updates still pending (so that a one-shot `bulkhead
// ask` still leaves its summary).
var MemoryDefaults = hub.MemoryOptions{Enabled: true, Quiet: 2 * time.Second, Drain: 5 * time.Second}

// memoryOptions turns the config into the hub's memory options.
func memoryOptions(m config.Memory, hubModel hub.Model) hub.MemoryOptions {
	o := MemoryDefaults
	o.Enabled = m.Enabled
	o.Every, o.Idle = m.Every, m.Idle
	if m.LLMDetector {
		o.Detector = hub.NewModelDetector(hubModel)
	}
	// A chat's upkeep goes to the models and the Ollama host of the
	// session whose turn brought it due, as the turn's own calls did.
	o.CallsOf = func(turn context.Context) func(context.Context) context.Context {
		m := modelsOf(turn)
		return func(ctx context.Context) context.Context { return WithModels(ctx, m) }
	}
	return o
}

// SetPrompter sets who answers permission dialogs from now on, for the
// Broker and for the brokers of private turns alike (use it rather than
// Broker.SetPrompter, which private turns would not see).
func (e *Engine) SetPrompter(p permissions.Prompter) {
	e.Broker.SetPrompter(e.prompter)
	e.prompter.set(p)
}

// switchPrompter forwards to the prompter set last; with none, what needs
// asking is denied, as a Broker without a Prompter does.
type switchPrompter struct {
	mu sync.Mutex
	p  permissions.Prompter
}

func (s *switchPrompter) set(p permissions.Prompter) {
	s.mu.Lock()
	s.p = p
	s.mu.Unlock()
}

func (s *switchPrompter) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	s.mu.Lock()
	p := s.p
	s.mu.Unlock()
	if p == nil {
		return permissions.Decision{Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "no one is there to ask"}, nil
	}
	return p.Prompt(ctx, r)
}

// Close stops the hub and its spokes, closes out-of-process apps, closes
// memory, and stops an Ollama server the engine started.
func (e *Engine) Close() error {
	var errs []error
	// The background listings first: one that ends relists the profiles.
	e.stopListings()
	e.pmu.Lock()
	ps := slices.Collect(maps.Values(e.profiles))
	ps = append(ps, slices.Collect(maps.Keys(e.retired))...)
	e.profiles, e.retired = nil, nil
	e.pmu.Unlock()
	for _, p := range ps {
		errs = append(errs, p.close())
	}
	if e.Store != nil {
		errs = append(errs, e.Store.Close())
	}
	e.server.Stop()
	e.omu.Lock()
	starts := e.starts
	e.starts = nil
	e.omu.Unlock()
	for _, h := range starts {
		h.mu.Lock()
		h.server.Stop()
		h.mu.Unlock()
	}
	if e.logFile != nil {
		errs = append(errs, e.logFile.Close())
	}
	return errors.Join(errs...)
}

// logWriter sends a child's output lines to the log, never the terminal.
type logWriter struct{ log *slog.Logger }

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Info(string(p))
	return len(p), nil
}
