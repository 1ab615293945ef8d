package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// bulkhead mcp list says, from the cached listing of each server's
// configuration (no server started), what it offers beyond its tools'
// functions and what is not supported: the tool that requires tasks,
// its resources (read by its own spoke), its prompts (listed, never
// run); a server not listed for its configuration is named as such.
// mcp add says the same once it has listed the server.
func TestMCPListNamesWhatIsNotSupported(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	cfg, data := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "data")
	os.WriteFile(cfg, []byte("enable: [builtin, spec]\nmcp:\n  spec:\n    command: "+server+"\n    args: [-spec]\n  unlisted:\n    command: "+server+"\n"), 0o600)
	out, errOut, code := run(t, "mcp", "add", "--config", cfg, "--data-dir", data, "spec")
	for _, want := range []string{
		"not supported: tool research: requires tasks: not supported (not offered)",
		"resources: its own spoke lists and reads them (read_resource, list_resources)",
		"prompts (2, listed, never run): greet, summarize",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("mcp add lacks %q: exit %d\n%s%s", want, code, out, errOut)
		}
	}
	out, errOut, code = run(t, "mcp", "list", "--config", cfg, "--data-dir", data)
	for _, want := range []string{
		"What each offers, as last listed:",
		"  spec: testserver 1.0.0, ",
		"    not supported: tool research: requires tasks: not supported (not offered)",
		"    resources: its own spoke lists and reads them (read_resource, list_resources)",
		"    prompts (2, listed, never run): greet, summarize",
		"  unlisted: not listed for its current configuration: `bulkhead mcp add unlisted` lists it",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("mcp list lacks %q: exit %d\n%s%s", want, code, out, errOut)
		}
	}
	if strings.Contains(out, "unlisted: testserver") {
		t.Errorf("a server never listed must not be summarised:\n%s", out)
	}
}
