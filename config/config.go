// Package config turns the config file, BULKHEAD_* environment variables
// and command-line flags into one typed, validated Config. A bad value is
// reported as an *Error naming the key and where it came from; the command
// line exits 2 on it.
//
// Precedence, highest first: flags, BULKHEAD_* variables, the config file,
// OLLAMA_HOST (for ollama.host only), built-in defaults.
//
// A Config is a plain value; loading is not safe to run concurrently with
// changes to the process environment.
package config

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/adrg/xdg"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/bulkhead-dev/bulkhead/llm"
)

// DefaultToolCallsPerTurn bounds the app calls of one turn, every spoke
// and request together.
const DefaultToolCallsPerTurn = 64

// DefaultModel is small (1.4 GB), tool-capable, thinks, and follows
// `format` schemas well enough to plan.
const DefaultModel = "qwen3:1.7b"

// Config is bulkhead's typed configuration.
type Config struct {
	File    string // the config file read, "" if none
	DataDir string
	// CacheDir is where bulkhead keeps what it can make again
	// (cache_dir, default $XDG_CACHE_HOME/bulkhead): the package
	// runners' caches of apps (AppsCache).
	CacheDir string
	Ollama   Ollama
	Hub      Owner
	Spokes   Owner
	Apps     map[string]App
	Theme    string // auto, dark, light
	// Draft starts the plain answer while the hub plans and keeps it when
	// the plan is plain chat (hub.draft, default on; hub.Options.Draft).
	Draft bool
	// Mouse captures the mouse in the TUI (ui.mouse, default off): the
	// wheel scrolls, and selecting text takes shift+drag.
	Mouse bool
	// Accessible runs the chat in line mode for screen readers (ui.accessible,
	// default off; --accessible): no full-screen drawing, dialogs as
	// numbered huh prompts.
	Accessible bool
	// Enable lists the apps to install: names, or the packs "builtin"
	// (files, notes, shell, clock, calc) and "demo" (the case studies).
	Enable []string
	// Workspace is the folder the files and shell apps work in.
	Workspace string
	// Rules are the permission rules (allow / ask / deny).
	Rules []Rule
	// MCP are the MCP servers that may be installed as apps (mcp.go).
	MCP map[string]MCPServer
	// Memory tunes long-term memory.
	Memory Memory
	// Limits bound what a model or an app can grow (limits.*).
	Limits Limits
	// From names where the values of the keys a user most often sets came
	// from (enable, workspace, data_dir, hub.model, spokes.model,
	// ollama.host): "--apps", "$BULKHEAD_ENABLE", the file, "default".
	// Checks made after Load (an unknown app) name it as Load's do.
	From map[string]string
}

// Invalid is an error about key as Load reports its own: it names where
// the value came from and matches ErrInvalid.
func (c Config) Invalid(key, msg string) error {
	src := c.From[key]
	if src == "" {
		src = "default"
	}
	return &Error{Key: key, Source: src, Msg: msg}
}

// Limits bound what a model call and a turn may grow to; each has a
// default (limits.answer_bytes, limits.tool_arg_bytes,
// limits.tool_calls_per_answer, limits.tool_calls_per_turn,
// limits.stall_timeout, limits.call_timeout).
type Limits struct {
	Model            llm.Limits
	ToolCallsPerTurn int
	// LogMB caps bulkhead.log before it is rotated (limits.log_mb);
	// DiskFloorMB is the free space below which a turn is refused rather
	// than risk the database (limits.disk_floor_mb).
	LogMB, DiskFloorMB int
}

// Defaults of the limits that are not a model call's.
const (
	DefaultLogMB       = 10
	DefaultDiskFloorMB = 256
)

// Memory tunes long-term memory.
type Memory struct {
	// Enabled: summaries and entities are kept (memory.enabled, default on).
	Enabled bool
	// LLMDetector: the hub's model also looks for instruction-like text
	// in app output before it is stored, on top of the deterministic rules
	// (memory.llm_detector, default off: it costs a model call per store).
	LLMDetector bool
	// Every batches the upkeep: a summary and entities of a chat once this
	// many of its turns are new (memory.every, default 4).
	Every int
	// Idle is how long after a chat's last turn its pending upkeep runs in
	// a running bulkhead whatever the count (memory.idle, default 2m; 0:
	// only with the next batch).
	Idle time.Duration
}

