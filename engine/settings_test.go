package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// Apply: a session that starts after a config change gets a profile built
// with it, one open before keeps its own; a change whose rules are not
// valid changes nothing; what only a new process takes stays; calls of a
// session on another Ollama host go there, the process's stay on its own.
func TestApplyReachesSessionsThatStartAfter(t *testing.T) {
	t.Parallel()
	answer := func(name string) ollamatest.Script {
		return ollamatest.Planned(switchPlan, func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("from " + name) })
	}
	home := ollamatest.NewScripted(t, answer("home"), "m")
	away := ollamatest.NewScripted(t, answer("away"), "m")
	cfg := config.Config{DataDir: t.TempDir(), CacheDir: t.TempDir(), Ollama: config.Ollama{Host: home.Host()},
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}, Limits: config.Limits{LogMB: 10}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	spec := engine.ProfileSpec{Workspace: t.TempDir(), Enable: []string{"clock"}}
	before, err := eng.Profile(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Release(before)

	bad := cfg
	bad.Rules = []config.Rule{{Effect: "allow", Kind: "*"}}
	if err := eng.Apply(bad); !errors.Is(err, config.ErrInvalid) {
		t.Fatalf("rules that allow everything irreversible: %v", err)
	}
	if p, _ := eng.Profile(spec); p != before {
		t.Fatal("a change that was refused started a new profile")
	} else {
		eng.Release(p)
	}

	next := cfg
	next.Hub.History = 2
	next.CacheDir = t.TempDir()
	next.Limits.LogMB = 99
	if err := eng.Apply(next); err != nil {
		t.Fatal(err)
	}
	after, err := eng.Profile(spec)
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Release(after)
	if after == before {
		t.Fatal("a session after the change shares the profile built before it")
	}
	again, _ := eng.Profile(spec)
	if again != after {
		t.Fatal("two sessions after the change do not share a profile")
	}
	eng.Release(again)
	if got := engine.Applied(cfg, next); got.CacheDir != cfg.CacheDir || got.Limits.LogMB != 10 || got.Hub.History != 2 {
		t.Fatalf("Applied = cache %q, log_mb %d, history %d", got.CacheDir, got.Limits.LogMB, got.Hub.History)
	}

	ctx := context.Background()
	chat, _ := after.Hub.NewChat(false)
	turn, err := after.Hub.Ask(engine.WithModels(ctx, engine.Models{Host: away.Host()}), chat.ID, "hi", nil)
	if err != nil || turn.Answer != "from away" {
		t.Fatalf("a session on another host: %q %v", turn.Answer, err)
	}
	turn, err = after.Hub.Ask(ctx, chat.ID, "hi again", nil)
	if err != nil || turn.Answer != "from home" {
		t.Fatalf("the process's own host: %q %v", turn.Answer, err)
	}
}

// An error of a session's model names that model, not the process's.
func TestErrorsNameTheSessionsModel(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Planned(switchPlan, func(*api.ChatRequest) ollamatest.Reply { return ollamatest.Text("x") }), "m")
	cfg := config.Config{DataDir: t.TempDir(), Ollama: config.Ollama{Host: srv.Host()},
		Hub: config.Owner{Model: "m", History: 4}, Spokes: config.Owner{Model: "m", History: 4}}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	chat, _ := eng.Hub.NewChat(false)
	_, err = eng.Hub.Ask(engine.WithModels(context.Background(), engine.Models{Hub: "tiny", Spoke: "tiny"}), chat.ID, "hi", nil)
	if err == nil || !strings.Contains(err.Error(), "tiny") || strings.Contains(err.Error(), "with m:") {
		t.Fatalf("the error of the session's model: %v", err)
	}
}
