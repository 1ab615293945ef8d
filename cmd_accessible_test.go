package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// TestAccessibleChatAnswersDialogs: `bulkhead --accessible` is a line-mode
// chat whose permission dialogs are huh prompts in accessible mode: the
// dialog says what the hub says in plain text, a number answers it, an
// empty answer or the end of the input denies, and the chat goes on with
// the next line.
func TestAccessibleChatAnswersDialogs(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("enable: [builtin, demo]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	chat := func(in string, args ...string) string {
		t.Helper()
		out, errOut, code := runIn(t, strings.NewReader(in), append([]string{"--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, errOut, out)
		}
		if strings.Contains(out, "\x1b[") || strings.Contains(out, "\x1b]") {
			t.Fatalf("accessible output carries terminal sequences:\n%q", out)
		}
		return out
	}
	const trip = "Day 1: arrive"
	out := chat("plan a trip to Lisbon\n1\n", "--accessible")
	for _, want := range []string{"Permission question: exec, from hub to travel_mate, travel.plan_trip.",
		"The hub says: expected by the plan", "query: plan a trip to Lisbon (typed by you)",
		"1. allow once", "4. deny", "5. deny with a note", trip} {
		if !strings.Contains(out, want) {
			t.Errorf("1 (allow once): the output lacks %q:\n%s", want, out)
		}
	}
	// 4 denies: the app does not run; the next line is the next request.
	out = chat("plan a trip to Lisbon\n4\nwhat rhymes with orange\n", "--accessible")
	if strings.Contains(out, trip) || strings.Count(out, "request: ") < 3 {
		t.Errorf("4 (deny) must keep the app from running, and the chat go on:\n%s", out)
	}
	// The end of the input in a dialog denies.
	if out = chat("plan a trip to Lisbon\n", "--accessible"); strings.Contains(out, trip) || !strings.Contains(out, "Your answer (empty denies)") {
		t.Errorf("the end of the input must deny:\n%s", out)
	}
	// The config turns it on as well.
	if err := os.WriteFile(cfg, []byte("enable: [builtin, demo]\nui:\n  accessible: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out = chat("plan a trip to Lisbon\n\n"); !strings.Contains(out, "accessible mode") || strings.Contains(out, trip) {
		t.Errorf("ui.accessible: true must run the line-mode chat, and an empty answer deny:\n%s", out)
	}
	log, _, _ := run(t, "permissions", "log", "--config", cfg, "--data-dir", dir)
	if strings.Count(log, "denied") < 3 || !strings.Contains(log, "allowed once") {
		t.Errorf("the action log must hold one allow and three denials:\n%s", log)
	}
}
