package mcp

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// listing is what a server tells of itself once started: its name,
// version and instructions, its tools, whether it serves resources, and
// its prompts. The manifest is built from a listing, whether it was just
// listed or read from the cache, so the two paths build the same app.
type listing struct {
	Server       string       `json:"server"`
	Version      string       `json:"version"`
	Instructions string       `json:"instructions,omitempty"`
	Tools        []listedTool `json:"tools"`
	// Resources: the server declares the resources capability; its own
	// spoke may list and read them (resources.go). Subscribe: it offers
	// subscriptions to them, which bulkhead does not use.
	Resources bool `json:"resources,omitempty"`
	Subscribe bool `json:"subscribe,omitempty"`
	// Completions: it offers completions (of prompt arguments), which
	// bulkhead does not use.
	Completions bool `json:"completions,omitempty"`
	// Prompts names its prompts (at most maxPrompts of them; Prompted
	// counts them all): listed and shown, never run.
	Prompts  []string `json:"prompts,omitempty"`
	Prompted int      `json:"prompted,omitempty"`
	// Asked names what the server asked of bulkhead while it was listed
	// (sampling, elicitation, roots): bulkhead offers none of it. It is
	// no part of the listing's fingerprint (sum): a server may ask at
	// one start and not at the next.
	Asked []string `json:"asked,omitempty"`
}

