package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/bench"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// BenchmarkChatTurn is a plain chat turn against a real Ollama with the
// tiny model — the same model for the hub and the spokes, the built-in
// apps installed — isolated and in the --vanilla baseline, one after the
// other in each round (run it with -count for alternating pairs):
//
//	BULKHEAD_OLLAMA_BIN=… go test ./bench -run XXX -bench ChatTurn -benchtime 4x -count 8 | benchstat -col /mode -
//
// Each run starts a chat with an untimed first turn; the timed turns are
// turns 2–5. Figures per turn: first-token-ms, the time to the first
// piece of the answer the turn keeps (the draft, when the plan is plain
// chat); plan-us/tok and answer-us/tok, the server's prompt reading time
// per prompt token of the planner's calls and of the answer's (a cached
// prefix reads in a fraction of the time; Ollama counts its tokens
// anyway); plain-turns, the share of turns whose plan was plain chat
// (the tiny model's plans are noise: most fall back to it); calls.
//
// The server runs with OLLAMA_NUM_PARALLEL=3 (BULKHEAD_BENCH_PARALLEL
// overrides it): a slot for the planner, one for the answer, one for the
// memory upkeep, so each keeps its prompt prefix cached.
func BenchmarkChatTurn(b *testing.B) {
	parallel := 3
	if v := getenvInt("BULKHEAD_BENCH_PARALLEL"); v > 0 {
		parallel = v
	}
	real := ollamatest.StartRealWith(b, ollamatest.RealOptions{Parallel: parallel, Tools: true,
		// A plan needs more than the default 24 tokens to finish (the
		// tiny model's are noise and rarely do); answers of 64 tokens.
		Params: map[string]any{"num_predict": 64, "num_ctx": 8192, "temperature": 1.0, "repeat_penalty": 1.8, "repeat_last_n": 64}})
	for _, mode := range []string{bench.ModeIsolated, bench.ModeVanilla} {
		b.Run("mode="+mode, func(b *testing.B) { chatTurns(b, real, mode == bench.ModeVanilla) })
	}
}

func chatTurns(b *testing.B, real *ollamatest.Real, vanilla bool) {
	dir := b.TempDir()
	cfg := config.Config{DataDir: filepath.Join(dir, "data"), Workspace: dir, Enable: []string{"builtin"},
		Ollama: config.Ollama{Host: real.Host, KeepAlive: time.Hour, NumCtx: 8192},
		Hub:    config.Owner{Model: real.Model, History: 8}, Spokes: config.Owner{Model: real.Model, History: 8},
		Draft: true, Memory: config.Memory{Enabled: true, Every: 4}}
	ctx := context.Background()
	e, err := engine.Open(ctx, cfg, engine.Options{Vanilla: vanilla, Prompter: permissions.Policy{Answer: permissions.AnswerDeny}})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	chat, err := e.Hub.NewChat(false)
	if err != nil {
		b.Fatal(err)
	}
	turn := func(q string) (first time.Duration, plan, answer time.Duration, planTok, answerTok, calls int, plain bool) {
		start := time.Now()
		var draftAt, tokenAt time.Time
		_, err := e.Hub.Ask(ctx, chat.ID, q, func(ev hub.Event) {
			switch ev.Kind {
			case hub.EventDraft:
				if draftAt.IsZero() {
					draftAt = time.Now()
				}
			case hub.EventDraftWithdrawn:
				draftAt = time.Time{}
			case hub.EventToken:
				if tokenAt.IsZero() {
					tokenAt = time.Now()
				}
			case hub.EventPlan:
				plan, planTok = ev.Usage.PromptDuration, ev.Usage.PromptTokens
				apps := ev.Plan.Apps()
				plain = len(apps) == 1 && apps[0] == hub.VanillaApp
			case hub.EventAnswer, hub.EventError:
				answer, answerTok, calls = ev.Usage.PromptDuration-plan, ev.Usage.PromptTokens-planTok, ev.Usage.Calls
			}
		})
		if err != nil {
			b.Logf("turn: %v", err)
		}
		at := tokenAt
		if !draftAt.IsZero() {
			at = draftAt
		}
		if !at.IsZero() {
			first = at.Sub(start)
		}
		return
	}
	turn("Hello! Who are you?") // turn 1, untimed: loads the model and fills the caches
	var first, plan, answer time.Duration
	var planTok, answerTok, calls, plain, timed int
	b.ResetTimer()
	for i := range b.N {
		f, p, a, pt, at, c, pl := turn(fmt.Sprintf("Tell me something about the sea, part %d.", i+2))
		if f > 0 {
			first += f
			timed++
		}
		plan, answer, planTok, answerTok, calls = plan+p, answer+a, planTok+pt, answerTok+at, calls+c
		if pl {
			plain++
		}
	}
	b.StopTimer()
	if timed > 0 {
		b.ReportMetric(float64(first.Microseconds())/1000/float64(timed), "first-token-ms")
	}
	if planTok > 0 {
		b.ReportMetric(float64(plan.Microseconds())/float64(planTok), "plan-us/tok")
	}
	if answerTok > 0 {
		b.ReportMetric(float64(answer.Microseconds())/float64(answerTok), "answer-us/tok")
	}
	b.ReportMetric(float64(plain)/float64(b.N), "plain-turns")
	b.ReportMetric(float64(planTok)/float64(b.N), "plan-tok")
	b.ReportMetric(float64(calls)/float64(b.N), "calls")
}

func getenvInt(k string) int {
	n, _ := strconv.Atoi(os.Getenv(k))
	return n
}
