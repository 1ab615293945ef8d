package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// `bulkhead mcp add` of a server whose listing fails does not add it:
// the config file is as it was, and the message says so, naming where
// its stderr is once; --force keeps it in the config, enabled, saying
// so.
func TestAFailingMCPAddAddsNothing(t *testing.T) {
	dir := t.TempDir()
	cfgPath, data := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "data")
	const was = "# mine\nenable: [calc]\n"
	if err := os.WriteFile(cfgPath, []byte(was), 0o600); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := run(t, "mcp", "add", "--config", cfgPath, "--data-dir", data, "bad2", "--", "/bin/sh", "-c", "echo boom >&2; exit 3")
	if code != 1 {
		t.Fatalf("mcp add of a failing server: exit %d, want 1\n%s", code, errOut)
	}
	if b, _ := os.ReadFile(cfgPath); string(b) != was {
		t.Errorf("the config after a failed mcp add:\n%s\nwant it as it was:\n%s", b, was)
	}
	if !strings.Contains(errOut, "mcp.bad2 was not added to "+cfgPath) || !strings.Contains(errOut, "--force") {
		t.Errorf("mcp add does not say bad2 was not added, nor name --force:\n%s", errOut)
	}
	if n := strings.Count(errOut, "bulkhead.log"); n != 1 {
		t.Errorf("where its stderr is is said %d times, want once:\n%s", n, errOut)
	}

	_, errOut, code = run(t, "mcp", "add", "--config", cfgPath, "--data-dir", data, "--force", "bad2", "--", "/bin/sh", "-c", "echo boom >&2; exit 3")
	b, _ := os.ReadFile(cfgPath)
	if code != 1 || !strings.Contains(string(b), "bad2") || !strings.Contains(errOut, "mcp.bad2 stays in "+cfgPath+", enabled but not listed") {
		t.Errorf("mcp add --force of a failing server: exit %d\n%s\nthe config:\n%s", code, errOut, b)
	}
	if n := strings.Count(errOut, "bulkhead.log"); n != 1 {
		t.Errorf("--force: where its stderr is is said %d times, want once:\n%s", n, errOut)
	}
}