// Rule is one permission rule from the config file.
type Rule struct {
	Effect, Kind, Subject, Object, Function string
	Where                                   string // "file: permissions.rules[i]"
}

// Ollama is how to reach the default Ollama server.
type Ollama struct {
	Host      string
	KeepAlive time.Duration
	NumCtx    int
}

// Owner is the model configuration of the hub or of spokes by default.
type Owner struct {
	Model string
	// History is how many past interactions go into working memory.
	History int
}

// App overrides the model or Ollama host of one app's spoke.
type App struct {
	Model string
	Host  string
}

// Error is a bad configuration value.
type Error struct {
	Key    string
	Source string // "/path/config.yaml", "$BULKHEAD_HUB_MODEL", "--model", "default"
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("config: %s (from %s): %s", e.Key, e.Source, e.Msg)
}

// ErrInvalid is what every *Error and file problem matches with errors.Is.
var ErrInvalid = errors.New("invalid configuration")

func (e *Error) Is(target error) bool { return target == ErrInvalid }

// DefaultFile is where the config file lives unless --config says otherwise.
func DefaultFile() string { return filepath.Join(xdg.ConfigHome, "bulkhead", "config.yaml") }

// DefaultDataDir is where bulkhead keeps its database and log.
func DefaultDataDir() string { return filepath.Join(xdg.DataHome, "bulkhead") }

// DefaultCacheDir is where bulkhead keeps what it can make again.
func DefaultCacheDir() string { return filepath.Join(xdg.CacheHome, "bulkhead") }

// DefaultConfigDir is the folder of the default config file: no app's
// grant may reach it.
func DefaultConfigDir() string { return filepath.Dir(DefaultFile()) }

// AppsCache is where the apps started through a package runner (npx,
// uvx, …) keep their caches and install trees, each its own.
func (c Config) AppsCache() string { return filepath.Join(c.CacheDir, "apps") }

// setDefaults gives v the built-in default of every key.
func setDefaults(v *viper.Viper, host string) {
	v.SetDefault("ollama.host", host)
	v.SetDefault("ollama.keep_alive", "10m")
	v.SetDefault("ollama.num_ctx", 8192)
	v.SetDefault("hub.model", DefaultModel)
	v.SetDefault("hub.history", 8)
	v.SetDefault("hub.draft", true)
	v.SetDefault("spokes.model", DefaultModel)
	v.SetDefault("spokes.history", 10)
	v.SetDefault("data_dir", DefaultDataDir())
	v.SetDefault("cache_dir", DefaultCacheDir())
	v.SetDefault("ui.theme", "auto")
	v.SetDefault("ui.mouse", false)
	v.SetDefault("ui.accessible", false)
	v.SetDefault("enable", []string{"builtin"})
	v.SetDefault("memory.enabled", true)
	v.SetDefault("memory.llm_detector", false)
	v.SetDefault("memory.every", 4)
	v.SetDefault("limits.answer_bytes", llm.DefaultLimits.AnswerBytes)
	v.SetDefault("limits.tool_arg_bytes", llm.DefaultLimits.ToolArgBytes)
	v.SetDefault("limits.tool_calls_per_answer", llm.DefaultLimits.ToolCalls)
	v.SetDefault("limits.tool_calls_per_turn", DefaultToolCallsPerTurn)
	v.SetDefault("limits.stall_timeout", llm.DefaultLimits.Stall.String())
	v.SetDefault("limits.call_timeout", llm.DefaultLimits.Total.String())
	v.SetDefault("limits.log_mb", DefaultLogMB)
	v.SetDefault("limits.disk_floor_mb", DefaultDiskFloorMB)
	v.SetDefault("memory.idle", "2m")
	if wd, err := os.Getwd(); err == nil {
		v.SetDefault("workspace", wd)
	}
}

