package mcpconfig_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/mcpconfig"
)

func TestMain(m *testing.M) { testenv.Main(m, false) }

// Adding a server writes it and enables it, keeping the user's comments
// and settings; the file still loads; removing it takes both out.
func TestAddAndRemoveKeepTheFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "config.yaml")
	orig := "# my settings\nenable: [builtin]   # the apps I use\nhub:\n  model: qwen3:1.7b # small\n"
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mcpconfig.Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem", dir}, Folders: []string{dir}, Net: []string{"registry.npmjs.org:443"}}
	if err := mcpconfig.Add(path, "fs", s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, want := range []string{"# my settings", "# the apps I use", "# small", "enable: [builtin, fs]", "command: npx", "registry.npmjs.org:443"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the file lacks %q:\n%s", want, b)
		}
	}
	src, err := config.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := src.Load()
	if err != nil {
		t.Fatalf("the file no longer loads: %v\n%s", err, b)
	}
	if !slices.Equal(c.Enable, []string{"builtin", "fs"}) || c.MCP["fs"].Command != "npx" || !slices.Equal(c.MCP["fs"].Folders, []string{dir}) {
		t.Errorf("loaded %+v %+v", c.Enable, c.MCP["fs"])
	}
	if removed, err := mcpconfig.Remove(path, "fs"); !removed || err != nil {
		t.Fatal(removed, err)
	}
	b, _ = os.ReadFile(path)
	if strings.Contains(string(b), "fs") || !strings.Contains(string(b), "# my settings") {
		t.Errorf("after remove:\n%s", b)
	}
	// a file that is not there is made, enabling the built-in apps too
	fresh := filepath.Join(dir, "new", "config.yaml")
	if err := mcpconfig.Add(fresh, "fs", s); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(fresh)
	if !strings.Contains(string(b), "enable: [builtin, fs]") {
		t.Errorf("a new file:\n%s", b)
	}
}
