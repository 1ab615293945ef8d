package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// run executes the command line in-process and returns stdout, stderr and
// the exit code main would use.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	return runIn(t, nil, args...)
}

// runIn is run with in as standard input.
func runIn(t *testing.T, in io.Reader, args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	stopServingAfter(t, args)
	var out, errOut bytes.Buffer
	root := newRoot()
	if in != nil {
		root.SetIn(in)
	}
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	code := 0
	if err != nil {
		code = report(err, &errOut, false)
	}
	return out.String(), errOut.String(), code
}

// stopServingAfter stops, when t ends, the process that serves the data
// directory args name (a command starts one when none does), so that
// none outlives its test's folder.
func stopServingAfter(t testing.TB, args []string) {
	for i, a := range args {
		dir, ok := strings.CutPrefix(a, "--data-dir=")
		if a == "--data-dir" && i+1 < len(args) {
			dir, ok = args[i+1], true
		}
		if ok {
			t.Cleanup(func() {
				if err := serve.Stop(dir, 30*time.Second); err != nil {
					t.Errorf("stop serving %s: %v", dir, err)
				}
			})
		}
	}
}

func events(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not a JSON line: %q", sc.Text())
		}
		evs = append(evs, ev)
	}
	return evs
}

var chatPlan = ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "chat", "query": "hello", "depends_on": []string{}}}})

func TestAskJSONReturnsExactlyTheScriptedText(t *testing.T) {
	const scripted = "Hello from the **scripted** model."
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Text(scripted)
	}), "m")
	out, errOut, code := run(t, "ask", "--json", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", t.TempDir(), "hello")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	evs := events(t, out)
	if len(evs) != 2 || evs[0]["type"] != "plan" || evs[1]["type"] != "answer" {
		t.Fatalf("events: %s", out)
	}
	steps := evs[0]["steps"].([]any)
	if step := steps[0].(map[string]any); step["app"] != "vanilla" || step["functionality"] != "chat" {
		t.Fatalf("plan: %v", steps)
	}
	if evs[1]["text"] != scripted {
		t.Fatalf("answer %q, want exactly %q", evs[1]["text"], scripted)
	}
	usage := evs[1]["usage"].(map[string]any)
	if usage["calls"] != float64(2) || usage["prompt_tokens"].(float64) <= 0 || usage["eval_tokens"].(float64) <= 0 {
		t.Fatalf("usage %v", usage)
	}
}

func TestAskStreamsTokens(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Chunks: []string{"a", "b", "c"}}
	}), "m")
	dir := t.TempDir()
	out, _, code := run(t, "ask", "--json", "--stream", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "hi")
	// The answer streams as drafts (while the hub plans) then tokens.
	var tokens []string
	for _, ev := range events(t, out) {
		if ev["type"] == "token" || ev["type"] == "draft" {
			tokens = append(tokens, ev["text"].(string))
		}
	}
	if code != 0 || strings.Join(tokens, "|") != "a|b|c" {
		t.Fatalf("exit %d tokens %v\n%s", code, tokens, out)
	}
	out, _, code = run(t, "ask", "--stream", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "hi")
	if code != 0 || out != "abc\n" {
		t.Fatalf("plain stream: exit %d %q", code, out)
	}
}

