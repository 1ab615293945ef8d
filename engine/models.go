package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// The models of this session. The hub and every spoke start with the
// configured models; SetModel (the TUI's /model NAME) switches the hub
// and the spokes to another installed model for the rest of the process,
// without writing the config file. An app whose model is configured on
// its own (apps.<name>.model, mcp.<name>.model) keeps it.

// A session of the serving process may choose a model of its own
// (WithModels): every call made for its turns — the planner's, each
// spoke's — goes to that model, and other sessions keep theirs.

// models holds the process's current choice, and a client per model (and
// Ollama host) a session chose; safe for concurrent use.
type models struct {
	// cfg is the model settings now (Apply replaces them); its Ollama
	// host is the process's own, whatever the config file says later.
	cfg atomic.Pointer[config.Config]
	hub atomic.Pointer[llm.Client] // the hub's client now
	// spoke is the model the spokes use now instead of spokes.model; nil
	// until SetModel.
	spoke atomic.Pointer[string]

	mu      sync.Mutex
	clients map[clientKey]*llm.Client // for sessions' choices
}

// clientKey names a client a session's choice needs.
type clientKey struct{ host, model string }

func newModels(cfg config.Config, hubClient *llm.Client) *models {
	ms := &models{clients: map[clientKey]*llm.Client{}}
	ms.cfg.Store(&cfg)
	ms.hub.Store(hubClient)
	return ms
}

// settings are the model settings now.
func (ms *models) settings() config.Config { return *ms.cfg.Load() }

// setSettings makes next's model settings (keep-alive, context, limits,
// apps' own models and hosts) the ones clients are made with from now
// on; the process's Ollama host stays. Clients made before are dropped,
// and the hub's is made again.
func (ms *models) setSettings(next config.Config) error {
	next.Ollama.Host = ms.settings().Ollama.Host
	lc := next.LLM("hub")
	lc.Model = ms.hub.Load().Model()
	hubClient, err := llm.New(lc, nil)
	if err != nil {
		return err
	}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	ms.cfg.Store(&next)
	ms.hub.Store(hubClient)
	clear(ms.clients)
	return nil
}

type modelKey struct{}

// Models names a session's choice: the hub's model, the spokes' and the
// Ollama server ("" keeps the process's).
type Models struct {
	Hub   string `json:"hub,omitempty"`
	Spoke string `json:"spoke,omitempty"`
	// Host is the Ollama server the session's calls go to (its
	// ollama.host, --ollama-host or OLLAMA_HOST): sessions on two hosts
	// share one serving process. An app with a host of its own in the
	// config keeps it.
	Host string `json:"host,omitempty"`
}

// WithModels makes every model call made under ctx — the planner's, and
// every spoke's but those of an app with a model of its own in the
// config — go to the models m names.
func WithModels(ctx context.Context, m Models) context.Context {
	if m == (Models{}) {
		return ctx
	}
	return context.WithValue(ctx, modelKey{}, m)
}

// modelsOf is the choice WithModels made for ctx.
func modelsOf(ctx context.Context) Models {
	m, _ := ctx.Value(modelKey{}).(Models)
	return m
}

// otherHost is the session's Ollama host when it is not the process's
// (""), normalised.
func (ms *models) otherHost(m Models) string {
	if m.Host == "" {
		return ""
	}
	u, err := llm.ParseHost(m.Host)
	if err != nil {
		return m.Host // llm.New says what is wrong with it
	}
	own, err := llm.ParseHost(ms.settings().Ollama.Host)
	if err == nil && own.String() == u.String() {
		return ""
	}
	return u.String()
}

// client is the client of model name on host ("": the process's), with
// the hub's configuration (keep-alive, limits) otherwise.
func (ms *models) client(host, name string) (*llm.Client, error) {
	lc := ms.settings().LLM("hub")
	lc.Model = name
	if host != "" {
		lc.Host = host
	}
	return ms.clientOf(lc)
}

// clientOf is a client of lc, made once per host and model.
func (ms *models) clientOf(lc llm.Config) (*llm.Client, error) {
	k := clientKey{lc.Host, lc.Model}
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if c, ok := ms.clients[k]; ok {
		return c, nil
	}
	c, err := llm.New(lc, nil)
	if err == nil {
		ms.clients[k] = c
	}
	return c, err
}

// hubIn is the hub's client for calls under ctx: the session's model and
// host (WithModels), else the process's.
func (ms *models) hubIn(ctx context.Context) (*llm.Client, error) {
	m := modelsOf(ctx)
	host := ms.otherHost(m)
	if m.Hub == "" && host == "" {
		return ms.hub.Load(), nil
	}
	name := m.Hub
	if name == "" {
		name = ms.hub.Load().Model()
	}
	return ms.client(host, name)
}

// hubModel is the hub's model as the hub holds it: every call goes to the
// client of the call's session (WithModels), else to the one current when
// it starts.
type hubModel struct{ ms *models }