// EnvNames are the environment variables that set a config key
// (BULKHEAD_ENABLE, BULKHEAD_HUB_MODEL, …), with OLLAMA_HOST: what a
// test clears so that nothing of the user's reaches it.
func EnvNames() []string {
	v := viper.New()
	setDefaults(v, "")
	out := []string{"OLLAMA_HOST"}
	for _, k := range v.AllKeys() {
		out = append(out, "BULKHEAD_"+strings.ToUpper(strings.ReplaceAll(k, ".", "_")))
	}
	for top := range knownTop {
		out = append(out, "BULKHEAD_"+strings.ToUpper(top))
	}
	sort.Strings(out)
	return out
}

// Sources is a viper holding defaults, BULKHEAD_* variables and the config
// file, plus the flags bound to its keys.
type Sources struct {
	V     *viper.Viper
	flags map[string]*pflag.Flag
}

// BindFlag makes a command-line flag set key when it is given.
func (s *Sources) BindFlag(key string, f *pflag.Flag) error {
	if f == nil {
		return fmt.Errorf("bind %s: no such flag", key)
	}
	s.flags[key] = f
	return s.V.BindPFlag(key, f)
}

// Open prepares the sources: defaults, BULKHEAD_* variables and the config
// file (the explicit path, or the default one if it exists). Bind flags,
// then Load.
func Open(file string) (*Sources, error) {
	v := viper.New()
	host := llm.DefaultHost
	if h := os.Getenv("OLLAMA_HOST"); h != "" {
		host = h
	}
	setDefaults(v, host)
	v.SetEnvPrefix("BULKHEAD")
	v.SetEnvKeyReplacer(strings.NewReplacer(".", "_"))
	v.AutomaticEnv()

	explicit := file != ""
	if !explicit {
		file = DefaultFile()
	}
	if _, err := os.Stat(file); err != nil {
		if explicit || !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: config file %s: %v", ErrInvalid, file, err)
		}
		return &Sources{V: v, flags: map[string]*pflag.Flag{}}, nil
	}
	v.SetConfigFile(file)
	v.SetConfigType("yaml")
	if err := v.ReadInConfig(); err != nil {
		return nil, fmt.Errorf("%w: config file %s: %v", ErrInvalid, file, err)
	}
	return &Sources{V: v, flags: map[string]*pflag.Flag{}}, nil
}

