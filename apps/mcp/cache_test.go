package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// starts counts the test server's starts logged to a file (-starts).
func starts(t *testing.T, file string) int {
	t.Helper()
	b, err := os.ReadFile(file)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

// counted is a test server config that logs its starts to a file in dir,
// and reads its version from dir/version when that file exists.
func counted(t *testing.T, dir string) (Server, string) {
	t.Helper()
	log := filepath.Join(dir, "starts")
	args := []string{"-starts", log}
	if _, err := os.Stat(filepath.Join(dir, "version")); err == nil {
		args = append(args, "-version-file", filepath.Join(dir, "version"))
	}
	// The log is written straight into dir (staging left out): what is
	// counted is the starts, not what reaches the folder.
	return Server{Command: TestServer, Args: args, Folders: []string{dir}, Tools: map[string]ToolConfig{"echo": {Functionality: "test.echo"}},
		Without: []sandbox.Mechanism{sandbox.Staging}}, log
}

func open(t *testing.T, cfg Server, cache *Cache) *App {
	t.Helper()
	a, err := Open("tester", cfg, CatalogForTests(t), cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// With the listing cached, installing the app starts no process: the app
// (manifest, tools) is the one a live listing built; the process starts
// on the first call.
func TestWarmCacheStartsNoServer(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, log := counted(t, dir)
	cache := NewCache(filepath.Join(dir, "cache"))
	live := open(t, cfg, cache)
	if n := starts(t, log); n != 1 {
		t.Fatalf("a cold cache lists the server once: %d starts", n)
	}
	fi, err := os.Stat(filepath.Join(cache.Dir(), "tester.json"))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("cache file: %v %v", fi, err)
	}
	cached := open(t, cfg, cache)
	if n := starts(t, log); n != 1 {
		t.Fatalf("a warm cache must start nothing: %d starts", n)
	}
	if live.listedSum() != cached.listedSum() || !reflect.DeepEqual(live.Manifest(), cached.Manifest()) || !reflect.DeepEqual(live.Tools(), cached.Tools()) || !reflect.DeepEqual(live.tools, cached.tools) {
		t.Fatalf("the cached app differs from the live one:\n%+v\n%+v", live.Manifest(), cached.Manifest())
	}
	in := cached.NewInstance()
	defer in.(io.Closer).Close()
	if pid(in) != 0 {
		t.Fatal("an instance must not start before its first call")
	}
	out, err := call(in, "echo", `{"text":"lazy"}`, 10*time.Second)
	if err != nil || string(out) != `{"content":"echo: lazy"}` {
		t.Fatalf("first call: %s %v", out, err)
	}
	if n := starts(t, log); n != 2 || pid(in) == 0 {
		t.Fatalf("the first call starts the server: %d starts, pid %d", n, pid(in))
	}
	if after, _ := os.Stat(filepath.Join(cache.Dir(), "tester.json")); !after.ModTime().Equal(fi.ModTime()) {
		t.Fatal("the server listed what the cache holds: the file must not be rewritten")
	}
	if _, err := call(in, "echo", `{"text":"again"}`, 10*time.Second); err != nil || starts(t, log) != 2 {
		t.Fatalf("the second call reuses it: %v, %d starts", err, starts(t, log))
	}
}

// The cache is keyed by the configuration: changing how the server is
// started or how its tools are mapped lists it again, once.
func TestCacheFollowsTheConfig(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base, log := counted(t, dir)
	cache := NewCache(filepath.Join(dir, "cache"))
	open(t, base, cache)
	variants := map[string]func(*Server){
		"args": func(s *Server) { s.Args = append(s.Args, "-http", "") },
		"env":  func(s *Server) { s.Env = map[string]string{"TOKEN": "x"} },
		"dir":  func(s *Server) { s.Dir = dir },
		"tools": func(s *Server) {
			s.Tools = map[string]ToolConfig{"echo": {Functionality: "test.echo", Key: []string{"text"}}}
		},
		"effect": func(s *Server) {
			s.Tools = map[string]ToolConfig{"echo": {Functionality: "test.echo", Effect: "write"}}
		},
	}
	for name, change := range variants {
		cfg := base
		cfg.Args = append([]string(nil), base.Args...)
		change(&cfg)
		before := starts(t, log)
		a := open(t, cfg, cache)
		if n := starts(t, log) - before; n != 1 {
			t.Errorf("%s changed: want the server listed once, %d starts", name, n)
		}
		open(t, cfg, cache)
		if n := starts(t, log) - before; n != 1 {
			t.Errorf("%s: the refreshed cache must be used: %d starts", name, n)
		}
		if name == "effect" {
			if f, _ := a.Manifest().Function("echo"); f.Effect != "write" {
				t.Errorf("effect: %+v", f)
			}
		}
	}
}

// A server started for a call that reports another version refreshes the
// cache. The same tools: the call goes on. Other tools: the call fails
// with ErrChanged (the hub planned on the installed ones), later calls
// fail without starting it, and the next install uses the new list.
func TestStartedServerRefreshesTheCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	version := filepath.Join(dir, "version")
	write := func(s string) {
		if err := os.WriteFile(version, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("1.0.0")
	cfg, log := counted(t, dir)
	cache := NewCache(filepath.Join(dir, "cache"))
	open(t, cfg, cache)

	write("2.0.0")
	a := open(t, cfg, cache)
	if !strings.Contains(a.Manifest().Description, "testserver 1.0.0") {
		t.Fatalf("from the cache: %q", a.Manifest().Description)
	}
	if out, err := call(a, "echo", `{"text":"v2"}`, 10*time.Second); err != nil || !strings.Contains(string(out), "echo: v2") {
		t.Fatalf("a new version with the same tools: the call goes on: %s %v", out, err)
	}
	n := starts(t, log)
	b := open(t, cfg, cache)
	if starts(t, log) != n || !strings.Contains(b.Manifest().Description, "testserver 2.0.0") {
		t.Fatalf("the cache holds 2.0.0 now: %d starts, %q", starts(t, log)-n, b.Manifest().Description)
	}

	write("3.0.0\n+shiny")
	_, err := call(b, "echo", `{"text":"v3"}`, 10*time.Second)
	if !errors.Is(err, ErrChanged) || !strings.Contains(err.Error(), "2.0.0, now testserver 3.0.0") || !strings.Contains(err.Error(), "start bulkhead again") {
		t.Fatalf("new tools: want ErrChanged, got %v", err)
	}
	n = starts(t, log)
	if _, err := call(b.NewInstance(), "echo", `{"text":"v3"}`, 10*time.Second); !errors.Is(err, ErrChanged) || starts(t, log) != n {
		t.Fatalf("a stale app fails its calls without starting the server: %v, %d starts", err, starts(t, log)-n)
	}
	c := open(t, cfg, cache)
	if _, ok := c.Manifest().Function("shiny"); !ok || starts(t, log) != n {
		t.Fatalf("the next install uses the new list from the cache: %v, %d starts", c.Manifest().Functions, starts(t, log)-n)
	}
	if out, err := call(c, "shiny", `{}`, 10*time.Second); err != nil || !strings.Contains(string(out), "shiny") {
		t.Fatalf("shiny: %s %v", out, err)
	}
}

// A cache file that cannot be used, whatever is wrong with it, is a miss:
// the server is listed live, the app installs, and the file is rewritten.
func TestBrokenCacheFallsBack(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, log := counted(t, dir)
	cache := NewCache(filepath.Join(dir, "cache"))
	good := open(t, cfg, cache)
	file := filepath.Join(cache.Dir(), "tester.json")
	valid, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		if err := json.Unmarshal(valid, &m); err != nil {
			t.Fatal(err)
		}
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	tools := func(m map[string]any) []any { return m["listing"].(map[string]any)["tools"].([]any) }
	broken := map[string][]byte{
		"empty":         {},
		"garbage":       []byte("\x00\xffnot json at all"),
		"truncated":     valid[:len(valid)/2],
		"not an object": []byte(`[1,2,3]`),
		"trailing data": append(append([]byte{}, valid...), []byte(`{"more":1}`)...),
		"other format":  edit(func(m map[string]any) { m["format"] = 99 }),
		"unknown field": edit(func(m map[string]any) { m["surprise"] = true }),
		"wrong types":   edit(func(m map[string]any) { m["listing"].(map[string]any)["tools"] = "many" }),
		"null listing":  edit(func(m map[string]any) { m["listing"] = nil }),
		"repeated tool": edit(func(m map[string]any) { ts := tools(m); m["listing"].(map[string]any)["tools"] = append(ts, ts[0]) }),
		"nameless tool": edit(func(m map[string]any) { tools(m)[0].(map[string]any)["name"] = "" }),
		"echo missing": edit(func(m map[string]any) {
			var keep []any
			for _, x := range tools(m) {
				if x.(map[string]any)["name"] != "echo" {
					keep = append(keep, x)
				}
			}
			m["listing"].(map[string]any)["tools"] = keep
		}),
		"huge": append(append([]byte{}, valid[:len(valid)-2]...), []byte(`,"pad":"`+strings.Repeat("x", maxCacheFile)+`"}`)...),
	}
	for name, b := range broken {
		if err := os.WriteFile(file, b, 0o600); err != nil {
			t.Fatal(err)
		}
		before := starts(t, log)
		a, err := Open("tester", cfg, CatalogForTests(t), cache, nil)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		a.Close()
		if n := starts(t, log) - before; n != 1 {
			t.Errorf("%s: want the server listed once, %d starts", name, n)
		}
		if !reflect.DeepEqual(a.Manifest(), good.Manifest()) {
			t.Errorf("%s: manifest %+v", name, a.Manifest())
		}
		if got, _ := os.ReadFile(file); string(got) == string(b) {
			t.Errorf("%s: the file was not rewritten", name)
		}
	}
	// A directory where the file should be: a miss that cannot be rewritten.
	os.Remove(file)
	if err := os.Mkdir(file, 0o700); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("tester", cfg, CatalogForTests(t), cache, nil); err != nil {
		t.Fatalf("a directory in the way: %v", err)
	}
}

// A schema in the cache goes through the same vetting as a live one: a
// reference outside it makes the tool take any object.
func TestCachedSchemasAreVetted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg, log := counted(t, dir)
	cache := NewCache(filepath.Join(dir, "cache"))
	key := cacheKey(withDefaults(cfg))
	l := listing{Server: "evil", Version: "1", Tools: []listedTool{
		{Name: "echo", InputSchema: json.RawMessage(`{"type":"object","properties":{"x":{"$ref":"file:///etc/passwd"}}}`), Annotations: &listedHints{ReadOnly: true}},
		{Name: "list", InputSchema: json.RawMessage(`[1,2]`), OutputSchema: json.RawMessage(`"x"`)},
	}}
	if err := cache.save("tester", key, l); err != nil {
		t.Fatal(err)
	}
	a := open(t, cfg, cache)
	if starts(t, log) != 0 {
		t.Fatal("the cached listing must have been used")
	}
	if f, _ := a.Manifest().Function("echo"); string(f.Params) != string(permissiveObject) {
		t.Fatalf("params %s", f.Params)
	}
	if f, _ := a.Manifest().Function("list"); string(f.Params) != string(permissiveObject) || string(f.Result) != string(permissiveObject) {
		t.Fatalf("schemas that are not objects: %s %s", f.Params, f.Result)
	}
}

func withDefaults(cfg Server) Server {
	a, _ := prepare("tester", cfg, nil, nil)
	return a.cfg
}

// Refresh lists live, updates the cache and says what changed.
func TestRefresh(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	version := filepath.Join(dir, "version")
	if err := os.WriteFile(version, []byte("1.0.0"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, log := counted(t, dir)
	cache := NewCache(filepath.Join(dir, "cache"))
	ctx := context.Background()
	cat := CatalogForTests(t)

	r := Refresh(ctx, "tester", cfg, cat, cache, nil)
	if r.Err != nil || r.Cached || r.Changed || r.Server != "testserver" || r.Version != "1.0.0" || r.Tools < 10 || starts(t, log) != 1 {
		t.Fatalf("first refresh: %+v, %d starts", r, starts(t, log))
	}
	r = Refresh(ctx, "tester", cfg, cat, cache, nil)
	if r.Err != nil || !r.Cached || r.Changed || starts(t, log) != 2 {
		t.Fatalf("second refresh: %+v", r)
	}
	a := open(t, cfg, cache)
	if starts(t, log) != 2 {
		t.Fatal("refresh filled the cache")
	}
	if r := a.Refresh(ctx); r.Err != nil || r.Changed || r.Stale || starts(t, log) != 3 {
		t.Fatalf("app refresh, nothing new: %+v", r)
	}
	os.WriteFile(version, []byte("1.1.0"), 0o600)
	if r := a.Refresh(ctx); r.Err != nil || !r.Changed || r.Stale || r.Version != "1.1.0" {
		t.Fatalf("app refresh, a new version: %+v", r)
	}
	os.WriteFile(version, []byte("2.0.0\n+shiny"), 0o600)
	if r := a.Refresh(ctx); r.Err != nil || !r.Changed || !r.Stale {
		t.Fatalf("app refresh, a new tool: %+v", r)
	}
	n := starts(t, log)
	if b := open(t, cfg, cache); starts(t, log) != n || !strings.Contains(b.Manifest().Description, "2.0.0") {
		t.Fatalf("the refreshed list is cached: %q", b.Manifest().Description)
	}
	bad := cfg
	bad.Tools = map[string]ToolConfig{"nope": {}}
	if r := Refresh(ctx, "tester", bad, cat, cache, nil); r.Err == nil || !strings.Contains(r.Err.Error(), "no such tool") || r.Server != "testserver" {
		t.Fatalf("a config the server does not fit: %+v", r)
	}
	gone := Server{Command: filepath.Join(dir, "missing")}
	if r := Refresh(ctx, "gone", gone, cat, cache, nil); r.Err == nil || !strings.Contains(r.Err.Error(), "could not start") {
		t.Fatalf("a server that does not start: %+v", r)
	}
}
