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

// Adding a server the file has already changes only what `mcp add`
// writes, and Preview says what beforehand: a version pinned is a change
// of args; the tools overrides, the model, the comments — and a folder
// the file writes ~/notes, which is the absolute folder `mcp add` gives
// — stay as the user wrote them.
func TestAddAgainChangesOnlyWhatItWrites(t *testing.T) {
	home := os.Getenv("HOME")
	notes := filepath.Join(home, "notes")
	path := filepath.Join(t.TempDir(), "config.yaml")
	orig := `enable: [builtin, fs]
mcp:
  # my files
  fs:
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", ~/notes]   # the server
    folders: [~/notes]   # mine
    model: qwen3:4b
    tools:
      write_file: {effect: irreversible}   # keep asking
`
	if err := os.WriteFile(path, []byte(orig), 0o600); err != nil {
		t.Fatal(err)
	}
	s := mcpconfig.Server{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-filesystem@2025.8.21", notes}, Folders: []string{notes}, Net: []string{"registry.npmjs.org:443"}}
	p, err := mcpconfig.Preview(path, "fs", s)
	if err != nil {
		t.Fatal(err)
	}
	want := []mcpconfig.Change{
		{Key: "args", Old: "[-y, \"@modelcontextprotocol/server-filesystem\", ~/notes]", New: "[-y, '@modelcontextprotocol/server-filesystem@2025.8.21', " + notes + "]"},
		{Key: "net", New: "['registry.npmjs.org:443']"},
	}
	if !p.Exists || p.Enable || !slices.Equal(p.Changes, want) || !slices.Equal(p.Kept, []string{"model", "tools"}) {
		t.Fatalf("preview: %+v\nwant changes %+v", p, want)
	}
	if err := mcpconfig.Add(path, "fs", s); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	for _, keep := range []string{"# my files", "folders: [~/notes] # mine", "model: qwen3:4b", "write_file: {effect: irreversible} # keep asking", "# the server", "server-filesystem@2025.8.21", "net: ['registry.npmjs.org:443']", "enable: [builtin, fs]"} {
		if !strings.Contains(string(b), keep) {
			t.Errorf("the file lacks %q:\n%s", keep, b)
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
	if fs := c.MCP["fs"]; fs.Model != "qwen3:4b" || fs.Tools["write_file"].Effect != "irreversible" || !slices.Equal(fs.Folders, []string{notes}) {
		t.Errorf("loaded %+v", fs)
	}
	// Added again as it is now: nothing to change.
	if p, err := mcpconfig.Preview(path, "fs", s); err != nil || !p.Exists || len(p.Changes) != 0 || p.Enable {
		t.Errorf("the same again: %+v %v", p, err)
	}
	// Without a flag it had (--folder), the key goes; a url gives way to
	// a command.
	os.WriteFile(path, []byte("mcp:\n  fs:\n    url: https://example.com/mcp\n    model: m\n"), 0o600)
	s = mcpconfig.Server{Command: "fs-server"}
	if p, err := mcpconfig.Preview(path, "fs", s); err != nil || !p.Enable || !slices.Equal(p.Changes, []mcpconfig.Change{{Key: "command", New: "fs-server"}, {Key: "url", Old: "https://example.com/mcp"}}) {
		t.Errorf("a url replaced: %+v %v", p, err)
	}
	if err := mcpconfig.Add(path, "fs", s); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); strings.Contains(string(b), "url") || !strings.Contains(string(b), "command: fs-server") || !strings.Contains(string(b), "model: m") {
		t.Errorf("a url replaced:\n%s", b)
	}
}

// Enable adds a configured server to enable, once; a file that enables
// it (or the mcp pack) is not written.
func TestEnable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(path, []byte("# mine\nmcp:\n  fs: {command: fs-server}\n"), 0o600)
	for range 2 {
		if err := mcpconfig.Enable(path, "fs"); err != nil {
			t.Fatal(err)
		}
	}
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), "enable: [builtin, fs]") || !strings.Contains(string(b), "# mine") {
		t.Fatalf("%s", b)
	}
	os.WriteFile(path, []byte("enable: [mcp]   # all of them\n"), 0o600)
	st, _ := os.Stat(path)
	if err := mcpconfig.Enable(path, "fs"); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "enable: [mcp]   # all of them\n" {
		t.Fatalf("rewritten: %s", b)
	}
	if st2, _ := os.Stat(path); !st2.ModTime().Equal(st.ModTime()) {
		t.Error("written, with nothing to change")
	}
}