var (
	appName   = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)
	modelName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/@-]*$`)
	knownTop  = map[string]bool{"ollama": true, "hub": true, "spokes": true, "apps": true, "data_dir": true, "cache_dir": true, "ui": true, "enable": true, "workspace": true, "permissions": true, "mcp": true, "memory": true, "limits": true}
)

// Load validates what the sources hold and returns the typed Config.
func (s *Sources) Load() (Config, error) {
	v := s.V
	l := loader{v: v, flags: s.flags}
	c := Config{File: v.ConfigFileUsed()}
	c.Ollama.Host = l.host("ollama.host")
	c.Ollama.KeepAlive = l.duration("ollama.keep_alive")
	c.Ollama.NumCtx = l.nonNegInt("ollama.num_ctx")
	c.Hub = Owner{Model: l.model("hub.model"), History: l.nonNegInt("hub.history")}
	c.Draft = l.boolean("hub.draft")
	c.Spokes = Owner{Model: l.model("spokes.model"), History: l.nonNegInt("spokes.history")}
	c.DataDir = l.path("data_dir")
	c.CacheDir = l.path("cache_dir")
	c.Theme = l.oneOf("ui.theme", "auto", "dark", "light")
	c.Mouse = l.boolean("ui.mouse")
	c.Accessible = l.boolean("ui.accessible")
	c.Enable = l.list("enable")
	c.Workspace = l.path("workspace")
	if c.Workspace != "" {
		if fi, err := os.Stat(c.Workspace); err != nil {
			l.fail("workspace", fmt.Sprintf("%s: no such folder (the files and shell apps work in it)", c.Workspace))
		} else if !fi.IsDir() {
			l.fail("workspace", fmt.Sprintf("%s is not a folder", c.Workspace))
		}
	}
	c.Rules = l.rules("permissions.rules")
	c.MCP = l.mcp("mcp")
	c.Limits = Limits{Model: llm.Limits{AnswerBytes: l.positiveInt("limits.answer_bytes"), ToolArgBytes: l.positiveInt("limits.tool_arg_bytes"),
		ToolCalls: l.positiveInt("limits.tool_calls_per_answer"), Stall: l.duration("limits.stall_timeout"), Total: l.duration("limits.call_timeout")},
		ToolCallsPerTurn: l.positiveInt("limits.tool_calls_per_turn"), LogMB: l.positiveInt("limits.log_mb"), DiskFloorMB: l.nonNegInt("limits.disk_floor_mb")}
	c.Memory = Memory{Enabled: l.boolean("memory.enabled"), LLMDetector: l.boolean("memory.llm_detector"),
		Every: l.nonNegInt("memory.every"), Idle: l.duration("memory.idle")}
	c.Apps = map[string]App{}
	for name := range v.GetStringMap("apps") {
		key := "apps." + name
		if !appName.MatchString(name) {
			l.fail(key, fmt.Sprintf("app name %q must be lower-case letters, digits, '-' or '_'", name))
			continue
		}
		sub := v.GetStringMap(key)
		for k := range sub {
			if k != "model" && k != "host" {
				l.fail(key+"."+k, "unknown key (apps take model and host)")
			}
		}
		a := App{}
		if _, ok := sub["model"]; ok {
			a.Model = l.model(key + ".model")
		}
		if _, ok := sub["host"]; ok {
			a.Host = l.host(key + ".host")
		}
		c.Apps[name] = a
	}
	if c.File != "" {
		known := viper.New()
		setDefaults(known, "")
		keys := append(known.AllKeys(), "permissions.rules")
		for _, k := range v.AllKeys() {
			if !v.InConfig(k) {
				continue
			}
			top, _, _ := strings.Cut(k, ".")
			switch {
			case !knownTop[top]:
				l.fail(k, "unknown key"+didYouMean(top, slices.Sorted(maps.Keys(knownTop))))
			case top == "apps" || top == "mcp" || k == "permissions.rules":
				// checked where they are read
			case !slices.Contains(keys, k):
				l.fail(k, "unknown key"+didYouMean(k, keys))
			}
		}
	}
	if len(l.errs) > 0 {
		return Config{}, errors.Join(l.errs...)
	}
	c.From = map[string]string{}
	for _, k := range []string{"enable", "workspace", "data_dir", "hub.model", "spokes.model", "ollama.host"} {
		c.From[k] = l.source(k)
	}
	return c, nil
}

// AppModel is the model app's own entry in the config gives its spoke
// ("" when none: it follows spokes.model and /model), read as LLM reads
// it — apps.NAME before mcp.NAME — and key, the config key that gives it
// (or would: apps.NAME.model where neither does), for a fix to name.
func (c Config) AppModel(app string) (model, key string) {
	if m := c.Apps[app].Model; m != "" {
		return m, "apps." + app + ".model"
	}
	if m := c.MCP[app].Model; m != "" {
		return m, "mcp." + app + ".model"
	}
	return "", "apps." + app + ".model"
}

// LLM is the model configuration for the hub ("hub") or an app's spoke.
func (c Config) LLM(owner string) llm.Config {
	lc := llm.Config{Host: c.Ollama.Host, Model: c.Spokes.Model, KeepAlive: c.Ollama.KeepAlive, NumCtx: c.Ollama.NumCtx, Limits: c.Limits.Model}
	if owner == "hub" {
		lc.Model = c.Hub.Model
		return lc
	}
	if m, ok := c.MCP[owner]; ok {
		if m.Model != "" {
			lc.Model = m.Model
		}
		if m.Host != "" {
			lc.Host = m.Host
		}
	}
	if a, ok := c.Apps[owner]; ok {
		if a.Model != "" {
			lc.Model = a.Model
		}
		if a.Host != "" {
			lc.Host = a.Host
		}
	}
	return lc
}

// Models lists every distinct model the configuration uses, sorted.
func (c Config) Models() []string {
	set := map[string]bool{c.Hub.Model: true, c.Spokes.Model: true}
	for _, a := range c.Apps {
		if a.Model != "" {
			set[a.Model] = true
		}
	}
	for _, m := range c.MCP {
		if m.Model != "" {
			set[m.Model] = true
		}
	}
	out := make([]string, 0, len(set))
	for m := range set {
		out = append(out, m)
	}
	sort.Strings(out)
	return out
}
