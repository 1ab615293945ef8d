// Package mcp makes an MCP server an app (DESIGN.md §5), with the official
// Go SDK: a stdio server (a command) or a streamable-HTTP endpoint.
//
// # Lifecycle
//
// New starts the server once, lists its tools to build the manifest, and
// stops it (bounded by StartTimeout). Each spoke then gets its own
// instance (NewInstance, apps.PerSpoke): the instance's child process
// starts on its first call and is stopped when the spoke closes it — the
// whole process group is killed and waited for, so nothing is left
// behind. The App itself can also be called (the --vanilla baseline does
// so); it keeps one shared instance for that, stopped by Close.
//
// A stdio child gets a minimal environment (HOME, PATH, USER, LOGNAME,
// SHELL, TERM, LANG, LC_ALL, TMPDIR) plus Server.Env: bulkhead's own
// variables, which may hold secrets, are not passed on. Its stderr goes to
// the log, line by line, never to the terminal. It is advertised no client
// capabilities (no roots, sampling or elicitation): it cannot reach the
// model or ask the user anything.
//
// # Tools become functions
//
//   - name: the tool's name made [a-z][a-z0-9_]* (FunctionName), unique;
//   - description: the tool's (app-authored: it reaches only the app's
//     own spoke, never the hub planner or another spoke);
//   - params: the tool's inputSchema, once vetted (safeSchema: no
//     references outside it, so compiling it loads no file or URL);
//     an unusable one becomes {"type":"object"};
//   - result: a tool with an outputSchema returns its structuredContent,
//     checked against that schema ({"type":"object"} if the schema is
//     unusable); any other tool returns {"content": "<its text content>"}
//     (TextResult); images, audio and binary resources become a short
//     note of their type and size;
//   - effect: EffectOf(annotations), then Server.Tools[tool].Effect, which
//     may tighten it and never loosen it (New refuses a config that
//     would);
//   - openWorldHint (true, or absent: the MCP default): the tool may reach
//     hosts that the hub does not carry traffic for. It is recorded in
//     Manifest.Hosts as "*" and in Tools; its effect is not changed.
//
// Provides maps Server.Tools[tool].Functionality to the tool's function.
// New catalog entries come from Server.Catalog (CatalogEntries): written
// by the user, they are the only words about this app the hub planner
// reads.
//
// # Faults
//
// Each fails only its own call, with a message that says what happened:
// a server that does not start, exits during a call (its stderr is in the
// log), does not answer in time (ctx), writes something that is not
// JSON-RPC, or answers with more than MaxOutput bytes. After any of these
// the instance stops the process, and its next call starts a fresh one.
// A tool error (isError) is an error of that call; the server keeps
// running.
package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// Defaults of the limits in Server.
const (
	DefaultStartTimeout = 20 * time.Second
	DefaultMaxOutput    = 256 << 10
)

// Server is how to reach an MCP server and how to map it (the engine
// builds it from config.MCPServer).
type Server struct {
	// Command and Args start a stdio server in Dir, with Env added to a
	// minimal environment.
	Command string
	Args    []string
	Env     map[string]string
	Dir     string
	// URL is a streamable-HTTP endpoint, instead of a command.
	URL string
	// Tools configures tools by their MCP name (or their function name).
	Tools map[string]ToolConfig
	// Catalog declares new catalog entries (see CatalogEntries).
	Catalog []CatalogEntry
	// Model overrides the spoke's model (Manifest.Model).
	Model string
	// StartTimeout bounds starting the server and listing its tools.
	StartTimeout time.Duration
	// MaxOutput bounds one call's result in bytes; a JSON-RPC message over
	// 4×MaxOutput (at least 1 MiB) breaks the connection.
	MaxOutput int
}

// ToolConfig is the configuration of one tool.
type ToolConfig struct {
	Functionality string      // catalog entry it provides ("" = none)
	Effect        apps.Effect // tightens the annotated effect ("" = keep)
	Key           []string    // decisive arguments, added to the hub's own choice
}

// CatalogEntry is a catalog entry declared with a server.
type CatalogEntry struct {
	Name, Description string
	Request, Response json.RawMessage
	Effect            apps.Effect
	Labels            []string
}

// CatalogEntries returns the catalog entries a server declares, checked;
// the engine adds them to apps.Default()'s entries.
func CatalogEntries(cfg Server) ([]apps.Functionality, error) {
	var out []apps.Functionality
	var errs []error
	for _, e := range cfg.Catalog {
		f := apps.Functionality{Name: e.Name, Description: e.Description, Request: e.Request, Response: e.Response, Effect: e.Effect, Labels: e.Labels}
		switch e.Effect {
		case apps.EffectRead, apps.EffectWrite, apps.EffectIrreversible:
		default:
			errs = append(errs, fmt.Errorf("catalog %q: effect %q", e.Name, e.Effect))
		}
		if _, err := apps.NewCatalog(f); err != nil {
			errs = append(errs, err)
		}
		out = append(out, f)
	}
	return out, errors.Join(errs...)
}

// ToolInfo describes one tool as installed (for an apps screen).
type ToolInfo struct {
	Tool      string      // the server's name for it
	Function  string      // the function's name
	Effect    apps.Effect // after config
	Annotated apps.Effect // from the annotations alone
	OpenWorld bool
	// Functionality is the catalog entry it provides, if any.
	Functionality string
}

// tool is what an instance needs to call a function.
type tool struct {
	name       string // the server's
	structured bool   // has an output schema: return structuredContent
}