var _ hub.Model = hubModel{}

func (h hubModel) Chat(ctx context.Context, req llm.Request, onChunk func(llm.Chunk)) (llm.Response, error) {
	c, err := h.ms.hubIn(ctx)
	if err != nil {
		return llm.Response{}, err
	}
	return c.Chat(ctx, req, onChunk)
}

func (h hubModel) Model() string { return h.ms.hub.Load().Model() }

// ModelIn names the model a call under ctx goes to.
func (h hubModel) ModelIn(ctx context.Context) string {
	if name := modelsOf(ctx).Hub; name != "" {
		return name
	}
	return h.Model()
}

// HostIn names the model server a call under ctx goes to.
func (h hubModel) HostIn(ctx context.Context) string {
	c, err := h.ms.hubIn(ctx)
	if err != nil {
		return ""
	}
	return c.Host()
}

// spokeConfig is the model configuration of app's spoke now.
func (ms *models) spokeConfig(app string) llm.Config {
	lc := ms.settings().LLM(app)
	if name := ms.spoke.Load(); name != nil && !ms.pinned(app) {
		lc.Model = *name
	}
	return lc
}

// pinned reports whether app has a model of its own in the config.
func (ms *models) pinned(app string) bool {
	cfg := ms.settings()
	return cfg.Apps[app].Model != "" || cfg.MCP[app].Model != ""
}

// ownHost reports whether app has an Ollama host of its own in the config.
func (ms *models) ownHost(app string) bool {
	cfg := ms.settings()
	return cfg.Apps[app].Host != "" || cfg.MCP[app].Host != ""
}

// spokeModel builds the model client of app's spoke (hub.Options.SpokeModel).
func (ms *models) spokeModel(app string) (spokes.Model, error) {
	c, err := llm.New(ms.spokeConfig(app), nil)
	if err != nil {
		return c, err
	}
	return sessionSpoke{ms: ms, app: app, def: c}, nil
}

// sessionSpoke is a spoke's model client that follows the session of
// each call (WithModels) — its model, unless the app has one of its own
// in the config, and its host, unless the app has one of its own —, else
// the model of the spoke's start.
type sessionSpoke struct {
	ms  *models
	app string
	def *llm.Client
}

func (s sessionSpoke) in(ctx context.Context) (*llm.Client, error) {
	m := modelsOf(ctx)
	name := ""
	if !s.ms.pinned(s.app) {
		name = m.Spoke
	}
	host := ""
	if !s.ms.ownHost(s.app) {
		host = s.ms.otherHost(m)
	}
	if name == "" && host == "" {
		return s.def, nil
	}
	lc := s.ms.spokeConfig(s.app)
	lc.Model = s.def.Model()
	if name != "" {
		lc.Model = name
	}
	if host != "" {
		lc.Host = host
	}
	return s.ms.clientOf(lc)
}

func (s sessionSpoke) Chat(ctx context.Context, req llm.Request, onChunk func(llm.Chunk)) (llm.Response, error) {
	c, err := s.in(ctx)
	if err != nil {
		return llm.Response{}, err
	}
	return c.Chat(ctx, req, onChunk)
}

func (s sessionSpoke) Model() string { return s.def.Model() }

// HostIn names the model server a call under ctx goes to.
func (s sessionSpoke) HostIn(ctx context.Context) string {
	c, err := s.in(ctx)
	if err != nil {
		return ""
	}
	return c.Host()
}

// ModelIn names the model a call under ctx goes to.
func (s sessionSpoke) ModelIn(ctx context.Context) string {
	if name := modelsOf(ctx).Spoke; name != "" && !s.ms.pinned(s.app) {
		return name
	}
	return s.def.Model()
}

func (s sessionSpoke) Can(ctx context.Context, capability string) (bool, error) {
	c, err := s.in(ctx)
	if err != nil {
		return false, err
	}
	return c.Can(ctx, capability)
}

func (s sessionSpoke) ModelsThatCan(ctx context.Context, capability string) ([]string, error) {
	c, err := s.in(ctx)
	if err != nil {
		return nil, err
	}
	return c.ModelsThatCan(ctx, capability)
}

// OllamaIn is the client that lists and checks models for calls under
// ctx: the session's Ollama host (WithModels), else the process's.
func (e *Engine) OllamaIn(ctx context.Context) (*llm.Client, error) {
	host := e.models.otherHost(modelsOf(ctx))
	if host == "" {
		return e.Ollama, nil
	}
	return e.models.client(host, e.Ollama.Model())
}

// Installed lists the models the Ollama server has, with what each can do.
func (e *Engine) Installed(ctx context.Context) ([]llm.ModelInfo, error) {
	c, err := e.OllamaIn(ctx)
	if err != nil {
		return nil, err
	}
	return c.Installed(ctx)
}

// Current names the hub's model and the spokes' (an app with a model of
// its own in the config may use another: AppModel).
func (e *Engine) Current() (hubModel, spokeModel string) {
	return e.models.hub.Load().Model(), e.models.spokeConfig(hub.VanillaApp).Model
}

