package mcp

import "fmt"

// Summary is what a server's listing says beyond its functions: what
// `bulkhead mcp list` and `bulkhead mcp add` show. Its names are the
// server's (app-authored): shown, they are sanitised.
type Summary struct {
	Server, Version string
	// Tools counts the tools it lists, Offered those offered as
	// functions: all but those that require tasks.
	Tools, Offered int
	// Resources: its own spoke lists and reads its resources
	// (read_resource, list_resources).
	Resources bool
	// Prompts names its prompts (at most maxPrompts), PromptCount counts
	// them: listed, never run — the planner plans with functionalities.
	Prompts     []string
	PromptCount int
	// Unsupported says, a line each, what it offers or asks that
	// bulkhead does not support or use: a tool that requires tasks
	// ("tool X: requires tasks: not supported"), sampling, elicitation
	// or roots it asked for, resource subscriptions, completions.
	Unsupported []string
}

// summary is the listing's Summary.
func (l listing) summary() Summary {
	s := Summary{Server: l.Server, Version: l.Version, Tools: len(l.Tools), Resources: l.Resources,
		Prompts: l.Prompts, PromptCount: l.Prompted}
	for _, t := range l.Tools {
		if t.requiresTasks() {
			s.Unsupported = append(s.Unsupported, fmt.Sprintf("tool %s: requires tasks: not supported (not offered)", t.Name))
			continue
		}
		s.Offered++
	}
	for _, a := range l.Asked {
		s.Unsupported = append(s.Unsupported, fmt.Sprintf("it asked for %s: not offered to MCP servers", a))
	}
	if l.Subscribe {
		s.Unsupported = append(s.Unsupported, "resource subscriptions: not used")
	}
	if l.Completions {
		s.Unsupported = append(s.Unsupported, "completions: not used")
	}
	return s
}

// Summary is what the listing the app was built from says of the server.
func (a *App) Summary() Summary { return a.listed.summary() }

// Summary is what the cache's listing of app, for the configuration
// cfg, says of the server; false if the cache holds none (the server is
// not listed yet, or was listed with another configuration).
func (c *Cache) Summary(app string, cfg Server) (Summary, bool) {
	l, err := c.load(app, cacheKey(cfg))
	if err != nil {
		return Summary{}, false
	}
	return l.summary(), true
}
