package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

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

// models holds the process's current choice, and a client per model a
// session chose; safe for concurrent use.
type models struct {
	cfg config.Config
	hub atomic.Pointer[llm.Client] // the hub's client now
	// spoke is the model the spokes use now instead of spokes.model; nil
	// until SetModel.
	spoke atomic.Pointer[string]

	mu      sync.Mutex
	clients map[string]*llm.Client // by model name, for sessions' choices
}

func newModels(cfg config.Config, hubClient *llm.Client) *models {
	ms := &models{cfg: cfg, clients: map[string]*llm.Client{}}
	ms.hub.Store(hubClient)
	return ms
}

type modelKey struct{}

// Models names a session's choice: the hub's model and the spokes'
// ("" keeps the process's).
type Models struct {
	Hub   string `json:"hub,omitempty"`
	Spoke string `json:"spoke,omitempty"`
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

// client is the client of the model name, with the hub's configuration
// (host, keep-alive, limits) otherwise.
func (ms *models) client(name string) (*llm.Client, error) {
	ms.mu.Lock()
	defer ms.mu.Unlock()
	if c, ok := ms.clients[name]; ok {
		return c, nil
	}
	lc := ms.cfg.LLM("hub")
	lc.Model = name
	c, err := llm.New(lc, nil)
	if err == nil {
		ms.clients[name] = c
	}
	return c, err
}

// hubModel is the hub's model as the hub holds it: every call goes to the
// client of the call's session (WithModels), else to the one current when
// it starts.
type hubModel struct{ ms *models }

var _ hub.Model = hubModel{}

func (h hubModel) Chat(ctx context.Context, req llm.Request, onChunk func(llm.Chunk)) (llm.Response, error) {
	if name := modelsOf(ctx).Hub; name != "" {
		c, err := h.ms.client(name)
		if err != nil {
			return llm.Response{}, err
		}
		return c.Chat(ctx, req, onChunk)
	}
	return h.ms.hub.Load().Chat(ctx, req, onChunk)
}

func (h hubModel) Model() string { return h.ms.hub.Load().Model() }

// ModelIn names the model a call under ctx goes to.
func (h hubModel) ModelIn(ctx context.Context) string {
	if name := modelsOf(ctx).Hub; name != "" {
		return name
	}
	return h.Model()
}

// spokeConfig is the model configuration of app's spoke now.
func (ms *models) spokeConfig(app string) llm.Config {
	lc := ms.cfg.LLM(app)
	if name := ms.spoke.Load(); name != nil && !ms.pinned(app) {
		lc.Model = *name
	}
	return lc
}

// pinned reports whether app has a model of its own in the config.
func (ms *models) pinned(app string) bool {
	return ms.cfg.Apps[app].Model != "" || ms.cfg.MCP[app].Model != ""
}

// spokeModel builds the model client of app's spoke (hub.Options.SpokeModel).
func (ms *models) spokeModel(app string) (spokes.Model, error) {
	c, err := llm.New(ms.spokeConfig(app), nil)
	if err != nil || ms.pinned(app) {
		return c, err
	}
	return sessionSpoke{ms: ms, def: c}, nil
}

// sessionSpoke is a spoke's model client that follows the session of
// each call (WithModels), else the model of the spoke's start.
type sessionSpoke struct {
	ms  *models
	def *llm.Client
}

func (s sessionSpoke) in(ctx context.Context) (*llm.Client, error) {
	if name := modelsOf(ctx).Spoke; name != "" {
		return s.ms.client(name)
	}
	return s.def, nil
}

func (s sessionSpoke) Chat(ctx context.Context, req llm.Request, onChunk func(llm.Chunk)) (llm.Response, error) {
	c, err := s.in(ctx)
	if err != nil {
		return llm.Response{}, err
	}
	return c.Chat(ctx, req, onChunk)
}

func (s sessionSpoke) Model() string { return s.def.Model() }

// ModelIn names the model a call under ctx goes to.
func (s sessionSpoke) ModelIn(ctx context.Context) string {
	if name := modelsOf(ctx).Spoke; name != "" {
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
	return s.def.ModelsThatCan(ctx, capability)
}

// Installed lists the models the Ollama server has, with what each can do.
func (e *Engine) Installed(ctx context.Context) ([]llm.ModelInfo, error) {
	return e.Ollama.Installed(ctx)
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
	lc := e.Config.LLM("hub")
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
	list, err := e.Ollama.Installed(ctx)
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
