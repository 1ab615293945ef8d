package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/memory/memorytest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

func TestChatsCLI(t *testing.T) {
	// The answer carries an escape sequence that would set the terminal's
	// clipboard: every command shows it as text.
	const answer = "Paris is the capital. \x1b]52;c;ZXZpbA==\x07done"
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Text(answer)
	}), "m")
	dir := filepath.Join(t.TempDir(), "data")
	ask := func(args ...string) string {
		t.Helper()
		out, errOut, code := run(t, append([]string{"ask", "--json", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}, args...)...)
		if code != 0 {
			t.Fatalf("ask %v: exit %d %s\n%s", args, code, errOut, out)
		}
		return out
	}
	chat, _ := events(t, ask("what is the capital of France?"))[0]["chat"].(string)
	ask("--chat", chat, "and of Italy?")
	ask("--private", "--chat", chat, "PRIVMARK-chats a private question")

	out, errOut, code := run(t, "chats", "list", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, chat) || !strings.Contains(out, "2 turns") {
		t.Fatalf("list: exit %d\n%s\n%s", code, out, errOut)
	}
	out, _, code = run(t, "chats", "list", "--json", "--data-dir", dir)
	var rows []struct {
		ID    string `json:"id"`
		Turns int    `json:"turns"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].ID != chat || rows[0].Turns != 2 {
		t.Fatalf("list --json: exit %d\n%s", code, out)
	}

	out, _, code = run(t, "chats", "show", chat, "--data-dir", dir)
	for _, want := range []string{"> what is the capital of France?", "> and of Italy?", "Paris is the capital.", `\x1b]52`} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("show: exit %d, want %q in\n%s", code, want, out)
		}
	}
	if strings.ContainsRune(out, 0x1b) || strings.Contains(out, "PRIVMARK") {
		t.Fatalf("show printed a raw escape or the private turn:\n%q", out)
	}

	out, _, code = run(t, "chats", "export", chat, "--format", "json", "--data-dir", dir)
	var exp struct {
		ID    string `json:"id"`
		Turns []struct {
			Seq    int    `json:"seq"`
			Query  string `json:"query"`
			Answer string `json:"answer"`
			Status string `json:"status"`
		} `json:"turns"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || exp.ID != chat || len(exp.Turns) != 2 {
		t.Fatalf("export json: exit %d\n%s", code, out)
	}
	if exp.Turns[1].Query != "and of Italy?" || exp.Turns[1].Answer != termtext.Sanitize(answer) || exp.Turns[1].Status != "ok" {
		t.Fatalf("export json turn: %+v", exp.Turns[1])
	}
	if strings.ContainsRune(out, 0x1b) {
		t.Fatalf("export printed a raw escape:\n%q", out)
	}
	if _, _, code := run(t, "chats", "export", chat, "--format", "pdf", "--data-dir", dir); code != 2 {
		t.Fatalf("a bad format: exit %d", code)
	}
	if _, _, code := run(t, "chats", "show", "nochat", "--data-dir", dir); code != 2 {
		t.Fatalf("an unknown chat: exit %d", code)
	}

	if out, _, code := run(t, "chats", "rm", chat, "--data-dir", dir); code != 0 || !strings.Contains(out, "deleted chat "+chat) {
		t.Fatalf("rm: exit %d %s", code, out)
	}
	if out, _, _ := run(t, "chats", "list", "--data-dir", dir); !strings.Contains(out, "no chats kept yet") {
		t.Fatalf("list after rm:\n%s", out)
	}
	if _, _, code := run(t, "chats", "rm", chat, "--data-dir", dir); code != 2 {
		t.Fatalf("rm twice: exit %d", code)
	}
}

