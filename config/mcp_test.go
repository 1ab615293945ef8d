package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/config"
)

const mcpFile = `
enable: [builtin, fs]
mcp:
  fs:
    command: npx
    args: [-y, "@modelcontextprotocol/server-filesystem", /tmp]
    env: {API_TOKEN: abc, MixedCase: x}
    dir: ~/notes
    model: qwen3:4b
    tools:
      read_text_file: {functionality: fs.read}
      writeFile: {effect: irreversible, key: [path]}
    catalog:
      - name: fs.read
        description: Read a text file in my notes.
        effect: read
        request: {type: object, properties: {path: {type: string}}, required: [path], additionalProperties: false}
        response: '{"type":"object","properties":{"fileContent":{"type":"string"}}}'
  remote:
    url: http://127.0.0.1:8080/mcp
    host: 127.0.0.1:11435
`

func TestMCPServers(t *testing.T) {
	c, err := load(t, writeFile(t, mcpFile))
	if err != nil {
		t.Fatal(err)
	}
	fs, ok := c.MCP["fs"]
	if !ok || fs.Command != "npx" || len(fs.Args) != 3 || fs.Args[1] != "@modelcontextprotocol/server-filesystem" || fs.Model != "qwen3:4b" {
		t.Fatalf("fs: %+v", fs)
	}
	if fs.Env["API_TOKEN"] != "abc" || fs.Env["MixedCase"] != "x" {
		t.Fatalf("environment names must keep their case: %v", fs.Env)
	}
	home, _ := os.UserHomeDir()
	if fs.Dir != filepath.Join(home, "notes") {
		t.Fatalf("dir %q", fs.Dir)
	}
	if fs.Tools["read_text_file"].Functionality != "fs.read" || fs.Tools["writeFile"].Effect != "irreversible" || len(fs.Tools["writeFile"].Key) != 1 || fs.Tools["writeFile"].Key[0] != "path" {
		t.Fatalf("tools (names keep their case): %+v", fs.Tools)
	}
	if len(fs.Catalog) != 1 || fs.Catalog[0].Request["additionalProperties"] != false || fs.Catalog[0].Response["properties"].(map[string]any)["fileContent"] == nil {
		t.Fatalf("schemas must keep their case: %+v", fs.Catalog)
	}
	r := c.MCP["remote"]
	if r.URL != "http://127.0.0.1:8080/mcp" || r.Command != "" || r.Host != "http://127.0.0.1:11435" {
		t.Fatalf("remote: %+v", r)
	}
	if len(c.Enable) != 2 || c.Enable[1] != "fs" {
		t.Fatalf("enable %v", c.Enable)
	}
}

func TestBadMCPServers(t *testing.T) {
	cases := []struct{ name, body, key string }{
		{"both", "mcp:\n  fs:\n    command: x\n    url: http://h/mcp\n", "mcp.fs"},
		{"neither", "mcp:\n  fs:\n    args: [a]\n", "mcp.fs"},
		{"name", "mcp:\n  My-Server:\n    command: x\n", "mcp.My-Server"},
		{"reserved name", "mcp:\n  hub:\n    command: x\n", "mcp.hub"},
		{"unknown key", "mcp:\n  fs:\n    command: x\n    cmd: y\n", "mcp.fs.cmd"},
		{"url scheme", "mcp:\n  fs:\n    url: ftp://h/x\n", "mcp.fs.url"},
		{"url with args", "mcp:\n  fs:\n    url: http://h/x\n    args: [a]\n", "mcp.fs.args"},
		{"args", "mcp:\n  fs:\n    command: x\n    args: just-one\n", "mcp.fs.args"},
		{"env item", "mcp:\n  fs:\n    command: x\n    env: [NOEQUALS]\n", "mcp.fs.env[0]"},
		{"env name", "mcp:\n  fs:\n    command: x\n    env: {'BAD NAME': 1}\n", "mcp.fs.env"},
		{"effect", "mcp:\n  fs:\n    command: x\n    tools:\n      t: {effect: harmless}\n", "mcp.fs.tools.t.effect"},
		{"functionality", "mcp:\n  fs:\n    command: x\n    tools:\n      t: {functionality: read}\n", "mcp.fs.tools.t.functionality"},
		{"tool key", "mcp:\n  fs:\n    command: x\n    tools:\n      t: {functionalty: a.b}\n", "mcp.fs.tools.t.functionalty"},
		{"twice", "mcp:\n  fs:\n    command: x\n    tools:\n      t: {functionality: a.b}\n      u: {functionality: a.b}\n", "mcp.fs.tools.u.functionality"},
		{"key", "mcp:\n  fs:\n    command: x\n    tools:\n      t: {key: {a: 1}}\n", "mcp.fs.tools.t.key"},
		{"model", "mcp:\n  fs:\n    command: x\n    model: 'bad model!'\n", "mcp.fs.model"},
		{"catalog description", "mcp:\n  fs:\n    command: x\n    catalog:\n      - {name: a.b, effect: read, request: {type: object}, response: {type: object}}\n", "mcp.fs.catalog[0].description"},
		{"catalog effect", "mcp:\n  fs:\n    command: x\n    catalog:\n      - {name: a.b, description: d, effect: maybe, request: {type: object}, response: {type: object}}\n", "mcp.fs.catalog[0].effect"},
		{"catalog schema", "mcp:\n  fs:\n    command: x\n    catalog:\n      - {name: a.b, description: d, effect: read, request: {type: string}, response: {type: object}}\n", "mcp.fs.catalog[0].request"},
		{"catalog json", "mcp:\n  fs:\n    command: x\n    catalog:\n      - {name: a.b, description: d, effect: read, request: '{nope', response: {type: object}}\n", "mcp.fs.catalog[0].request"},
		{"catalog twice", "mcp:\n  fs:\n    command: x\n    catalog:\n      - {name: a.b, description: d, effect: read, request: {type: object}, response: {type: object}}\n  gs:\n    command: y\n    catalog:\n      - {name: a.b, description: d, effect: read, request: {type: object}, response: {type: object}}\n", "mcp.gs.catalog"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, tc.body)
			_, err := load(t, file)
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			var ce *config.Error
			if !errors.As(err, &ce) || ce.Key != tc.key || ce.Source != file {
				t.Fatalf("want an error for %s from %s, got %v", tc.key, file, err)
			}
			if strings.TrimSpace(ce.Msg) == "" {
				t.Fatal("no message")
			}
		})
	}
}

// ~ and $HOME stand for the home folder in a server's command, args,
// folders and read, as in a shell: the README's example works as copied.
func TestMCPExpandsTheHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	body := "mcp:\n  fs:\n    command: ~/bin/server\n    args: [-y, \"@modelcontextprotocol/server-filesystem\", ~/notes, \"$HOME/docs\", \"--root=${HOME}/x\", \"~user\"]\n    folders: [~/notes, $HOME/docs]\n    read: [\"${HOME}/ref\"]\n"
	c, err := load(t, writeFile(t, body))
	if err != nil {
		t.Fatal(err)
	}
	fs := c.MCP["fs"]
	want := []string{"-y", "@modelcontextprotocol/server-filesystem", home + "/notes", home + "/docs", "--root=" + home + "/x", "~user"}
	if fs.Command != home+"/bin/server" || !slices.Equal(fs.Args, want) {
		t.Errorf("command %q args %q", fs.Command, fs.Args)
	}
	if !slices.Equal(fs.Folders, []string{home + "/notes", home + "/docs"}) || !slices.Equal(fs.Read, []string{home + "/ref"}) {
		t.Errorf("folders %q read %q", fs.Folders, fs.Read)
	}
}
