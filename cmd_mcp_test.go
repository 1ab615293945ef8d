package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// bulkhead mcp add writes the server into the config (enabled), starts
// it once through npx in its sandbox, lists its tools with their
// effects and caches them; mcp list shows it; mcp rm takes it out.
// npx here installs a package packed offline; the registry endpoint npm
// names is not asked (no terminal) and so not allowed: nothing needs it.
func TestMCPAddListRemove(t *testing.T) {
	for _, p := range []string{"npm", "npx", "node"} {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("BULKHEAD_INTEGRATION") == "1" {
				t.Fatalf("%s is needed: %v", p, err)
			}
			t.Skipf("no %s here", p)
		}
	}
	dir := t.TempDir()
	pack := exec.Command("npm", "pack", "--pack-destination", dir, "--loglevel=error")
	pack.Dir = filepath.Join("apps", "mcp", "testdata", "runner-app")
	if out, err := pack.CombinedOutput(); err != nil {
		t.Fatalf("npm pack: %v %s", err, out)
	}
	tgz := filepath.Join(dir, "bulkhead-runner-app-1.0.0.tgz")
	cfg, data := filepath.Join(t.TempDir(), "config.yaml"), t.TempDir()
	if err := os.WriteFile(cfg, []byte("# mine\nenable: [calc]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := run(t, "mcp", "add", "--config", cfg, "--data-dir", data, "--read", dir, "runner", "--",
		"npx", "-y", "--offline", "--package="+tgz, "bulkhead-runner-app")
	if code != 0 || !strings.Contains(out, "runner lists 2 tools") || !strings.Contains(out, "whoami") || !strings.Contains(out, "added mcp.runner") {
		t.Fatalf("mcp add: exit %d\n%s\n%s", code, out, errOut)
	}
	b, _ := os.ReadFile(cfg)
	if !strings.Contains(string(b), "# mine") || !strings.Contains(string(b), "enable: [calc, runner]") {
		t.Errorf("the config:\n%s", b)
	}
	if _, err := os.Stat(filepath.Join(data, "mcp-cache", "runner.json")); err != nil {
		t.Errorf("its tool list is not cached: %v", err)
	}
	out, _, code = run(t, "mcp", "list", "--config", cfg, "--data-dir", data)
	if code != 0 || !strings.Contains(out, "runner") || !strings.Contains(out, "yes") {
		t.Errorf("mcp list: %d\n%s", code, out)
	}
	out, _, code = run(t, "mcp", "rm", "--config", cfg, "runner")
	b, _ = os.ReadFile(cfg)
	if code != 0 || strings.Contains(string(b), "runner") {
		t.Errorf("mcp rm: %d %s\n%s", code, out, b)
	}
	if _, errOut, code := run(t, "mcp", "rm", "--config", cfg, "runner"); code != 2 || !strings.Contains(errOut, "no MCP server") {
		t.Errorf("removing what is not there: %d %s", code, errOut)
	}
}
