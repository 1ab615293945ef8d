package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// TestAModelChoiceHoldsWhereItsWordsSay: /model says its choice holds
// here and in the bulkheads started later on the data directory (ask
// and doctor too) until the config's models change or --model names
// another — and so it does: doctor checks the chosen model, not the
// configured one, and a --model flag checks its own.
func TestAModelChoiceHoldsWhereItsWordsSay(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m", "m2")
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("hub:\n  model: m\nspokes:\n  model: m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfg, "--ollama-host", srv.Host(), "--data-dir", dir}
	out, errOut, code := lineChat(t, []typed{{"request: ", 1, false, "/model m2"}}, args...)
	said := "The hub and the spokes now use m2, here and in the bulkheads started later on this data directory (ask and doctor too), until the config's hub.model or spokes.model changes or --model names another"
	if code != 0 || !strings.Contains(out, said) || strings.Contains(out, "this session") {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	out, errOut, code, _, _ = asBulkhead(t, nil, append([]string{"doctor"}, args...)...)
	if code != 0 || !strings.Contains(out, "✓ model m2") || strings.Contains(out, "model m on") {
		t.Fatalf("doctor after /model m2: exit %d\n%s\n%s", code, out, errOut)
	}
	out, errOut, code, _, _ = asBulkhead(t, nil, append([]string{"doctor", "--model", "m"}, args...)...)
	if code != 0 || !strings.Contains(out, "✓ model m on") {
		t.Fatalf("doctor --model m: exit %d\n%s\n%s", code, out, errOut)
	}
}
