package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// doctor starts every enabled MCP server, lists its tools and refreshes
// the cached list that `ask` and the TUI start from.
func TestDoctorRefreshesTheMCPCache(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	// The server's sandbox lets it read the version file only where its
	// config grants (read:), not beside its executable, which shares a
	// folder with the data directory here.
	versionDir := t.TempDir()
	version := filepath.Join(versionDir, "version")
	os.WriteFile(version, []byte("1.0.0"), 0o600)
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("enable: [builtin, mcp]\nmcp:\n  tester:\n    command: "+server+"\n    args: [-version-file, "+version+"]\n    read: ["+versionDir+"]\n"), 0o600)
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "m")
	data := filepath.Join(dir, "data")
	doctor := func() string {
		t.Helper()
		out, errOut, code := run(t, "doctor", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data)
		if code != 0 {
			t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
		}
		return out
	}
	if out := doctor(); !strings.Contains(out, "✓ MCP server tester: testserver 1.0.0, ") || !strings.Contains(out, "tools; tool list cached") {
		t.Fatalf("first doctor:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(data, "mcp-cache", "tester.json")); err != nil {
		t.Fatal(err)
	}
	if out := doctor(); !strings.Contains(out, "cached tool list up to date") {
		t.Fatalf("second doctor:\n%s", out)
	}
	os.WriteFile(version, []byte("1.1.0"), 0o600)
	if out := doctor(); !strings.Contains(out, "testserver 1.1.0") || !strings.Contains(out, "tool list changed since it was cached; cache refreshed") {
		t.Fatalf("after an update:\n%s", out)
	}
	b, _ := os.ReadFile(filepath.Join(data, "mcp-cache", "tester.json"))
	if !strings.Contains(string(b), `"version":"1.1.0"`) {
		t.Fatalf("cache file: %s", b)
	}
}

// doctor names a server that is configured and not enabled — the
// README's example once left fs so — saying how to enable it; it is not a
// failure.
func TestDoctorNamesServersNotEnabled(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	os.WriteFile(cfg, []byte("enable: [builtin]\nmcp:\n  fs:\n    command: npx\n    args: [-y, \"@modelcontextprotocol/server-filesystem\", ~/notes]\n"), 0o600)
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "m")
	out, errOut, code := run(t, "doctor", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", filepath.Join(dir, "data"))
	if code != 0 || !strings.Contains(out, "• MCP server fs: configured, but not enabled") || !strings.Contains(out, "add fs to enable in "+cfg+" (enable: [builtin, fs])") {
		t.Fatalf("doctor: exit %d\n%s%s", code, out, errOut)
	}
}
