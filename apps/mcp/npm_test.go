package mcp_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// npmServer is a server installed from npm by scripts/test.sh under
// $BULKHEAD_MCP_NPM; the test skips without it, unless
// BULKHEAD_INTEGRATION=1, where a missing server fails it.
func npmServer(t *testing.T, bin string) string {
	t.Helper()
	dir := os.Getenv("BULKHEAD_MCP_NPM")
	path := filepath.Join(dir, "node_modules", ".bin", bin)
	if _, err := os.Stat(path); dir == "" || err != nil {
		if os.Getenv("BULKHEAD_INTEGRATION") == "1" {
			t.Fatalf("%s is not installed under $BULKHEAD_MCP_NPM (%q); run scripts/test.sh", bin, dir)
		}
		t.Skipf("%s is not installed under $BULKHEAD_MCP_NPM (%q); scripts/test.sh installs it", bin, dir)
	}
	return path
}

func entry(name string, effect apps.Effect, req, resp string) mcp.CatalogEntry {
	return mcp.CatalogEntry{Name: name, Description: name + " (test).", Effect: effect, Request: json.RawMessage(req), Response: json.RawMessage(resp)}
}

func catalogWith(t *testing.T, cfg mcp.Server) *apps.Catalog {
	t.Helper()
	extra, err := mcp.CatalogEntries(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := apps.NewCatalog(append(apps.Default().List(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

const contentResult = `{"type":"object","properties":{"content":{"type":"string"}},"required":["content"]}`

// @modelcontextprotocol/server-filesystem over a temporary folder: its
// tools are listed with their effects, a read runs after the exec grant,
// and a write asks an irreversible dialog every time — then its change
// set, which lands once accepted.
func TestNPMFilesystem(t *testing.T) {
	bin := npmServer(t, "mcp-server-filesystem")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(dir, "hello.txt")
	os.WriteFile(file, []byte("hello from npm"), 0o600)
	store, err := changes.Open(filepath.Join(t.TempDir(), "changes"), changes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := mcp.Server{Command: bin, Args: []string{dir}, Folders: []string{dir}, Changes: store, // its sandbox grants the folder it serves, staged
		Tools: map[string]mcp.ToolConfig{"read_text_file": {Functionality: "fs.read"}, "write_file": {Functionality: "fs.write"}},
		Catalog: []mcp.CatalogEntry{
			entry("fs.read", apps.EffectRead, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, contentResult),
			entry("fs.write", apps.EffectIrreversible, `{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`, contentResult),
		}}
	cat := catalogWith(t, cfg)
	a, err := mcp.New("fs", cfg, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	effects := map[string]apps.Effect{}
	for _, ti := range a.Tools() {
		effects[ti.Tool] = ti.Effect
	}
	for tool, want := range map[string]apps.Effect{"read_text_file": apps.EffectRead, "list_directory": apps.EffectRead,
		"write_file": apps.EffectIrreversible, "move_file": apps.EffectIrreversible, "create_directory": apps.EffectWrite} {
		if effects[tool] != want {
			t.Errorf("%s: %s, want %s (all: %v)", tool, effects[tool], want, effects)
		}
	}

	plans := map[string]string{"read": "fs.read", "write": "fs.write"}
	calls := map[string][]step{
		"read":  {{"read_text_file", map[string]any{"path": file}}},
		"write": {{"write_file", map[string]any{"path": file, "content": "written by bulkhead"}}},
	}
	p := permissionstest.NewPrompter(permissions.AnswerSession)
	r := newRig(t, gullibleFor(plans, calls), p, nil, cat, map[string]mcp.Server{"fs": cfg})
	chat, _ := r.op.NewChat(false)
	turn, evs := r.ask(t, chat.ID, "read my file")
	if out, ok := ran(evs, "fs", "read_text_file"); !ok || !strings.Contains(out, "hello from npm") {
		t.Fatalf("read_text_file: %q", out)
	}
	if c := p.Calls(); len(c) != 1 || c[0].Kind != permissions.KindExec || c[0].Object != "fs" || !strings.Contains(turn.Answer, "hello from npm") {
		t.Fatalf("want the exec dialog only, then the answer: %+v %q", c, turn.Answer)
	}
	for i := 0; i < 2; i++ {
		chat, _ := r.op.NewChat(false)
		_, evs := r.ask(t, chat.ID, "write my file")
		if _, ok := ran(evs, "fs", "write_file"); !ok {
			t.Fatalf("write %d did not run", i)
		}
	}
	if irr := prompts(p, permissions.KindIrreversible); len(irr) != 2 || !strings.Contains(string(irr[1].Args), "written by bulkhead") {
		t.Fatalf("want an irreversible dialog for each write, got %+v", irr)
	}
	if b, _ := os.ReadFile(file); string(b) != "written by bulkhead" {
		t.Fatalf("file holds %q", b)
	}
	if sets := prompts(p, permissions.KindChanges); len(sets) == 0 || sets[0].Changes == nil || sets[0].Changes.Entries[0].Path != "hello.txt" {
		t.Fatalf("want the write's change set asked, got %+v", sets)
	}
}

// @modelcontextprotocol/server-everything: its tools are listed, echo runs
// through a spoke, config tightens an effect, and the server does not see
// bulkhead's own environment.
func TestNPMEverything(t *testing.T) {
	bin := npmServer(t, "mcp-server-everything")
	t.Setenv("BULKHEAD_TEST_SECRET", "s3cret-value")
	cfg := mcp.Server{Command: bin, Args: []string{"stdio"}, Env: map[string]string{"GIVEN_TO_SERVER": "yes-given"},
		Tools: map[string]mcp.ToolConfig{"echo": {Functionality: "everything.echo"}, "get-env": {Functionality: "everything.env", Effect: apps.EffectIrreversible}},
		Catalog: []mcp.CatalogEntry{
			entry("everything.echo", apps.EffectRead, `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`, contentResult),
			entry("everything.env", apps.EffectRead, `{"type":"object"}`, contentResult),
		}}
	cat := catalogWith(t, cfg)
	plans := map[string]string{"echo": "everything.echo", "environment": "everything.env"}
	calls := map[string][]step{"echo": {{"echo", map[string]any{"message": "hi from bulkhead"}}}, "environment": {{"get_env", map[string]any{}}}}
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	r := newRig(t, gullibleFor(plans, calls), p, allowExec, cat, map[string]mcp.Server{"everything": cfg})
	a, _ := r.reg.App("everything")
	m := a.Manifest()
	for _, fn := range []string{"echo", "get_sum", "get_tiny_image", "get_structured_content", "get_env"} {
		if _, ok := m.Function(fn); !ok {
			t.Errorf("no function %s", fn)
		}
	}
	if f, _ := m.Function("get_env"); f.Effect != apps.EffectIrreversible {
		t.Errorf("config must tighten get-env to irreversible: %s", f.Effect)
	}
	chat, _ := r.op.NewChat(false)
	_, evs := r.ask(t, chat.ID, "echo this")
	if out, ok := ran(evs, "everything", "echo"); !ok || !strings.Contains(out, "hi from bulkhead") {
		t.Fatalf("echo: %q", out)
	}
	_, evs = r.ask(t, chat.ID, "show the environment")
	out, ok := ran(evs, "everything", "get_env")
	if !ok || !strings.Contains(out, "yes-given") || strings.Contains(out, "s3cret-value") {
		t.Fatalf("get-env must see its configured variables and none of bulkhead's: %q", out)
	}
	if irr := prompts(p, permissions.KindIrreversible); len(irr) != 1 || irr[0].Function != "get_env" {
		t.Fatalf("the tightened tool must ask: %+v", irr)
	}
}

// Two real npm servers as two apps: everything's spoke asks the hub for
// fs.read, which the filesystem server provides; the request and the
// answer each go to the user as a collab dialog, and read_text_file runs
// in the filesystem app's own spoke.
func TestNPMServersTalkOnlyThroughTheHub(t *testing.T) {
	fsBin := npmServer(t, "mcp-server-filesystem")
	evBin := npmServer(t, "mcp-server-everything")
	dir, _ := filepath.EvalSymlinks(t.TempDir())
	file := filepath.Join(dir, "note.txt")
	os.WriteFile(file, []byte("the secret plan"), 0o600)
	fsCfg := mcp.Server{Command: fsBin, Args: []string{dir}, Folders: []string{dir},
		Tools:   map[string]mcp.ToolConfig{"read_text_file": {Functionality: "fs.read"}},
		Catalog: []mcp.CatalogEntry{entry("fs.read", apps.EffectRead, `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`, contentResult)}}
	evCfg := mcp.Server{Command: evBin, Args: []string{"stdio"},
		Tools:   map[string]mcp.ToolConfig{"echo": {Functionality: "everything.echo"}},
		Catalog: []mcp.CatalogEntry{entry("everything.echo", apps.EffectRead, `{"type":"object","properties":{"message":{"type":"string"}},"required":["message"]}`, contentResult)}}
	extra1, _ := mcp.CatalogEntries(fsCfg)
	extra2, _ := mcp.CatalogEntries(evCfg)
	cat, err := apps.NewCatalog(append(append(apps.Default().List(), extra1...), extra2...)...)
	if err != nil {
		t.Fatal(err)
	}
	plans := map[string]string{"echo": "everything.echo"}
	calls := map[string][]step{"echo": {
		{"echo", map[string]any{"message": "hello"}},
		{apps.RequestFunctionality, map[string]any{"functionality": "fs.read", "arguments": map[string]any{"path": file}}},
	}}
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	r := newRig(t, gullibleFor(plans, calls), p, allowExec, cat, map[string]mcp.Server{"fs": fsCfg, "everything": evCfg})
	chat, _ := r.op.NewChat(false)
	_, evs := r.ask(t, chat.ID, "echo and read my note")
	collab := prompts(p, permissions.KindCollab)
	if len(collab) != 2 || collab[0].Subject != "everything" || collab[0].Object != "fs" || collab[0].Function != "fs.read" ||
		!strings.Contains(collab[0].Warning, "NOT expected by the plan") || !strings.Contains(string(collab[1].Args), "the secret plan") {
		t.Fatalf("want the request and the answer put to the user: %+v", collab)
	}
	if out, ok := ran(evs, "fs", "read_text_file"); !ok || !strings.Contains(out, "the secret plan") {
		t.Fatalf("read_text_file must run in fs's own spoke: %q", out)
	}
}