// TestDeletedChatIsGoneFromDisk: `chats rm` leaves no word of the chat in
// any file of the data directory, its database tables decoded — the hub's
// log, summaries and entities, bulkhead.log — and the other chat intact.
func TestDeletedChatIsGoneFromDisk(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("enable: [builtin, demo]\nmemory:\n  every: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ask := func(args ...string) []map[string]any {
		t.Helper()
		out, errOut, code := run(t, append([]string{"ask", "--json", "--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "--on-prompt=once"}, args...)...)
		if code != 0 {
			t.Fatalf("ask %v: exit %d %s\n%s", args, code, errOut, out)
		}
		return events(t, out)
	}
	gone, _ := ask("My name is Zephyrine and I travel from May 3 to May 7")[0]["chat"].(string)
	ask("--chat", gone, "what rhymes with Quixotically?")
	// A turn whose dialogs and calls carry the chat's words into the
	// action log (the request's arguments, the hub's warning).
	ask("--chat", gone, "plan a trip to Zanzibarzzle for Zephyrine")
	kept, _ := ask("My name is Ada")[0]["chat"].(string)
	// The files are read with the data directory closed: the serving
	// process, started by the first ask, stops.
	stop := func() {
		t.Helper()
		if err := serve.Stop(dir, 30*time.Second); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	hits, err := memorytest.Find(dir, "Zephyrine", "Quixotically", "Zanzibarzzle")
	if err != nil || len(hits) == 0 {
		t.Fatalf("before rm the scan should find the chat: %v %v", hits, err)
	}
	// The transcript keeps the turn's calls and decisions.
	out, _, _ := run(t, "chats", "show", gone, "--data-dir", dir, "--config", cfg)
	for _, want := range []string{"- asked: exec hub → travel_mate (travel.plan_trip)", "— allowed once (policy)", "- ran travel_mate.plan_trip {", "Zanzibarzzle"} {
		if !strings.Contains(out, want) {
			t.Fatalf("chats show lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = run(t, "chats", "export", gone, "--format", "json", "--data-dir", dir, "--config", cfg)
	if !strings.Contains(out, `"activity"`) || !strings.Contains(out, `"app_call"`) {
		t.Fatalf("the export lacks the activity:\n%s", out)
	}
	out, _, _ = run(t, "permissions", "log", "--json", "--data-dir", dir, "--config", cfg)
	if !strings.Contains(out, "Zanzibarzzle") || !strings.Contains(out, `"kind":"exec"`) {
		t.Fatalf("the action log should hold the trip's request before rm:\n%s", out)
	}
	stop()
	if out, _, code := run(t, "chats", "rm", gone, "--data-dir", dir, "--config", cfg); code != 0 {
		t.Fatalf("rm: exit %d %s", code, out)
	}
	stop()
	hits, err = memorytest.Find(dir, "Zephyrine", "Quixotically", "Zanzibarzzle")
	if err != nil || len(hits) > 0 {
		t.Fatalf("after rm the data directory still holds the chat: %v %v", hits, err)
	}
	// What was asked and decided stays on the record, without the words.
	out, _, _ = run(t, "permissions", "log", "--json", "--data-dir", dir, "--config", cfg)
	if !strings.Contains(out, `"object":"travel_mate"`) || !strings.Contains(out, "deleted with its chat") {
		t.Fatalf("the action log should keep the trip's request, without its words:\n%s", out)
	}
	stop()
	if out, _, code := run(t, "chats", "show", kept, "--data-dir", dir, "--config", cfg); code != 0 || !strings.Contains(out, "My name is Ada") {
		t.Fatalf("the other chat: exit %d\n%s", code, out)
	}
}

// Bad usage exits 2 in every command; a failed ask that did nothing
// leaves no chat; revoking nothing says so.
func TestUsageAndFailures(t *testing.T) {
	srv := ollamatest.NewScripted(t, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Status: 500, Error: "the model broke"}
	}, "m")
	dir := filepath.Join(t.TempDir(), "data")
	common := []string{"--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}
	for _, args := range [][]string{{"ask"}, {"ask", "--retry"}, {"chats", "show"}, {"permissions", "revoke", "a", "b"}, {"--bogus"}, {"ask", "--bogus", "hi"}} {
		if _, errOut, code := run(t, append(args, common...)...); code != 2 {
			t.Errorf("%v: exit %d, want 2 (%s)", args, code, errOut)
		}
	}
	if _, errOut, code := runIn(t, strings.NewReader("  \n"), append([]string{"ask", "-"}, common...)...); code != 2 {
		t.Errorf("ask - with nothing on standard input: exit %d, want 2 (%s)", code, errOut)
	}
	if _, _, code := run(t, append([]string{"ask", "what now?"}, common...)...); code != 1 {
		t.Errorf("a failed ask: exit %d, want 1", code)
	}
	out, _, code := run(t, "chats", "list", "--json", "--data-dir", dir)
	if code != 0 || strings.TrimSpace(out) != "[]" && strings.TrimSpace(out) != "null" {
		t.Errorf("a failed ask left a chat: exit %d %s", code, out)
	}
	run(t, append([]string{"permissions", "revoke", "--all"}, common...)...) // the default grants
	if out, _, code := run(t, append([]string{"permissions", "revoke", "--all"}, common...)...); code != 0 || !strings.Contains(out, "nothing to revoke") {
		t.Errorf("revoke --all with nothing to revoke: exit %d %q", code, out)
	}
}