func TestAskFailures(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Chunks: []string{"par", "tial", "never"}, CutAfter: 2}
	}), "m")
	dir := t.TempDir()

	out, _, code := run(t, "ask", "--json", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "hi")
	evs := events(t, out)
	last := evs[len(evs)-1]
	if code != 1 || last["type"] != "error" || last["partial"] != "partial" || !strings.Contains(last["message"].(string), "cut off") {
		t.Fatalf("cut stream: exit %d\n%s", code, out)
	}

	// A model that is not there is a name that is not there: 2.
	out, errOut, code := run(t, "ask", "--ollama-host", srv.Host(), "--model", "absent:1b", "--data-dir", dir, "hi")
	if code != 2 || !strings.Contains(errOut, "ollama pull absent:1b") {
		t.Fatalf("missing model: exit %d out %q err %q", code, out, errOut)
	}

	bad := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(bad, []byte("hub:\n  model: 'no good!'\n"), 0o600)
	_, errOut, code = run(t, "ask", "--config", bad, "hi")
	if code != 2 || !strings.Contains(errOut, "hub.model") || !strings.Contains(errOut, bad) {
		t.Fatalf("bad config: exit %d %q", code, errOut)
	}

	// An unknown app and a missing workspace are configuration errors
	// that say where the value came from, before anything starts.
	_, errOut, code = run(t, "ask", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "--apps", "files,bogus", "hi")
	if code != 2 || !strings.Contains(errOut, "enable (from --apps)") || !strings.Contains(errOut, `"bogus"`) || !strings.Contains(errOut, "packs: builtin") {
		t.Fatalf("--apps bogus: exit %d %q", code, errOut)
	}
	os.WriteFile(bad, []byte("enable: [builtin, nonesuch]\n"), 0o600)
	_, errOut, code = run(t, "ask", "--config", bad, "--ollama-host", srv.Host(), "--data-dir", dir, "hi")
	if code != 2 || !strings.Contains(errOut, "enable (from "+bad+")") {
		t.Fatalf("enable in the file: exit %d %q", code, errOut)
	}
	gone := filepath.Join(t.TempDir(), "gone")
	_, errOut, code = run(t, "ask", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "--workspace", gone, "hi")
	if code != 2 || !strings.Contains(errOut, "workspace (from --workspace)") || !strings.Contains(errOut, "no such folder") {
		t.Fatalf("missing workspace: exit %d %q", code, errOut)
	}
}

func TestDoctor(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "present")
	out, _, code := run(t, "doctor", "--ollama-host", srv.Host(), "--model", "present", "--data-dir", t.TempDir())
	if code != 0 || !strings.Contains(out, "✓ ollama") || !strings.Contains(out, "✓ model present") || !strings.Contains(out, "✓ data directory") {
		t.Fatalf("healthy doctor: exit %d\n%s", code, out)
	}
	out, _, code = run(t, "doctor", "--ollama-host", srv.Host(), "--model", "absent", "--data-dir", t.TempDir())
	if code != 1 || !strings.Contains(out, "fix: ollama pull absent") {
		t.Fatalf("missing model: exit %d\n%s", code, out)
	}
}

func TestVersion(t *testing.T) {
	out, _, code := run(t, "version")
	if code != 0 || !strings.HasPrefix(out, "bulkhead ") {
		t.Fatalf("%d %q", code, out)
	}
}

func TestAskRetryFinishesACutTurn(t *testing.T) {
	answers := []ollamatest.Reply{{Chunks: []string{"half", "rest"}, CutAfter: 1}, ollamatest.Text("whole")}
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		a := answers[0]
		answers = answers[1:]
		return a
	}), "m")
	dir := t.TempDir()
	out, _, code := run(t, "ask", "--json", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "hi")
	evs := events(t, out)
	chat, _ := evs[0]["chat"].(string)
	if code != 1 || chat == "" {
		t.Fatalf("first try: exit %d\n%s", code, out)
	}
	out, errOut, code := run(t, "ask", "--retry", "--chat", chat, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir)
	if code != 0 || out != "whole\n" {
		t.Fatalf("retry: exit %d out %q err %q", code, out, errOut)
	}
	_, errOut, code = run(t, "ask", "--retry", "--chat", chat, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir)
	if code != 1 || !strings.Contains(errOut, "nothing to retry") {
		t.Fatalf("second retry: exit %d %q", code, errOut)
	}
}

func TestConfigRuleCannotAllowIrreversible(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("permissions:\n  rules:\n    - {effect: allow, kind: exec}\n    - {effect: allow, kind: '*', object: mail}\n"), 0o600)
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "m")
	_, errOut, code := run(t, "ask", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", t.TempDir(), "hi")
	if code != 2 || !strings.Contains(errOut, cfg+": permissions.rules[1]") || strings.Contains(errOut, "rules[0]") {
		t.Fatalf("want exit 2 naming rule 1 of %s, got %d: %s", cfg, code, errOut)
	}
}
