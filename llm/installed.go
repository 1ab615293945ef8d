package llm

import (
	"context"
	"fmt"
	"slices"
	"strings"
)

// ModelInfo is an installed model and what the server says it can do.
type ModelInfo struct {
	Name string
	// Capabilities as /api/show reports them; empty when the server does
	// not say (an older Ollama), which callers take as able.
	Capabilities []string
}

// Can reports whether the model has capability cp (true when the server
// does not say).
func (m ModelInfo) Can(cp string) bool {
	return len(m.Capabilities) == 0 || slices.Contains(m.Capabilities, cp)
}

// Installed lists the server's models with their capabilities, sorted by
// name. A model whose capabilities cannot be read is left out.
func (c *Client) Installed(ctx context.Context) ([]ModelInfo, error) {
	list, err := c.api.List(ctx)
	if err != nil {
		if isConnError(err) {
			return nil, &UnreachableError{Host: c.base.String(), Err: err}
		}
		return nil, fmt.Errorf("ollama at %s: list models: %w", c.base, err)
	}
	var out []ModelInfo
	for _, m := range list.Models {
		caps, err := c.Capabilities(ctx, m.Name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			continue
		}
		out = append(out, ModelInfo{Name: m.Name, Capabilities: caps})
	}
	slices.SortFunc(out, func(a, b ModelInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// SameModel reports whether two model names name the same model: Ollama
// reads a name without a tag as name:latest.
func SameModel(a, b string) bool {
	return withTag(a) == withTag(b)
}

func withTag(name string) string {
	if i := strings.LastIndexByte(name, ':'); i < 0 || strings.Contains(name[i:], "/") {
		return name + ":latest"
	}
	return name
}

// Digest is the digest of an installed model as the server lists it, ""
// when it is not installed.
func (c *Client) Digest(ctx context.Context, name string) (string, error) {
	list, err := c.api.List(ctx)
	if err != nil {
		if isConnError(err) {
			return "", &UnreachableError{Host: c.base.String(), Err: err}
		}
		return "", fmt.Errorf("ollama at %s: list models: %w", c.base, err)
	}
	for _, m := range list.Models {
		if SameModel(m.Name, name) {
			return m.Digest, nil
		}
	}
	return "", nil
}