// listedTool is what the manifest needs of one tool.
type listedTool struct {
	Name         string          `json:"name"`
	Description  string          `json:"description,omitempty"`
	InputSchema  json.RawMessage `json:"input_schema,omitempty"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  *listedHints    `json:"annotations,omitempty"`
	// Tasks is the tool's execution.taskSupport: "required" (it runs
	// only as a task: not offered), "optional" (called plainly),
	// "forbidden" or "" (called plainly).
	Tasks string `json:"tasks,omitempty"`
}

// requiresTasks reports whether the tool can only be called as a task,
// which bulkhead does not support.
func (t listedTool) requiresTasks() bool { return t.Tasks == taskRequired }

// listedHints are the annotations EffectOf reads.
type listedHints struct {
	ReadOnly    bool  `json:"read_only,omitempty"`
	Destructive *bool `json:"destructive,omitempty"`
	OpenWorld   *bool `json:"open_world,omitempty"`
}

func (h *listedHints) sdk() *sdk.ToolAnnotations {
	if h == nil {
		return nil
	}
	return &sdk.ToolAnnotations{ReadOnlyHint: h.ReadOnly, DestructiveHint: h.Destructive, OpenWorldHint: h.OpenWorld}
}

// newListing turns what a server answered into a listing: schemas in
// canonical JSON (keys sorted), tools sorted by name. tasks is each
// tool's execution.taskSupport, by name (the SDK's Tool has no field for
// it: tap.go reads it off the wire).
func newListing(init *sdk.InitializeResult, tools []*sdk.Tool, tasks map[string]string) listing {
	var l listing
	if init != nil {
		if init.ServerInfo != nil {
			l.Server, l.Version = init.ServerInfo.Name, init.ServerInfo.Version
		}
		l.Instructions = init.Instructions
		if c := init.Capabilities; c != nil {
			l.Resources = c.Resources != nil
			l.Subscribe = c.Resources != nil && c.Resources.Subscribe
			l.Completions = c.Completions != nil
		}
	}
	for _, t := range tools {
		lt := listedTool{Name: t.Name, Description: t.Description, InputSchema: canonical(t.InputSchema), OutputSchema: canonical(t.OutputSchema), Tasks: tasks[t.Name]}
		if a := t.Annotations; a != nil {
			lt.Annotations = &listedHints{ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint, OpenWorld: a.OpenWorldHint}
		}
		l.Tools = append(l.Tools, lt)
	}
	slices.SortStableFunc(l.Tools, func(x, y listedTool) int { return strings.Compare(x.Name, y.Name) })
	return l
}

// canonical is v as JSON with its keys sorted; nil for nothing (or for
// what does not marshal).
func canonical(v any) json.RawMessage {
	if raw, ok := v.(json.RawMessage); ok {
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil
		}
	}
	if v == nil {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	return b
}

// sum is the listing's fingerprint: equal sums, equal listings (what
// the server asked while it was listed aside).
func (l listing) sum() [32]byte {
	l.Asked = nil
	b, _ := json.Marshal(l) // only strings, bools, numbers and canonical JSON
	return sha256.Sum256(b)
}

// String names the server and its version.
func (l listing) String() string {
	return strings.TrimSpace(clip(l.Server, 100) + " " + clip(l.Version, 100))
}

// Cache keeps each MCP server's listing between processes, a JSON file per
// app in one directory, so that an app can be installed without starting
// its server. An entry holds the key of the configuration it was listed
// with (key); an entry for another configuration is a miss. A Cache is
// safe for concurrent use, by goroutines and by processes: a file is
// replaced whole (written aside, then renamed), and the last writer wins.
//
// What a file holds was written by the server, and anyone who can write
// the data directory can change it: reading one checks everything the
// manifest will rely on, and a file that fails a check is a miss (the
// server is then started and listed, as with no cache).
type Cache struct {
	dir string
}

// NewCache returns a cache in dir (created on the first write).
func NewCache(dir string) *Cache { return &Cache{dir: dir} }

// Dir is where the cache keeps its files.
func (c *Cache) Dir() string { return c.dir }

// cacheFormat is the version of the file layout and of key; a file of
// another format is a miss. 2: tools' taskSupport, resources, prompts
// (a file of format 1 does not say which tools require tasks).
const cacheFormat = 2

// Bounds on a cache file, beyond which it is not read.
const (
	maxCacheFile = 8 << 20
	maxTools     = 4096
	maxNameLen   = 512
	maxPrompts   = 256
)

// cacheFile is one file of the cache.
type cacheFile struct {
	Format  int       `json:"format"`
	Key     string    `json:"key"`
	Listed  time.Time `json:"listed"`
	Listing listing   `json:"listing"`
}

// cacheKey is the fingerprint of what decides a server's listing and how
// it is mapped: how it is started (command, args, env, dir) or reached
// (url), and the tool configuration. It is a hash, so the file does not
// hold the configuration (env may hold secrets).
func cacheKey(cfg Server) string {
	b, _ := json.Marshal(struct {
		Format  int
		Command string
		Args    []string
		Env     map[string]string
		Dir     string
		URL     string
		Tools   map[string]ToolConfig
	}{cacheFormat, cfg.Command, cfg.Args, cfg.Env, cfg.Dir, cfg.URL, cfg.Tools})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// errMiss is a cache miss: no entry, or one for another configuration.
var errMiss = errors.New("not cached")

func (c *Cache) path(app string) (string, error) {
	if app == "" || app != filepath.Base(app) || strings.HasPrefix(app, ".") {
		return "", fmt.Errorf("app name %q cannot name a cache file", app)
	}
	return filepath.Join(c.dir, app+".json"), nil
}

// load reads an app's listing for the configuration key: errMiss if
// there is none, another error if the file is unusable.
func (c *Cache) load(app, key string) (l listing, err error) {
	defer func() { // the file is untrusted input: nothing in it may crash start-up
		if r := recover(); r != nil {
			err = fmt.Errorf("reading the cache: %v", r)
		}
	}()
	p, err := c.path(app)
	if err != nil {
		return listing{}, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return listing{}, errMiss
	}
	if err != nil {
		return listing{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return listing{}, err
	}
	if fi.Size() > maxCacheFile {
		return listing{}, fmt.Errorf("%s: over %d bytes", p, maxCacheFile)
	}
	buf := bytes.NewBuffer(make([]byte, 0, fi.Size()+bytes.MinRead))
	if _, err := buf.ReadFrom(io.LimitReader(f, maxCacheFile+1)); err != nil {
		return listing{}, err
	}
	if buf.Len() > maxCacheFile {
		return listing{}, fmt.Errorf("%s: over %d bytes", p, maxCacheFile)
	}
	var cf cacheFile
	dec := json.NewDecoder(buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cf); err != nil {
		return listing{}, fmt.Errorf("%s: %w", p, err)
	}
	if dec.More() {
		return listing{}, fmt.Errorf("%s: data after the entry", p)
	}
	if cf.Format != cacheFormat || cf.Key != key {
		return listing{}, errMiss
	}
	if err := cf.Listing.check(); err != nil {
		return listing{}, fmt.Errorf("%s: %w", p, err)
	}
	return cf.Listing, nil
}

// check vets the shape of a listing read from a file. Its schemas are
// vetted as a live listing's are, when the app is built (safeSchema).
func (l *listing) check() error {
	if len(l.Tools) > maxTools {
		return fmt.Errorf("%d tools", len(l.Tools))
	}
	for i, t := range l.Tools {
		if t.Name == "" || len(t.Name) > maxNameLen {
			return fmt.Errorf("tool %d: name %q empty or too long", i, clip(t.Name, 40))
		}
		if i > 0 && l.Tools[i-1].Name >= t.Name {
			return fmt.Errorf("tool %q: out of order or repeated", clip(t.Name, 40))
		}
		if len(t.Tasks) > 32 {
			return fmt.Errorf("tool %q: taskSupport too long", clip(t.Name, 40))
		}
	}
	if len(l.Prompts) > maxPrompts || l.Prompted < len(l.Prompts) {
		return fmt.Errorf("%d prompts named, %d counted", len(l.Prompts), l.Prompted)
	}
	for _, p := range l.Prompts {
		if p == "" || len(p) > maxNameLen {
			return fmt.Errorf("prompt name %q empty or too long", clip(p, 40))
		}
	}
	for _, a := range l.Asked {
		if !slices.Contains(askable, a) {
			return fmt.Errorf("asked %q", clip(a, 40))
		}
	}
	return nil
}

// save writes an app's listing for the configuration key.
func (c *Cache) save(app, key string, l listing) error {
	p, err := c.path(app)
	if err != nil {
		return err
	}
	// Compact: the schemas stay byte for byte what a live listing holds,
	// so that the sums of equal listings are equal.
	b, err := json.Marshal(cacheFile{Format: cacheFormat, Key: key, Listed: time.Now().UTC(), Listing: l})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, "."+app+"-*.tmp")
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), p)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing the cache %s: %w", p, err)
	}
	return nil
}

// Forget removes the cached listing of app, if there is one: its next
// Open lists the server live.
func (c *Cache) Forget(app string) {
	if p, err := c.path(app); err == nil {
		_ = os.Remove(p)
	}
}

// Listed reports whether the cache holds a usable listing of app for the
// configuration cfg — an app opened with cfg now is built from it,
// without starting the server — and names that listing: equal names,
// equal listings.
func (c *Cache) Listed(app string, cfg Server) (string, bool) {
	l, err := c.load(app, cacheKey(cfg))
	if err != nil {
		return "", false
	}
	sum := l.sum()
	return hex.EncodeToString(sum[:]), true
}

// Outdated reports whether the cache the app was opened with holds
// another listing for its configuration than the one the app was built
// from — one a later listing saved (`bulkhead doctor`, `bulkhead mcp
// add`, a refresh, a server that listed other tools when it started): an
// app opened now is built from that one.
func (a *App) Outdated() bool {
	if a.cache == nil {
		return false
	}
	l, err := a.cache.load(a.name, a.key)
	return err == nil && l.sum() != a.listedSum()
}

// OpenCached is Open from the cache alone: a server the cache does not
// list for cfg, or whose cached listing the app cannot be built from, is
// an error matching ErrUnlisted, and is never started.
func OpenCached(name string, cfg Server, cat *apps.Catalog, cache *Cache, log *slog.Logger) (*App, error) {
	a, err := prepare(name, cfg, cache, log)
	if err != nil {
		return nil, err
	}
	if cache == nil {
		return nil, fmt.Errorf("mcp %s: %w: no cache to build it from", name, ErrUnlisted)
	}
	l, err := cache.load(name, a.key)
	if err == nil {
		err = a.install(l, cat)
	}
	if err != nil {
		return nil, fmt.Errorf("mcp %s: %w: its cached tool list: %w", name, ErrUnlisted, err)
	}
	a.fromFile = true
	a.log.Info("tools from the cache", "server", l.String(), "tools", len(l.Tools))
	return a, nil
}
