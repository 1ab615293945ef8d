package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// openSession opens a session with the process serving cfg's data
// directory as a chat does, with cfg's folder and apps; configured says
// whether its apps are the config file's (else its own, as --apps
// makes them).
func openSession(t *testing.T, cfg config.Config, configured bool) *serve.Client {
	t.Helper()
	prof, models := serve.Session(cfg)
	prof.Configured = configured
	cli, err := serve.Connect(context.Background(), serve.ConnectOptions{DataDir: cfg.DataDir, Fingerprint: serve.Fingerprint(cfg, false), Keys: serve.Keys(cfg, false),
		File: cfg.File, Version: versionString(), Kind: "tui", Profile: &prof, Models: models})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// appTools is how a session's apps show name: "" when it is not there,
// "unlisted: WHY", "installed" for an app that is not an MCP server's,
// or its tools.
func appTools(t *testing.T, c *serve.Client, name string) string {
	t.Helper()
	list, err := c.Apps()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range list {
		if a.Manifest.Name != name {
			continue
		}
		if a.Unlisted != "" {
			return "unlisted: " + a.Unlisted
		}
		if !a.MCP {
			return "installed"
		}
		var tools []string
		for _, ti := range a.Tools {
			tools = append(tools, ti.Tool)
		}
		slices.Sort(tools)
		return strings.Join(tools, ",")
	}
	return ""
}

// TestMCPAddReachesAnOpenChat: with a chat open on the serving process,
// `bulkhead mcp add` of a new server puts it in that chat's apps at its
// next call — the chat took its apps from the config file, whose enable
// list mcp add changed — and what mcp add prints says so. A session
// whose apps are its own (--apps) keeps them.
func TestMCPAddReachesAnOpenChat(t *testing.T) {
	dir := t.TempDir()
	server := os.Getenv("BULKHEAD_MCP_TESTSERVER")
	if server == "" {
		server = filepath.Join(dir, "testserver")
		goBuild(t, server, "./apps/mcp/internal/testserver")
	}
	cfgPath, data := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "data")
	if err := os.WriteFile(cfgPath, []byte("enable: [clock]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	args := []string{"--config", cfgPath, "--data-dir", data, "--ollama-host", srv.Host(), "--model", "m"}
	// A command starts the serving process.
	if out, errOut, code := run(t, append([]string{"ask"}, append(args, "hello")...)...); code != 0 {
		t.Fatalf("ask: %d\n%s\n%s", code, out, errOut)
	}
	src, err := config.Open(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := src.Load()
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir, cfg.Ollama.Host, cfg.Hub.Model, cfg.Spokes.Model = data, srv.Host(), "m", "m"
	if p, _ := serve.Session(cfg); !p.Configured {
		t.Fatalf("a session of apps from the config file is not Configured: %+v (from %q)", p, cfg.From["enable"])
	}
	chat, own := openSession(t, cfg, true), openSession(t, cfg, false)
	if got := appTools(t, chat, "tst"); got != "" {
		t.Fatalf("before mcp add, tst is in the chat's apps: %q", got)
	}

	out, errOut, code := run(t, append([]string{"mcp", "add"}, append(args[:4], "tst", "--", server)...)...)
	if code != 0 {
		t.Fatalf("mcp add: %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "runs tst now") {
		t.Errorf("mcp add does not say the serving process runs tst:\n%s", out)
	}
	if got := appTools(t, chat, "tst"); !strings.Contains(got, "echo") {
		t.Errorf("the open chat's tst after mcp add: %q, want it installed (echo among its tools)\nmcp add said:\n%s", got, out)
	}
	if got := appTools(t, chat, "clock"); got == "" {
		t.Errorf("the open chat lost clock")
	}
	if got := appTools(t, own, "tst"); got != "" {
		t.Errorf("a session with its own apps got tst: %q", got)
	}
	// Gone before the serving process is stopped.
	chat.Close()
	own.Close()
}
