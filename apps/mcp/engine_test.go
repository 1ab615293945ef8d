package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// engine.Install installs a configured server when enable names it or
// holds the pack "mcp", over the catalog extended by its entries.
func TestInstallMCPServers(t *testing.T) {
	servers := map[string]config.MCPServer{
		"alpha": {Command: mcp.TestServer, Tools: map[string]config.MCPTool{"echo": {Functionality: "test.shout"}, "write_note": {Effect: "irreversible"}},
			Catalog: []config.MCPCatalogEntry{{Name: "test.shout", Description: "Shout.", Effect: "read",
				Request:  map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
				Response: map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}}}}},
		"beta": {Command: mcp.TestServer},
	}
	names := func(enable ...string) string {
		reg, err := engine.Install(config.Config{Enable: enable, Workspace: t.TempDir(), MCP: servers}, nil, nil)
		if err != nil {
			t.Fatalf("%v: %v", enable, err)
		}
		return strings.Join(reg.Names(), ",")
	}
	if got := names("calc"); got != "calc" {
		t.Fatalf("configured but not enabled: %s", got)
	}
	if got := names("calc", "alpha"); got != "alpha,calc" {
		t.Fatalf("enabled by name: %s", got)
	}
	if got := names("mcp"); got != "alpha,beta" {
		t.Fatalf("the mcp pack: %s", got)
	}
	reg, _ := engine.Install(config.Config{Enable: []string{"alpha"}, Workspace: t.TempDir(), MCP: servers}, nil, nil)
	if f, ok := reg.Catalog().Get("test.shout"); !ok || f.Description != "Shout." || reg.Providers("test.shout")[0] != "alpha" {
		t.Fatalf("catalog entry: %+v %v", f, reg.Providers("test.shout"))
	}
	for name, s := range map[string]config.MCPServer{
		"files": {Command: mcp.TestServer},
		"gamma": {Command: "/nonexistent/server"},
		"delta": {Command: mcp.TestServer, Tools: map[string]config.MCPTool{"write_note": {Effect: "read"}}},
	} {
		_, err := engine.Install(config.Config{Enable: []string{name}, Workspace: t.TempDir(), MCP: map[string]config.MCPServer{name: s}}, nil, nil)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want an error naming it, got %v", name, err)
		}
	}
}

// With a warm cache, engine.Install starts no MCP server: each was listed
// once, by the first Install, and the apps are the same.
func TestInstallFromTheCache(t *testing.T) {
	dir, logs := t.TempDir(), t.TempDir() // the data directory; the servers' own folder
	log := filepath.Join(logs, "starts")
	servers := map[string]config.MCPServer{
		"alpha": {Command: mcp.TestServer, Args: []string{"-starts", log}, Folders: []string{logs}, Tools: map[string]config.MCPTool{"echo": {Functionality: "test.shout"}},
			Catalog: []config.MCPCatalogEntry{{Name: "test.shout", Description: "Shout.", Effect: "read",
				Request:  map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
				Response: map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}}}}},
		"beta": {Command: mcp.TestServer, Args: []string{"-starts", log}, Folders: []string{logs}},
	}
	cache := engine.MCPCache(dir)
	// Each start logs a line in its own layer of logs (the servers write
	// their folder through layers kept in the data directory).
	count := func() int {
		ls, _ := filepath.Glob(filepath.Join(dir, "changes", "*", "upper", "starts"))
		n := 0
		for _, l := range ls {
			b, _ := os.ReadFile(l)
			n += strings.Count(string(b), "\n")
		}
		return n
	}
	first, err := engine.Install(config.Config{Enable: []string{"mcp"}, Workspace: dir, MCP: servers, DataDir: dir}, cache, nil)
	if err != nil || count() != 2 {
		t.Fatalf("cold: %v, %d starts", err, count())
	}
	second, err := engine.Install(config.Config{Enable: []string{"mcp"}, Workspace: dir, MCP: servers, DataDir: dir}, cache, nil)
	if err != nil || count() != 2 {
		t.Fatalf("warm: %v, %d starts", err, count())
	}
	for _, name := range []string{"alpha", "beta"} {
		a, _ := first.App(name)
		b, _ := second.App(name)
		if !reflect.DeepEqual(a.Manifest(), b.Manifest()) {
			t.Errorf("%s: the cached app differs", name)
		}
	}
	if second.Providers("test.shout")[0] != "alpha" {
		t.Fatal("the catalog entry is provided from the cached app")
	}
	// doctor's refresh lists every enabled server live and keeps the cache.
	rs := engine.RefreshMCP(context.Background(), config.Config{Enable: []string{"alpha", "beta"}, MCP: servers, DataDir: dir})
	if len(rs) != 2 || rs[0].App != "alpha" || rs[1].App != "beta" || count() != 4 {
		t.Fatalf("refresh: %+v, %d starts", rs, count())
	}
	for _, r := range rs {
		if r.Err != nil || !r.Cached || r.Changed || r.Version != "1.0.0" {
			t.Errorf("refresh %s: %+v", r.App, r)
		}
	}
	if _, err := engine.Install(config.Config{Enable: []string{"mcp"}, Workspace: dir, MCP: servers}, cache, nil); err != nil || count() != 4 {
		t.Fatalf("after the refresh: %v, %d starts", err, count())
	}
}

