package serve_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/ollama/ollama/api"
)

// Two sessions of one serving process on two Ollama hosts, the first —
// the serving process's own — unreachable from its start: the first is
// told so, and the second is told nothing of it; its turns, its model
// list, its /model and its chat's memory upkeep all go to its own host.
func TestEachSessionHasItsOwnOllamaHost(t *testing.T) {
	// Nothing answers at the process's host, and no `ollama serve` can be
	// started for it (no PATH): its start failed, as a user's did.
	t.Setenv("PATH", "/nonexistent")
	down := "http://127.0.0.1:1"
	up := ollamatest.NewScripted(t, ollamatest.Gullible(), "m", "m2")
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Ollama: config.Ollama{Host: down}, Enable: []string{"clock"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}, Memory: config.Memory{Enabled: true}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{StartOllama: true})
	if err != nil {
		t.Fatal(err)
	}
	var unreachable *llm.UnreachableError
	if !errors.As(eng.OllamaErr, &unreachable) {
		t.Fatalf("the process's start: %v, want its host unreachable", eng.OllamaErr)
	}
	serveEngine(t, eng, cfg.DataDir, "fp")

	first := connectAs(t, cfg, cfg.Workspace, cfg.Enable, engine.Models{Hub: "m", Spoke: "m", Host: down}, nil)
	if err := first.OllamaErr(); !errors.As(err, &unreachable) || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Fatalf("the first session's Ollama: %v, want its host unreachable", err)
	}
	second := connectAs(t, cfg, cfg.Workspace, cfg.Enable, engine.Models{Hub: "m", Spoke: "m", Host: up.Host()}, nil)
	if err := second.OllamaErr(); err != nil {
		t.Fatalf("the second session, on a host that answers, is told: %v", err)
	}

	chat, err := second.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	if turn, err := second.Ask(context.Background(), chat.ID, "hello there", nil); err != nil || turn.Answer == "" {
		t.Fatalf("the second session's turn: %q %v", turn.Answer, err)
	}
	models, err := second.Installed(context.Background())
	if err != nil || len(models) != 2 {
		t.Fatalf("the second session's models: %v %v, want its host's two", models, err)
	}
	// /model keeps the session's host.
	if err := second.SetModel(context.Background(), "m2"); err != nil {
		t.Fatal(err)
	}
	before := len(up.Requests())
	if turn, err := second.Ask(context.Background(), chat.ID, "and again", nil); err != nil || turn.Answer == "" {
		t.Fatalf("the second session's turn after /model: %q %v", turn.Answer, err)
	}
	asked := up.Requests()[before:]
	if len(asked) == 0 {
		t.Fatal("the turn after /model did not reach the session's host")
	}
	for _, r := range asked {
		if !strings.HasPrefix(r.Model, "m2") {
			t.Errorf("a call after /model went to %q, want m2", r.Model)
		}
	}
	// The memory upkeep of the chat goes where its turns went.
	if err := second.WaitMemory(); err != nil {
		t.Fatal(err)
	}
	summaries := 0
	for _, r := range up.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, hub.SummaryMarker) {
				summaries++
				break
			}
		}
	}
	if summaries == 0 {
		t.Error("the upkeep of the second session's chat did not reach its host")
	}

	// A chat opened is read ahead (chat.warm) on the session's host too.
	before = len(up.Requests())
	if err := second.Warm(chat.ID); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if slices.ContainsFunc(up.Requests()[before:], func(r api.ChatRequest) bool { return hub.IsWarm(&r) && strings.HasPrefix(r.Model, "m2") }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the chat opened was not read ahead on the session's host")
		}
	}

	// The first session's turn fails with its own host's error, as
	// before the second came.
	chat1, err := first.NewChat(false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Ask(context.Background(), chat1.ID, "hello", nil); !errors.As(err, &unreachable) {
		t.Errorf("the first session's turn: %v, want its host unreachable", err)
	}
}