// CurrentIn names the models of calls made under ctx (WithModels).
func (e *Engine) CurrentIn(ctx context.Context) (hubModel, spokeModel string) {
	hubModel, spokeModel = e.Current()
	m := modelsOf(ctx)
	if m.Hub != "" {
		hubModel = m.Hub
	}
	if m.Spoke != "" {
		spokeModel = m.Spoke
	}
	return hubModel, spokeModel
}

// AppModel names the model app's spoke uses now.
func (e *Engine) AppModel(app string) string { return e.models.spokeConfig(app).Model }

// ErrNotInstalled is SetModel's answer for a model the server does not have.
var ErrNotInstalled = errors.New("not installed")

// SetModel switches the hub and the spokes to the installed model name
// for the rest of this process; the config file is not written. The model
// must be installed and able to call tools (an app's spoke works through
// them): otherwise it answers ErrNotInstalled or an *llm.IncapableError
// listing the installed models that can. Spokes started before are
// stopped and start again with the new model on their next use. While a
// turn runs nothing changes and it answers hub.ErrBusy.
func (e *Engine) SetModel(ctx context.Context, name string) error {
	name, err := e.ResolveModel(ctx, name)
	if err != nil {
		return err
	}
	lc := e.models.settings().LLM("hub")
	lc.Model = name
	hubClient, err := llm.New(lc, nil)
	if err != nil {
		return err
	}
	err = e.Hub.Respawn(func() {
		e.models.hub.Store(hubClient)
		e.models.spoke.Store(&name)
	})
	if err == nil {
		e.Log.Info("switched models for this process", "model", name)
	}
	return err
}

// ResolveModel is the installed model's name for name (a tag may be left
// out), checked as SetModel checks it: ErrNotInstalled, or an
// *llm.IncapableError when it cannot call tools.
func (e *Engine) ResolveModel(ctx context.Context, name string) (string, error) {
	list, err := e.Installed(ctx)
	if err != nil {
		return "", err
	}
	i := slices.IndexFunc(list, func(m llm.ModelInfo) bool { return m.Name == name })
	if i < 0 {
		i = slices.IndexFunc(list, func(m llm.ModelInfo) bool { return llm.SameModel(m.Name, name) })
	}
	if i < 0 {
		return "", fmt.Errorf("model %q: %w", name, ErrNotInstalled)
	}
	if m := list[i]; !m.Can(llm.CapTools) {
		var alts []string
		for _, m := range list {
			if m.Can(llm.CapTools) {
				alts = append(alts, m.Name)
			}
		}
		return "", &llm.IncapableError{Model: m.Name, Role: "the hub and spokes' model", Capability: "tool calling", Alternatives: alts}
	}
	return list[i].Name, nil
}

// hostStart is what the engine did for one session's Ollama host: the
// `ollama serve` it started there, if any. Its lock makes sessions that
// name the host at once wait for one start.
type hostStart struct {
	mu     sync.Mutex
	server *llm.Server
}

// OllamaErrIn is why the Ollama server that calls under ctx go to (the
// session's host: WithModels) cannot be used now; nil when it answers.
// The process's own host is as its start found it (OllamaErr) until it
// answers. A session's other host is asked now and, when nothing answers
// there, started as the process's own was (Options.StartOllama: a host
// on this machine, Ollama installed), once, and stopped with the engine
// — so that one session's host, unreachable or not, never decides
// another's.
func (e *Engine) OllamaErrIn(ctx context.Context) error {
	host := e.models.otherHost(modelsOf(ctx))
	if host == "" {
		e.omu.Lock()
		up := e.ollamaUp
		e.omu.Unlock()
		if e.OllamaErr == nil || up {
			return nil
		}
		cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
		defer cancel()
		if _, err := e.Ollama.Version(cctx); err != nil {
			return e.OllamaErr
		}
		e.omu.Lock()
		e.ollamaUp = true
		e.omu.Unlock()
		return nil
	}
	if !e.start {
		c, err := e.models.client(host, e.Ollama.Model())
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		_, err = c.Version(cctx)
		return err
	}
	e.omu.Lock()
	if e.starts == nil { // closed
		e.omu.Unlock()
		return fmt.Errorf("ollama %s: %w", host, context.Canceled)
	}
	h := e.starts[host]
	if h == nil {
		h = &hostStart{}
		e.starts[host] = h
	}
	e.omu.Unlock()
	h.mu.Lock()
	defer h.mu.Unlock()
	srv, err := llm.EnsureServer(ctx, host, llm.EnsureOptions{Log: logWriter{e.Log.With("component", "ollama-serve", "host", host)}})
	if srv != nil {
		e.Log.Info("started ollama serve for a session's host", "host", host)
		h.server.Stop() // one that ran there before and stopped answering
		h.server = srv
	}
	return err
}