// A change of a server's folders in the config file stops the process
// that was started with the old ones, before the next call: the next
// call's process writes the new folder, and not the old one. A changed
// command makes the app's calls fail until bulkhead starts again.
func TestAConfigChangeEndsTheOldGrants(t *testing.T) {
	t.Parallel()
	oldDir, newDir := t.TempDir(), t.TempDir()
	servers := map[string]config.MCPServer{"prober": {Command: mcp.TestServer, Folders: []string{oldDir}}}
	// a data directory: the server writes its folders through layers kept there
	cfg := config.Config{Enable: []string{"prober"}, Workspace: t.TempDir(), MCP: servers, DataDir: t.TempDir()}
	reg, err := engine.Install(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := reg.App("prober")
	in := a.(*mcp.App).NewInstance()
	t.Cleanup(func() { in.(interface{ Close() error }).Close(); a.(*mcp.App).Close() })
	write := func(dir string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		out, err := in.Call(ctx, apps.Call{Function: "probe", Args: json.RawMessage(`{"write":"` + filepath.Join(dir, "x.txt") + `"}`)})
		if err != nil {
			t.Fatal(err)
		}
		return string(out)
	}
	if out := write(oldDir); !strings.Contains(out, "wrote") {
		t.Fatalf("the configured folder: %s", out)
	}
	cfg.MCP = map[string]config.MCPServer{"prober": {Command: mcp.TestServer, Folders: []string{newDir}}}
	rs := engine.Reconfigure(reg, cfg)
	if len(rs) != 1 || rs[0].App != "prober" || rs[0].Stopped != 1 || rs[0].Err != nil {
		t.Fatalf("reconfigured: %+v", rs)
	}
	os.Remove(filepath.Join(oldDir, "x.txt"))
	if out := write(oldDir); !strings.Contains(out, "write failed") {
		t.Fatalf("the old folder after the change: %s", out)
	}
	if out := write(newDir); !strings.Contains(out, "wrote") {
		t.Fatalf("the new folder after the change: %s", out)
	}
	if rs := engine.Reconfigure(reg, cfg); len(rs) != 0 {
		t.Fatalf("an unchanged config stops nothing: %+v", rs)
	}
	cfg.MCP = map[string]config.MCPServer{"prober": {Command: mcp.TestServer, Args: []string{"--other"}, Folders: []string{newDir}}}
	if rs := engine.Reconfigure(reg, cfg); len(rs) != 1 || rs[0].Err == nil {
		t.Fatalf("a changed command: %+v", rs)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := in.Call(ctx, apps.Call{Function: "probe", Args: json.RawMessage(`{}`)}); err == nil || !strings.Contains(err.Error(), "configuration changed") {
		t.Fatalf("a changed command's app must not run the old command: %v", err)
	}
}

// A server whose folders hold bulkhead's config folder is refused, as
// one whose folders hold its data directory: an app that could write
// the config could grant itself anything the next time bulkhead starts.
func TestGrantsNeverReachTheConfigFolder(t *testing.T) {
	t.Parallel()
	conf := config.DefaultConfigDir()
	for _, folder := range []string{filepath.Dir(conf), conf, filepath.Join(conf, "sub")} {
		servers := map[string]config.MCPServer{"wide": {Command: mcp.TestServer, Folders: []string{folder}}}
		_, err := engine.Install(config.Config{Enable: []string{"wide"}, Workspace: t.TempDir(), DataDir: t.TempDir(), MCP: servers}, nil, nil)
		if err == nil || !strings.Contains(err.Error(), "bulkhead's") {
			t.Errorf("folders: [%s] must be refused: %v", folder, err)
		}
	}
}

// A server that cannot be listed (not cached, and its start fails — an
// npx server with no network to download from, say) does not stop
// bulkhead from starting: the other apps install, and it is named with
// how to list it.
func TestAnUnlistableServerDoesNotStopTheStart(t *testing.T) {
	t.Parallel()
	servers := map[string]config.MCPServer{"good": {Command: mcp.TestServer}, "broken": {Command: "/bin/false"}}
	cfg := config.Config{Enable: []string{"calc", "good", "broken"}, Workspace: t.TempDir(), MCP: servers}
	reg, unlisted, err := engine.InstallAll(cfg, mcp.NewCache(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(reg.Names(), ","); got != "calc,good" {
		t.Errorf("installed %s", got)
	}
	if len(unlisted) != 1 || unlisted[0].App != "broken" || !strings.Contains(unlisted[0].Fix, "bulkhead mcp add broken") || unlisted[0].Why == "" {
		t.Errorf("unlisted: %+v", unlisted)
	}
	if _, err := engine.Install(cfg, nil, nil); err == nil {
		t.Error("Install, which takes every app or none, must fail")
	}
}

// A config file that does not load cannot confirm the network it
// grants: the serving process (engine.LoadFailed) stops every process
// of an app that has network, before its next call, and the next runs
// without network and asks for none — in a profile already running and
// in one a session starts while the file is broken. Once a config
// applies again (engine.Apply), even the one the process had, the
// network is as it says: the next process asks, and reaches it.
func TestAConfigThatDoesNotLoadStopsTheNetwork(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	dest := echoListener(t)
	cfg := config.Config{DataDir: t.TempDir(), Workspace: t.TempDir(), Enable: []string{"netter"},
		Ollama: config.Ollama{Host: "http://127.0.0.1:9"}, Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4},
		MCP: map[string]config.MCPServer{"netter": {Command: mcp.TestServer, Net: []string{dest}}}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	instance := func(reg *apps.Registry) apps.App {
		t.Helper()
		a, ok := reg.App("netter")
		if !ok {
			t.Fatal("netter is not installed")
		}
		in := a.(*mcp.App).NewInstance()
		t.Cleanup(func() { in.(interface{ Close() error }).Close() })
		return in
	}
	// netter is listed in the background: the profile that has it is
	// the one a session gets once its listing ends.
	if err := eng.WaitListed(context.Background()); err != nil {
		t.Fatal(err)
	}
	own, err := eng.Profile(engine.ProfileSpec{})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Release(own)
	yes := &asker{allow: true}
	ctx := apps.WithNetwork(context.Background(), yes)
	in := instance(own.Apps)
	if out := reach(t, ctx, in, map[string]string{"tcp": dest}); !strings.Contains(out, "tcp ok") || len(yes.calls()) != 1 {
		t.Fatalf("before: the allowed endpoint (asked %v): %s", yes.calls(), out)
	}

	broken := errors.New("config.yaml: yaml: line 3: mapping values are not allowed in this context")
	rs := eng.LoadFailed(broken)
	if len(rs) != 1 || rs[0].App != "netter" || rs[0].Stopped != 1 || !errors.Is(rs[0].Err, broken) {
		t.Fatalf("a config that does not load must stop the process that has network: %+v", rs)
	}
	if out := reach(t, ctx, in, map[string]string{"tcp": dest}); !strings.Contains(out, "tcp failed") {
		t.Fatalf("while the file does not load, the next process reached the endpoint: %s", out)
	}
	p, err := eng.Profile(engine.ProfileSpec{Workspace: t.TempDir(), Enable: []string{"netter"}})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Release(p)
	if out := reach(t, ctx, instance(p.Apps), map[string]string{"tcp": dest}); !strings.Contains(out, "tcp failed") {
		t.Fatalf("a session started while the file does not load reached the endpoint: %s", out)
	}
	if got := yes.calls(); len(got) != 1 {
		t.Fatalf("no network is asked for while the file does not load: %v", got)
	}

	if err := eng.Apply(cfg); err != nil { // the file loads again, as it was
		t.Fatal(err)
	}
	if out := reach(t, ctx, in, map[string]string{"tcp": dest}); !strings.Contains(out, "tcp ok") {
		t.Fatalf("once the file loads, its network: %s", out)
	}
	if got := yes.calls(); len(got) != 2 {
		t.Fatalf("the process after the file loads must ask again: %v", got)
	}
}

// No folders or read grant reaches another app's runner cache, nor
// bulkhead's cache folder that holds them all, wherever cache_dir lies
// (here outside the home, where no home tree guards it): an app that
// could write another's cache could run code as it. A folder beside the
// cache is granted.
func TestGrantsNeverReachTheAppsCaches(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	cfg := config.Config{CacheDir: cache}
	other := filepath.Join(cfg.AppsCache(), "other")
	if err := os.MkdirAll(other, 0o700); err != nil {
		t.Fatal(err)
	}
	install := func(s config.MCPServer) error {
		_, err := engine.Install(config.Config{Enable: []string{"wide"}, Workspace: t.TempDir(), DataDir: t.TempDir(), CacheDir: cache,
			MCP: map[string]config.MCPServer{"wide": s}}, nil, nil)
		return err
	}
	for _, folder := range []string{other, filepath.Join(other, "node_modules"), cfg.AppsCache(), cache, filepath.Dir(cache)} {
		if err := install(config.MCPServer{Command: mcp.TestServer, Folders: []string{folder}}); err == nil || !strings.Contains(err.Error(), "bulkhead's") {
			t.Errorf("folders: [%s] must be refused: %v", folder, err)
		}
		if err := install(config.MCPServer{Command: mcp.TestServer, Read: []string{folder}}); err == nil || !strings.Contains(err.Error(), "bulkhead's") {
			t.Errorf("read: [%s] must be refused: %v", folder, err)
		}
	}
	if err := install(config.MCPServer{Command: mcp.TestServer, Folders: []string{t.TempDir()}}); err != nil {
		t.Errorf("a folder beside the cache: %v", err)
	}
}
