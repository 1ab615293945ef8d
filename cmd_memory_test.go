package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

func TestMemoryCLI(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	dir := filepath.Join(t.TempDir(), "data")
	// memory.every: 1 brings the upkeep due after every turn (the default
	// batches it: every 4 new turns of a chat, counted in the store).
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("memory:\n  every: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ask := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(t, append([]string{"ask", "--json", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}, args...)...)
		if code != 0 {
			t.Fatalf("ask %v: exit %d %s\n%s", args, code, errOut, out)
		}
		return out
	}
	evs := events(t, ask("My name is Ada and I travel from May 3 to May 7"))
	chat, _ := evs[0]["chat"].(string)

	// An `ask` lets the upkeep it brought due finish before it exits.
	out, _, code := run(t, "memory", "show", "--data-dir", dir)
	for _, want := range []string{"hub\n", "summary of chat " + chat, "user.name = Ada", "trip.dates = May 3 to May 7", "vanilla\n", "the hub's record of it"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("show: exit %d, want %q in\n%s", code, want, out)
		}
	}
	if _, _, code := run(t, "memory", "show", "no good!", "--data-dir", dir); code != 2 {
		t.Fatalf("a bad owner: exit %d", code)
	}

	out, _, code = run(t, "memory", "export", "--data-dir", dir)
	var exp struct {
		Owners []struct {
			Owner    string `json:"owner"`
			Entities []struct{ Key, Value string }
		} `json:"owners"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || len(exp.Owners) < 2 || exp.Owners[0].Owner != "hub" || len(exp.Owners[0].Entities) != 2 {
		t.Fatalf("export: exit %d\n%s", code, out)
	}

	// A private query in that chat leaves nothing in the data directory,
	// bulkhead.log included.
	const secret = "PRIVMARK-cli-41f"
	priv := events(t, ask("--private", "--chat", chat, "tell me about "+secret))
	if answerOf(priv) == "" {
		t.Fatalf("private query: %v", priv)
	}
	// While the serving process runs (files it replaces meanwhile are
	// skipped), and after it has closed the data directory.
	for _, stop := range []bool{false, true} {
		if stop {
			if err := serve.Stop(dir, 30*time.Second); err != nil {
				t.Fatal(err)
			}
		}
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			if err != nil || !d.Type().IsRegular() {
				return err
			}
			b, err := os.ReadFile(path)
			if bytes.Contains(b, []byte(secret)) {
				t.Errorf("%s holds the private query", path)
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}

	if out, _, code := run(t, "memory", "forget", "vanilla", "--data-dir", dir); code != 0 || !strings.Contains(out, "forgot vanilla") {
		t.Fatalf("forget: exit %d %s", code, out)
	}
	out, _, _ = run(t, "memory", "show", "vanilla", "--json", "--data-dir", dir)
	var shown []struct {
		Summaries []any `json:"summaries"`
		Entities  []any `json:"entities"`
		Record    *struct {
			Summaries []any `json:"summaries"`
		} `json:"record"`
	}
	if json.Unmarshal([]byte(out), &shown) != nil || len(shown) != 1 || len(shown[0].Summaries) != 0 || len(shown[0].Entities) != 0 || len(shown[0].Record.Summaries) != 0 {
		t.Fatalf("vanilla must be forgotten, the hub's record of it too:\n%s", out)
	}
	out, _, _ = run(t, "memory", "show", "hub", "--data-dir", dir)
	if !strings.Contains(out, "user.name = Ada") {
		t.Fatalf("forgetting an app must leave the hub's own memory:\n%s", out)
	}
}