// App is an installed MCP server.
type App struct {
	name     string
	cfg      Server
	log      *slog.Logger
	manifest apps.Manifest
	tools    map[string]tool // by function name
	info     []ToolInfo
	shared   *instance
}

var (
	_ apps.PerSpoke = (*App)(nil)
	_ apps.App      = (*instance)(nil)
)

// New starts the server once to list its tools, builds and checks the
// manifest against cat, and stops the server.
func New(name string, cfg Server, cat *apps.Catalog, log *slog.Logger) (*App, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = DefaultStartTimeout
	}
	if cfg.MaxOutput <= 0 {
		cfg.MaxOutput = DefaultMaxOutput
	}
	if (cfg.Command == "") == (cfg.URL == "") {
		return nil, fmt.Errorf("mcp %s: give a command or a url", name)
	}
	a := &App{name: name, cfg: cfg, log: log.With("app", name)}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.StartTimeout)
	defer cancel()
	c, err := (&instance{app: a}).connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w", name, err)
	}
	defer c.stop(true)
	var tools []*sdk.Tool
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("mcp %s: listing its tools: %w", name, c.explain(ctx, err))
		}
		tools = append(tools, t)
	}
	if err := a.build(c.session.InitializeResult(), tools); err != nil {
		return nil, fmt.Errorf("mcp %s: %w", name, err)
	}
	if err := a.manifest.Check(cat); err != nil {
		return nil, err
	}
	a.shared = &instance{app: a}
	return a, nil
}

// build makes the manifest from the server's tools and the config.
func (a *App) build(init *sdk.InitializeResult, tools []*sdk.Tool) error {
	m := apps.Manifest{Name: a.name, Provides: map[string]string{}, Model: a.cfg.Model}
	desc := "An MCP server."
	if init != nil && init.ServerInfo != nil {
		desc = fmt.Sprintf("The MCP server %s %s.", init.ServerInfo.Name, init.ServerInfo.Version)
	}
	if init != nil && init.Instructions != "" {
		desc += "\n" + clip(init.Instructions, 4000)
	}
	m.Description = desc
	a.tools = map[string]tool{}
	taken := map[string]bool{}
	used := map[string]bool{}
	var errs []error
	sort.Slice(tools, func(i, j int) bool { return tools[i].Name < tools[j].Name })
	openWorld := false
	for _, t := range tools {
		fn := uniqueName(t.Name, taken)
		key, tc := a.toolConfig(t.Name, fn)
		if key != "" {
			used[key] = true
		}
		annotated, open := EffectOf(t.Annotations)
		effect, err := tighten(annotated, tc.Effect)
		if err != nil {
			errs = append(errs, fmt.Errorf("tools.%s: %w", t.Name, err))
			continue
		}
		openWorld = openWorld || open
		params, err := safeSchema(t.InputSchema, true)
		if err != nil {
			a.log.Warn("unusable input schema; the tool takes any object", "tool", t.Name, "err", err)
			params = permissiveObject
		}
		res, structured := TextResult, t.OutputSchema != nil
		if structured {
			if res, err = safeSchema(t.OutputSchema, false); err != nil {
				a.log.Warn("unusable output schema; results are only checked to be objects", "tool", t.Name, "err", err)
				res = permissiveObject
			}
		}
		m.Functions = append(m.Functions, apps.Function{Name: fn, Description: clip(t.Description, 2000), Params: params, Result: res, Effect: effect, Key: tc.Key})
		a.tools[fn] = tool{name: t.Name, structured: structured}
		if tc.Functionality != "" {
			m.Provides[tc.Functionality] = fn
		}
		a.info = append(a.info, ToolInfo{Tool: t.Name, Function: fn, Effect: effect, Annotated: annotated, OpenWorld: open, Functionality: tc.Functionality})
	}
	for k := range a.cfg.Tools {
		if !used[k] {
			names := make([]string, 0, len(tools))
			for _, t := range tools {
				names = append(names, t.Name)
			}
			errs = append(errs, fmt.Errorf("tools.%s: the server has no such tool (it has %s)", k, strings.Join(names, ", ")))
		}
	}
	if openWorld {
		m.Hosts = []string{"*"}
	}
	a.manifest = m
	return errors.Join(errs...)
}

// toolConfig finds a tool's configuration by its MCP name, its function
// name, or its MCP name in lower case (viper folds keys).
func (a *App) toolConfig(name, fn string) (string, ToolConfig) {
	for _, k := range []string{name, fn, strings.ToLower(name)} {
		if tc, ok := a.cfg.Tools[k]; ok {
			return k, tc
		}
	}
	return "", ToolConfig{}
}

// Manifest is the app's manifest.
func (a *App) Manifest() apps.Manifest { return a.manifest }

// Tools describes the installed tools, sorted by tool name.
func (a *App) Tools() []ToolInfo { return slices.Clone(a.info) }

// Remote reports whether the server is a streamable-HTTP endpoint.
func (a *App) Remote() bool { return a.cfg.URL != "" }

// NewInstance returns an instance for one spoke; its process starts on
// its first call, and Close stops it.
func (a *App) NewInstance() apps.App { return &instance{app: a} }

// Call calls a function on the app's shared instance (used where no spoke
// owns an instance, as in the --vanilla baseline).
func (a *App) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	return a.shared.Call(ctx, c)
}

// Close stops the shared instance's process, if it runs.
func (a *App) Close() error { return a.shared.Close() }
