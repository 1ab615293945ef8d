package testenv_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/adrg/xdg"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
)

// Under a hostile user setup — a config file with the README's MCP
// example (its fs server, a pinned Ollama host), OLLAMA_HOST and
// BULKHEAD_* variables of the user's — a hermetic test binary loads
// bulkhead's defaults: nothing of the user's is read. Without Setup, the
// same load reads it all, so the test can fail.
func TestHermeticUnderAHostileUser(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "bulkhead", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o700); err != nil {
		t.Fatal(err)
	}
	hostile := "enable: [builtin, fs]\nollama:\n  host: http://10.9.9.9:11434\nmcp:\n  fs:\n    command: npx\n    args: [-y, \"@modelcontextprotocol/server-filesystem\", ~/notes]\n    folders: [~/notes]\n"
	if err := os.WriteFile(conf, []byte(hostile), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv("OLLAMA_HOST", "http://10.8.8.8:11434")
	t.Setenv("BULKHEAD_HUB_MODEL", "user-model")
	xdg.Reload() // as a process started with them reads them
	defer xdg.Reload()
	load := func() config.Config {
		t.Helper()
		src, err := config.Open("")
		if err != nil {
			t.Fatal(err)
		}
		c, err := src.Load()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	if c := load(); c.File != conf {
		t.Fatalf("without Setup, the user's config is read (or the test proves nothing): %+v", c.File)
	}
	_, cleanup, err := testenv.Setup()
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	c := load()
	if c.File != "" || len(c.MCP) != 0 || !slices.Equal(c.Enable, []string{"builtin"}) || c.Ollama.Host != "http://127.0.0.1:11434" || c.Hub.Model != config.DefaultModel {
		t.Errorf("a hermetic load read the user's: file %q, mcp %v, enable %v, host %q, model %q", c.File, c.MCP, c.Enable, c.Ollama.Host, c.Hub.Model)
	}
	home, _ := os.UserHomeDir()
	if home == "" || filepath.Dir(home) != filepath.Dir(os.Getenv("XDG_CONFIG_HOME")) {
		t.Errorf("HOME %q is not the test's own", home)
	}
}
