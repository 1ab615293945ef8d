package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
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

// models holds the session's current choice; safe for concurrent use.
type models struct {
	cfg config.Config
	hub atomic.Pointer[llm.Client] // the hub's client now
	// spoke is the model the spokes use now instead of spokes.model; nil
	// until SetModel.
	spoke atomic.Pointer[string]
}

func newModels(cfg config.Config, hubClient *llm.Client) *models {
	ms := &models{cfg: cfg}
	ms.hub.Store(hubClient)
	return ms
}

// hubModel is the hub's model as the hub holds it: every call goes to the
// client current when it starts.
type hubModel struct{ ms *models }

var _ hub.Model = hubModel{}

func (h hubModel) Chat(ctx context.Context, req llm.Request, onChunk func(llm.Chunk)) (llm.Response, error) {
	return h.ms.hub.Load().Chat(ctx, req, onChunk)
}

func (h hubModel) Model() string { return h.ms.hub.Load().Model() }

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
	return llm.New(ms.spokeConfig(app), nil)
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
	list, err := e.Ollama.Installed(ctx)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(list, func(m llm.ModelInfo) bool { return m.Name == name })
	if i < 0 {
		i = slices.IndexFunc(list, func(m llm.ModelInfo) bool { return llm.SameModel(m.Name, name) })
	}
	if i < 0 {
		return fmt.Errorf("model %q: %w", name, ErrNotInstalled)
	}
	if m := list[i]; !m.Can(llm.CapTools) {
		var alts []string
		for _, m := range list {
			if m.Can(llm.CapTools) {
				alts = append(alts, m.Name)
			}
		}
		return &llm.IncapableError{Model: m.Name, Role: "the hub and spokes' model", Capability: "tool calling", Alternatives: alts}
	}
	name = list[i].Name
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
		e.Log.Info("switched models for this session", "model", name)
	}
	return err
}
