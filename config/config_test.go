package config_test

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/bulkhead-dev/bulkhead/config"
)

func writeFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func load(t *testing.T, file string, args ...string) (config.Config, error) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	src, err := config.Open(file)
	if err != nil {
		return config.Config{}, err
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("ollama-host", "", "")
	fs.String("model", "", "")
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	for _, b := range []struct{ key, flag string }{{"ollama.host", "ollama-host"}, {"hub.model", "model"}, {"spokes.model", "model"}} {
		if err := src.BindFlag(b.key, fs.Lookup(b.flag)); err != nil {
			t.Fatal(err)
		}
	}
	return src.Load()
}

func TestDefaults(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Hub.Model != config.DefaultModel || c.Spokes.Model != config.DefaultModel || c.Ollama.Host != "http://127.0.0.1:11434" {
		t.Fatalf("defaults: %+v", c)
	}
	if c.Ollama.KeepAlive != 10*time.Minute || c.Spokes.History != 10 || c.File != "" {
		t.Fatalf("defaults: %+v", c)
	}
}

func TestPrecedence(t *testing.T) {
	file := writeFile(t, "hub:\n  model: file-model\nspokes:\n  model: file-spoke\nollama:\n  host: http://file:1\n")
	t.Setenv("OLLAMA_HOST", "http://ollamaenv:2")

	c, err := load(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hub.Model != "file-model" || c.Ollama.Host != "http://file:1" {
		t.Fatalf("file should beat OLLAMA_HOST and defaults: %+v", c)
	}

	t.Setenv("BULKHEAD_HUB_MODEL", "env-model")
	c, err = load(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if c.Hub.Model != "env-model" || c.Spokes.Model != "file-spoke" {
		t.Fatalf("env should beat the file: %+v", c)
	}

	c, err = load(t, file, "--model", "flag-model", "--ollama-host", "127.0.0.1:3")
	if err != nil {
		t.Fatal(err)
	}
	if c.Hub.Model != "flag-model" || c.Spokes.Model != "flag-model" || c.Ollama.Host != "http://127.0.0.1:3" {
		t.Fatalf("flags should beat everything: %+v", c)
	}
}

func TestOllamaHostEnvHonoured(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "0.0.0.0:7777")
	c, err := load(t, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Ollama.Host != "http://0.0.0.0:7777" {
		t.Fatalf("OLLAMA_HOST ignored: %s", c.Ollama.Host)
	}
}

func TestAppOverrides(t *testing.T) {
	file := writeFile(t, "apps:\n  notes:\n    model: llama3.2:3b\n    host: 127.0.0.1:9\n  files: {}\n")
	c, err := load(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LLM("notes"); got.Model != "llama3.2:3b" || got.Host != "http://127.0.0.1:9" {
		t.Fatalf("notes: %+v", got)
	}
	if got := c.LLM("files"); got.Model != c.Spokes.Model || got.Host != c.Ollama.Host {
		t.Fatalf("files should use spoke defaults: %+v", got)
	}
	if got := c.LLM("hub"); got.Model != c.Hub.Model {
		t.Fatalf("hub: %+v", got)
	}
	if m := c.Models(); len(m) != 2 {
		t.Fatalf("Models() = %v", m)
	}
}

func TestBadValuesNameKeyAndSource(t *testing.T) {
	cases := []struct {
		name, body, env, key string
	}{
		{"scheme", "ollama:\n  host: ftp://x\n", "", "ollama.host"},
		{"duration", "ollama:\n  keep_alive: forever\n", "", "ollama.keep_alive"},
		{"negative", "spokes:\n  history: -1\n", "", "spokes.history"},
		{"model", "hub:\n  model: 'bad model!'\n", "", "hub.model"},
		{"theme", "ui:\n  theme: purple\n", "", "ui.theme"},
		{"app key", "apps:\n  notes:\n    colour: red\n", "", "apps.notes.colour"},
		{"app name", "apps:\n  Bad.Name:\n    model: x\n", "", "apps.bad"},
		{"unknown", "hubb:\n  model: x\n", "", "hubb.model"},
		// a typo at any level is refused, naming the key and the file
		{"nested typo", "hub:\n  modle: x\n", "", "hub.modle"},
		{"nested typo in ollama", "ollama:\n  hots: http://x\n", "", "ollama.hots"},
		{"nested typo in ui", "ui:\n  thme: dark\n", "", "ui.thme"},
		{"nested typo in limits", "limits:\n  log_mbb: 3\n", "", "limits.log_mbb"},
		{"nested typo in memory", "memory:\n  evry: 3\n", "", "memory.evry"},
		{"nested typo in permissions", "permissions:\n  rulez: []\n", "", "permissions.rulez"},
		{"env", "", "BULKHEAD_OLLAMA_NUM_CTX=lots", "ollama.num_ctx"},
		{"workspace missing", "workspace: /nonexistent/bulkhead-ws\n", "", "workspace"},
		{"workspace a file", "workspace: /etc/hostname\n", "", "workspace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			file := writeFile(t, tc.body)
			want := file
			if tc.env != "" {
				k, v, _ := strings.Cut(tc.env, "=")
				t.Setenv(k, v)
				want = "$" + k
			}
			_, err := load(t, file)
			if !errors.Is(err, config.ErrInvalid) {
				t.Fatalf("want ErrInvalid, got %v", err)
			}
			var ce *config.Error
			if !errors.As(err, &ce) {
				t.Fatalf("want *config.Error, got %v", err)
			}
			if !strings.HasPrefix(ce.Key, tc.key) || ce.Source != want {
				t.Fatalf("error names key %q source %q; want %q from %q (%v)", ce.Key, ce.Source, tc.key, want, err)
			}
		})
	}
}

func TestBrokenFile(t *testing.T) {
	file := writeFile(t, "hub: [unclosed\n")
	_, err := load(t, file)
	if !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), file) {
		t.Fatalf("want an error naming %s, got %v", file, err)
	}
	_, err = load(t, filepath.Join(t.TempDir(), "missing.yaml"))
	if !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("an explicit missing file must fail, got %v", err)
	}
}

