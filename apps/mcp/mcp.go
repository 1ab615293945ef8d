// Package mcp makes an MCP server an app (DESIGN.md §5), with the official
// Go SDK: a stdio server (a command) or a streamable-HTTP endpoint.
//
// # Lifecycle
//
// New starts the server once, lists its tools to build the manifest, and
// stops it (bounded by StartTimeout). Open does the same unless a Cache
// holds the server's listing for its configuration: then the app is
// built from the cached listing, exactly as from a live one, and nothing
// is started. Each spoke then gets its own instance (NewInstance,
// apps.PerSpoke): the instance's child process starts on its first call
// and is stopped when the spoke closes it — the whole process group is
// killed and waited for, so nothing is left behind. The App itself can
// also be called (the --vanilla baseline does so); it keeps one shared
// instance for that, stopped by Close.
//
// # The tool-list cache
//
// A Cache keeps one JSON file per app: the key of the configuration it
// was listed with (a hash of command, args, env, dir, url and tools: a
// changed configuration is a miss) and what the server said of itself
// (name, version, instructions, tools). The file is untrusted input: it is
// checked when read, its schemas are vetted as a live listing's are, and
// a file that cannot be used (or an app that cannot be built from it) is
// a miss; the server is then listed live and the file rewritten.
//
// An instance that starts the server for a call lists its tools first.
// If they differ from the listing the app was built from (a new version,
// a new tool), the cache is rewritten, so the next bulkhead starts from
// the new listing. If nothing a call relies on changed (the functions,
// their schemas, effects and keys, provides, hosts; descriptions may
// differ), the call goes on. Otherwise the call fails with ErrChanged, as
// does every later call of the app in this process, without starting the
// server: the turn's other steps go on, and the hub planned, and
// permissions were decided, on the installed manifest, which is never
// swapped in a running process. Refresh (and App.Refresh) list a server
// live on demand and rewrite its file: `bulkhead doctor` and the apps
// screen use them.
//
// App methods are safe for concurrent use; an instance serialises its
// calls.
//
// A stdio child runs in the sandbox (package sandbox; what it may touch
// is in sandbox.go): a minimal environment (sandbox.Environ: PATH, the
// locale, a HOME and TMPDIR of its own) plus Server.Env — bulkhead's own
// variables, which may hold secrets, are not passed on — and on Linux a
// Landlock ruleset: it reads the system's folders and its installation,
// Server.Read, and reads and writes Server.Folders; never the data
// directory. What it starts dies with it. Its stderr and its MCP log
// messages go to the log, never to the terminal, rate-limited per app
// (stderr.go: a flood is dropped and counted), and withheld (counted)
// once the instance has served a private turn. It is advertised no client
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
//   - openWorldHint (true, or absent: the MCP default): the tool means to
//     reach the world outside. It is recorded in Tools; its effect is not
//     changed. What a stdio server can reach is its sandbox's: the
//     endpoints of Server.Net the user allows, which Manifest.Hosts lists.
//
// Provides maps each tool to a functionality: by default one of its own,
// <app>.<function> (Own), whose request is the tool's vetted input schema,
// whose effect is the tool's, and whose description the hub writes from
// the names alone (the function's and its arguments') — never the
// server's description, which only the app's own spoke reads;
// Server.Tools[tool].Functionality maps it to a catalog entry instead
// ("none": to no functionality). New catalog entries come from
// Server.Catalog (CatalogEntries): written by the user, they and the
// names are the only words about this app the hub planner reads.
//
// # Beyond tools: tasks, resources, prompts
//
// A tool whose execution.taskSupport is "required" runs only as a task,
// which bulkhead does not support: it is no function and no
// functionality (the planner is never offered it), and `bulkhead mcp
// list` names it as not supported. One whose tasks are "optional" is
// called plainly. The SDK drops the field: tap.go reads it off the wire.
//
// A server that declares the resources capability gets two read-only
// functions more (resources.go): read_resource (resources/read of a URI,
// such as a resource link a tool returned) and list_resources (its
// resources and templates). They are called as its tools are, through
// its spoke's own session, and return the app's text, bounded as a
// tool's result is. By default each is a functionality of its own, as
// an unmapped tool is; Server.Tools["read_resource"] (or
// "list_resources") configures it as a tool's config does.
//
// Its prompts are listed (names, and how many) and shown by `bulkhead
// mcp list`; the planner never runs them. What it asks of bulkhead
// (sampling, elicitation, roots) it does not get: the listing notes it,
// and a tool error says so. Summary is what `bulkhead mcp list` shows.
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
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/sandbox"
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
	// Folders are the folders a stdio server may read and write, Read
	// those it may only read (config mcp.<name>.folders and .read);
	// besides them it reads only the system's folders and its own
	// installation (see sandbox.go).
	Folders, Read []string
	// Net are the endpoints a stdio server may reach (config
	// mcp.<name>.net): each is put to the user (apps.Network, on the
	// context of the call that starts the server) and only those allowed
	// reach its sandbox. None, or a start with no one to ask: no network.
	Net []sandbox.Endpoint
	// Private are folders no grant may reach: bulkhead's data directory
	// and config folder (empty in the server's sandbox).
	Private []string
	// Changes keeps the layers the server writes Folders through: what
	// it writes there reaches them only as change sets the person
	// accepts. nil: Folders are read-only to it.
	Changes *changes.Store
	// Own is where bulkhead keeps the package runners' caches and
	// install trees of apps (runner.go): a server started through npx,
	// uvx, … gets a folder of its own in it. "": such a server's runner
	// caches nothing (its HOME is temporary). No grant may reach it.
	Own string
	// Data is the app's own data folder (data.go: DataFolder), kept
	// across its versions and configurations; its XDG_DATA_HOME. "":
	// none (what it writes outside its grants is gone when it ends).
	Data string
	// Reserved are more of bulkhead's folders no grant may reach, which
	// its sandbox does not hide: bulkhead's cache folder (cache_dir),
	// which holds every app's runner cache, wherever it lies.
	Reserved []string
	// Unconfined runs a stdio server without the sandbox, with bulkhead's
	// full environment: for tests that show the sandbox bites.
	Unconfined bool
	// Without leaves mechanisms of the sandbox out: for tests that show
	// what the others stop by themselves.
	Without []sandbox.Mechanism
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
	Functionality string      // catalog entry it provides ("": its own, Own; "none": none)
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
	kind       kind   // a tool, or the server's resources
}

