package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/ollama/ollama/api"
)

// Capabilities a role needs of its model.
const (
	CapTools      = "tools"      // an app's spoke calls the app's functions as tools
	CapCompletion = "completion" // every role writes text (and the planner JSON)
	CapThinking   = "thinking"   // thinking shown, where it is asked for
)

// capsCache remembers what a server said of a model, per client.
type capsCache struct {
	mu   sync.Mutex
	caps map[string][]string
}

// Capabilities asks the server what model can do ("tools", "completion",
// "thinking", ...). An empty list means the server does not say (an older
// Ollama): callers take that as able. The answer is remembered.
func (c *Client) Capabilities(ctx context.Context, model string) ([]string, error) {
	c.caps.mu.Lock()
	if got, ok := c.caps.caps[model]; ok {
		c.caps.mu.Unlock()
		return got, nil
	}
	c.caps.mu.Unlock()
	resp, err := c.api.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		var se api.StatusError
		if errors.As(err, &se) && se.StatusCode == http.StatusNotFound {
			return nil, &ModelMissingError{Model: model, Host: c.base.String()}
		}
		if isConnError(err) {
			return nil, &UnreachableError{Host: c.base.String(), Err: err}
		}
		return nil, fmt.Errorf("ollama at %s: show %q: %w", c.base, model, err)
	}
	var out []string
	for _, cp := range resp.Capabilities {
		out = append(out, string(cp))
	}
	c.caps.mu.Lock()
	if c.caps.caps == nil {
		c.caps.caps = map[string][]string{}
	}
	c.caps.caps[model] = out
	c.caps.mu.Unlock()
	return out, nil
}

// Can reports whether this client's model has capability cp (true when
// the server does not say).
func (c *Client) Can(ctx context.Context, cp string) (bool, error) {
	caps, err := c.Capabilities(ctx, c.cfg.Model)
	if err != nil {
		return false, err
	}
	return len(caps) == 0 || slices.Contains(caps, cp), nil
}

// ModelsThatCan lists the installed models that have capability cp (or do
// not say), sorted.
func (c *Client) ModelsThatCan(ctx context.Context, cp string) ([]string, error) {
	list, err := c.api.List(ctx)
	if err != nil {
		if isConnError(err) {
			return nil, &UnreachableError{Host: c.base.String(), Err: err}
		}
		return nil, fmt.Errorf("ollama at %s: list models: %w", c.base, err)
	}
	var out []string
	for _, m := range list.Models {
		caps, err := c.Capabilities(ctx, m.Name)
		if err != nil {
			continue
		}
		if len(caps) == 0 || slices.Contains(caps, cp) {
			out = append(out, m.Name)
		}
	}
	sort.Strings(out)
	return out, nil
}

// IncapableError says that a model cannot serve a role: it lacks a
// capability the role needs.
type IncapableError struct {
	Model, Role, Capability string
	// Alternatives are installed models that have it.
	Alternatives []string
}

func (e *IncapableError) Error() string {
	msg := fmt.Sprintf("model %q cannot serve as %s: it does not support %s", e.Model, e.Role, e.Capability)
	if len(e.Alternatives) > 0 {
		msg += "; installed models that can: " + strings.Join(e.Alternatives, ", ") + " (choose one with --model, or per app with apps.<name>.model)"
	} else {
		msg += "; no installed model can — pull one that does (for example `ollama pull qwen3:1.7b`)"
	}
	return msg
}