func TestMCPServerModel(t *testing.T) {
	file := writeFile(t, "mcp:\n  fs:\n    command: /bin/true\n    model: llama3.2:3b\n    host: 127.0.0.1:9\n")
	c, err := load(t, file)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.LLM("fs"); got.Model != "llama3.2:3b" || got.Host != "http://127.0.0.1:9" {
		t.Fatalf("an MCP server's model and host must reach its spoke: %+v", got)
	}
}

func TestMemoryKeys(t *testing.T) {
	c, err := load(t, "")
	if err != nil || !c.Memory.Enabled || c.Memory.LLMDetector {
		t.Fatalf("defaults: %+v %v", c.Memory, err)
	}
	c, err = load(t, writeFile(t, "memory:\n  enabled: false\n  llm_detector: true\n"))
	if err != nil || c.Memory.Enabled || !c.Memory.LLMDetector {
		t.Fatalf("file: %+v %v", c.Memory, err)
	}
	if _, err := load(t, writeFile(t, "memory:\n  llm_detector: maybe\n")); err == nil || !strings.Contains(err.Error(), "memory.llm_detector") {
		t.Fatalf("a bad value must name the key: %v", err)
	}
}

// TestFromNamesSources: Config.From says where the keys a user sets came
// from, so a check after Load (an unknown app) can name it too.
func TestFromNamesSources(t *testing.T) {
	ws := t.TempDir()
	file := writeFile(t, "workspace: "+ws+"\n")
	t.Setenv("BULKHEAD_ENABLE", "notes")
	c, err := load(t, file, "--model", "m1")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"workspace": file, "enable": "$BULKHEAD_ENABLE", "hub.model": "--model", "data_dir": "default"}
	for k, v := range want {
		if c.From[k] != v {
			t.Errorf("From[%s] = %q, want %q", k, c.From[k], v)
		}
	}
	var ce *config.Error
	if err := c.Invalid("enable", "bad"); !errors.As(err, &ce) || ce.Source != "$BULKHEAD_ENABLE" || !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("Invalid = %v", err)
	}
}

func TestUIMouse(t *testing.T) {
	c, err := load(t, "")
	if err != nil || c.Mouse {
		t.Fatalf("default: mouse %v, %v", c.Mouse, err)
	}
	c, err = load(t, writeFile(t, "ui:\n  mouse: true\n"))
	if err != nil || !c.Mouse {
		t.Fatalf("ui.mouse: true: mouse %v, %v", c.Mouse, err)
	}
	if _, err := load(t, writeFile(t, "ui:\n  mouse: sometimes\n")); !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("ui.mouse: sometimes: %v", err)
	}
}

// A typo says which key was likely meant.
func TestTyposSayWhatWasMeant(t *testing.T) {
	for body, want := range map[string]string{
		"hub:\n  modle: x\n":          "did you mean hub.model?",
		"ollama:\n  hots: http://x\n": "did you mean ollama.host?",
		"enabel: [calc]\n":            "did you mean enable?",
	} {
		_, err := load(t, writeFile(t, body))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want it to say %q", body, err, want)
		}
	}
}

// An app's own model is read as its spoke's model is (LLM: apps.NAME
// before mcp.NAME), and the key named for a fix is the one that gives it
// — so the setup panel's fix for an app's missing model names the key
// that would change what that spoke uses.
func TestAnAppsOwnModelAndItsKey(t *testing.T) {
	t.Parallel()
	c := config.Config{Spokes: config.Owner{Model: "spoke"}, Apps: map[string]config.App{"notes": {Model: "a1"}, "both": {Model: "a2"}},
		MCP: map[string]config.MCPServer{"fs": {Model: "m1"}, "both": {Model: "m2"}}}
	for _, tc := range []struct{ app, model, key string }{
		{"notes", "a1", "apps.notes.model"},
		{"fs", "m1", "mcp.fs.model"},
		{"both", "a2", "apps.both.model"},
		{"calc", "", "apps.calc.model"},
	} {
		m, k := c.AppModel(tc.app)
		if m != tc.model || k != tc.key {
			t.Errorf("%s: %q %q, want %q %q", tc.app, m, k, tc.model, tc.key)
		}
		if want := cmp.Or(tc.model, "spoke"); c.LLM(tc.app).Model != want {
			t.Errorf("%s: its spoke uses %q, the panel would say %q", tc.app, c.LLM(tc.app).Model, want)
		}
	}
}
