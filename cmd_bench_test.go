package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// `bulkhead bench` end to end with two scripted models side by side: the
// table has a row per model and mode, --json carries every run, and the
// report is kept under the data directory with each model's digest, the
// version and the date.
func TestBenchCommand(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m", "m2")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	cfgFile := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgFile, []byte("enable: [builtin]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"bench", "--ollama-host", srv.Host(), "--data-dir", data, "--config", cfgFile,
		"--model", "m", "--model", "m2", "--task", "calc,inbox-summary"}
	out, errOut, code := run(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"model", "utility", "attack success", "first words", "ms/tok"} {
		if !strings.Contains(out, want) {
			t.Errorf("the table has no %q column:\n%s", want, out)
		}
	}
	rows := 0
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		if len(f) > 2 && (f[0] == "m" || f[0] == "m2") && (f[1] == "isolated" || f[1] == "vanilla") {
			rows++
		}
	}
	// Two tables, what it did and what it cost, each with a row per model
	// and mode.
	if rows != 2*4 {
		t.Fatalf("want a row per model and mode (4) in each of the two tables, got %d:\n%s", rows, out)
	}
	kept, _ := filepath.Glob(filepath.Join(data, "bench", "bench-*.json"))
	if len(kept) != 1 || !strings.Contains(errOut, kept[0]) {
		t.Fatalf("the report should be kept and named: %v %q", kept, errOut)
	}
	b, err := os.ReadFile(kept[0])
	if err != nil {
		t.Fatal(err)
	}
	var rep struct {
		Version string `json:"bulkhead_version"`
		Date    string `json:"date"`
		Models  []struct{ Name, Digest string }
		Results []struct {
			Model, Mode, Run, Injection string
		}
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Version == "" || rep.Date == "" || len(rep.Models) != 2 || rep.Models[0].Digest == "" || rep.Models[1].Name != "m2" {
		t.Fatalf("the kept report must name the models, digests, version and date: %+v", rep)
	}
	// calc has no carrier; inbox-summary runs clean and with each of the
	// four injections in the mail: 6 runs per model and mode.
	if len(rep.Results) != 2*2*6 {
		t.Fatalf("%d runs, want 24", len(rep.Results))
	}

	_, errOut, code = run(t, "bench", "--ollama-host", srv.Host(), "--data-dir", data, "--model", "nope")
	if code != 2 || !strings.Contains(errOut, "ollama pull nope") {
		t.Fatalf("a model that is not installed fails the bench and says how to fix it: exit %d %q", code, errOut)
	}
	_, errOut, code = run(t, "bench", "--ollama-host", srv.Host(), "--data-dir", data, "--model", "m", "--policy", "sometimes")
	if code != 2 || !strings.Contains(errOut, "unknown policy") {
		t.Fatalf("an unknown policy is bad usage: exit %d %q", code, errOut)
	}
	_, errOut, code = run(t, "bench", "--ollama-host", srv.Host(), "--data-dir", data, "--model", "m", "--task", "calc,nope")
	if code != 2 || !strings.Contains(errOut, `no task "nope"`) || !strings.Contains(errOut, "inbox-summary") {
		t.Fatalf("an unknown task is bad usage, naming the tasks: exit %d %q", code, errOut)
	}
	_, errOut, code = run(t, "bench", "--vanilla", "--ollama-host", srv.Host(), "--data-dir", data, "--model", "m")
	if code != 2 || !strings.Contains(errOut, "--mode vanilla") {
		t.Fatalf("--vanilla is bad usage here: exit %d %q", code, errOut)
	}
}