// kind is what a function calls on the server.
type kind uint8

const (
	callTool      kind = iota // tools/call
	readResource              // resources/read
	listResources             // resources/list and resources/templates/list
)

// App is an installed MCP server.
type App struct {
	name   string
	cfg    Server
	log    *slog.Logger
	cache  *Cache // nil: none
	key    string // cacheKey(cfg)
	shared *instance
	stderr *stderrGate // what its servers write to the log
	built              // from listed
	listed listing

	sumOnce sync.Once
	sum     [32]byte // listed.sum(), computed when a server is started

	mu       sync.Mutex
	fromFile bool     // the cache held listed when the app was installed
	saved    [32]byte // the listing this process last wrote to the cache
	stale    error    // set once a started server's tools no longer match: calls fail with it
	// cfgLease is held by every process started under the current
	// config; Reconfigure ends it (reconfigure.go).
	cfgLease *configLease
}

// built is an app made from a listing and the config.
type built struct {
	manifest apps.Manifest
	tools    map[string]tool // by function name
	info     []ToolInfo
	own      []apps.Functionality // the tools' own functionalities (Own)
}

var (
	_ apps.PerSpoke = (*App)(nil)
	_ apps.App      = (*instance)(nil)
)

// ErrUnlisted is matched by Open's error for a server that could not be
// started or listed (it did not start, exited, timed out, or its
// network was not allowed) — as opposed to a config the app cannot be
// built from. bulkhead starts without such a server, and says how to
// list it (`bulkhead mcp add`, `bulkhead doctor`).
var ErrUnlisted = errors.New("the server could not be listed")

// DefaultListTimeout bounds listing a server that was allowed the network
// (a first npx run downloads the package).
const DefaultListTimeout = 3 * time.Minute

// New starts the server once to list its tools, builds and checks the
// manifest against cat, and stops the server.
func New(name string, cfg Server, cat *apps.Catalog, log *slog.Logger) (*App, error) {
	return Open(name, cfg, cat, nil, log)
}

// Open installs the server as an app. With its listing in cache, for this
// configuration, the server is not started: the app is built from the
// cached listing. Otherwise (no cache, a miss, a cache file that cannot
// be used, or a cached listing the app cannot be built from) it is started
// once to list its tools, the listing is saved in cache, and it is
// stopped, as New does.
func Open(name string, cfg Server, cat *apps.Catalog, cache *Cache, log *slog.Logger) (*App, error) {
	return OpenContext(context.Background(), name, cfg, cat, cache, log)
}

// OpenContext is Open, listing (when it must) with ctx: its network is
// asked as apps.NetworkOf(ctx) asks it (`bulkhead mcp add` asks on the
// terminal), and ctx bounds the wait.
func OpenContext(ctx context.Context, name string, cfg Server, cat *apps.Catalog, cache *Cache, log *slog.Logger) (*App, error) {
	a, err := prepare(name, cfg, cache, log)
	if err != nil {
		return nil, err
	}
	if cache != nil {
		l, err := cache.load(name, a.key)
		if err == nil {
			if err = a.install(l, cat); err == nil {
				a.fromFile = true
				a.log.Info("tools from the cache", "server", l.String(), "tools", len(l.Tools))
				return a, nil
			}
		}
		if !errors.Is(err, errMiss) {
			a.log.Warn("the cached tool list is unusable; listing the server's tools", "err", err)
		}
	}
	if cfg.URL == "" {
		// A command that is not there, a folder the sandbox refuses:
		// the config's to change, not a start that failed.
		if _, _, err := policy(a.cfg); err != nil {
			return nil, fmt.Errorf("mcp %s: %w", name, err)
		}
	}
	l, err := a.listLive(ctx)
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w: %w", name, ErrUnlisted, err)
	}
	a.remember(l)
	if err := a.install(l, cat); err != nil {
		return nil, err
	}
	return a, nil
}

// Check makes the checks Open makes before it starts a server: the
// config (a command or a url), and a stdio server's command and folders
// as its sandbox takes them. What fails here is the config's to change,
// not a start that failed.
func Check(name string, cfg Server) error {
	a, err := prepare(name, cfg, nil, nil)
	if err != nil {
		return err
	}
	if cfg.URL == "" {
		if _, _, err := policy(a.cfg); err != nil {
			return fmt.Errorf("mcp %s: %w", name, err)
		}
	}
	return nil
}

// ConfigKey names a server's configuration as the cache keys it: equal
// keys, one listing.
func ConfigKey(cfg Server) string { return cacheKey(cfg) }

// prepare is an app not yet built: the config checked, defaults set.
func prepare(name string, cfg Server, cache *Cache, log *slog.Logger) (*App, error) {
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
	a := &App{name: name, cfg: cfg, log: log.With("app", name), cache: cache, key: cacheKey(cfg)}
	a.stderr = newStderrGate(a.log)
	a.shared = &instance{app: a}
	return a, nil
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
