package bench_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// BenchmarkChatTurn is a plain chat turn against a real Ollama with the
// tiny model — the same model for the hub and the spokes, the built-in
// apps installed — isolated and in the --vanilla baseline, alternating:
// each round is a chat isolated, then one in the baseline, in the same
// process and on the same server (with -count 8, eight pairs; ns/op is
// the round's time, first turns included, and means nothing alone).
//
//	BULKHEAD_OLLAMA_BIN=… go test ./bench -run XXX -bench ChatTurn -benchtime 4x -count 8 | benchstat -
//
// Both chats start with an untimed first turn, so with -benchtime 4x the
// timed turns are turns 2–5. Per turn: first-token-ms (isolated, vanilla,
// and their ratio), the time to the first piece of the answer the turn
// keeps (the draft, when the plan is plain chat); plan-us/tok, the
// server's prompt reading time per prompt token of the planner's calls,
// against plan-us/tok-turn1, the first turn's, read cold (a cached prefix
// reads in a fraction of the time; Ollama counts its tokens anyway), and
// answer-us/tok of each; plain-turns, the share of isolated turns whose
// plan was plain chat, and fallbacks, of those whose planner failed twice
// (the tiny model's plans are noise, cut at 64 tokens: they fall back to
// plain chat, a retry each); calls of each.
//
// The server runs with OLLAMA_NUM_PARALLEL=3 (BULKHEAD_BENCH_PARALLEL
// overrides it): the planner and the draft each keep a slot, and so a
// prompt prefix, of their own. BULKHEAD_BENCH_DRAFT=0 runs without drafts
// (hub.draft false), for the figures before them.
func BenchmarkChatTurn(b *testing.B) {
	parallel := 3
	if v := getenvInt("BULKHEAD_BENCH_PARALLEL"); v > 0 {
		parallel = v
	}
	real := ollamatest.StartRealWith(b, ollamatest.RealOptions{Parallel: parallel, Tools: true,
		// Answers of 64 tokens; plans are cut there too (noise rarely
		// closes its JSON), retried and fall back: the figures count them.
		Params: map[string]any{"num_predict": 64, "num_ctx": 8192, "temperature": 1.0, "repeat_penalty": 1.8, "repeat_last_n": 64}})
	// One chat of each, one after the other: each mode's turns find the
	// server's caches as that mode leaves them, as a user's would.
	iso, van := newChatRun(b, real, false), newChatRun(b, real, true)
	b.ResetTimer()
	first := iso.turn(b, 1)
	coldPlan := ratePer(first.plan, first.planTok)
	for i := range b.N {
		iso.add(iso.turn(b, i+2))
	}
	van.turn(b, 1)
	for i := range b.N {
		van.add(van.turn(b, i+2))
	}
	b.StopTimer()
	fi, fv := iso.meanFirst(), van.meanFirst()
	b.ReportMetric(fi, "first-token-ms/isolated")
	b.ReportMetric(fv, "first-token-ms/vanilla")
	if fv > 0 {
		b.ReportMetric(fi/fv, "first-token-ratio")
	}
	b.ReportMetric(ratePer(iso.sum.plan, iso.sum.planTok), "plan-us/tok")
	b.ReportMetric(coldPlan, "plan-us/tok-turn1")
	b.ReportMetric(ratePer(iso.sum.answer, iso.sum.answerTok), "answer-us/tok/isolated")
	b.ReportMetric(ratePer(van.sum.answer, van.sum.answerTok), "answer-us/tok/vanilla")
	b.ReportMetric(float64(iso.sum.plain)/float64(b.N), "plain-turns")
	b.ReportMetric(float64(iso.sum.fallback)/float64(b.N), "fallbacks")
	b.ReportMetric(float64(iso.sum.calls)/float64(b.N), "calls/isolated")
	b.ReportMetric(float64(van.sum.calls)/float64(b.N), "calls/vanilla")
}

func ratePer(d time.Duration, n int) float64 {
	if n == 0 {
		return 0
	}
	return float64(d.Microseconds()) / float64(n)
}

// chatRun is one chat on its own engine.
type chatRun struct {
	e    *engine.Engine
	chat string
	sum  turnFigures
	n    int // turns with a first token
}

type turnFigures struct {
	first, plan, answer       time.Duration
	planTok, answerTok, calls int
	plain, fallback           int
}

func newChatRun(b *testing.B, real *ollamatest.Real, vanilla bool) *chatRun {
	dir := b.TempDir()
	cfg := config.Config{DataDir: filepath.Join(dir, "data"), Workspace: dir, Enable: []string{"builtin"},
		Ollama: config.Ollama{Host: real.Host, KeepAlive: time.Hour, NumCtx: 8192},
		Hub:    config.Owner{Model: real.Model, History: 8}, Spokes: config.Owner{Model: real.Model, History: 8},
		Draft: os.Getenv("BULKHEAD_BENCH_DRAFT") != "0", Memory: config.Memory{Enabled: true, Every: 4}}
	e, err := engine.Open(context.Background(), cfg, engine.Options{Vanilla: vanilla, Prompter: permissions.Policy{Answer: permissions.AnswerDeny}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	chat, err := e.Hub.NewChat(false)
	if err != nil {
		b.Fatal(err)
	}
	return &chatRun{e: e, chat: chat.ID}
}

func (c *chatRun) add(f turnFigures) {
	if f.first > 0 {
		c.n++
	}
	c.sum.first += f.first
	c.sum.plan += f.plan
	c.sum.answer += f.answer
	c.sum.planTok += f.planTok
	c.sum.answerTok += f.answerTok
	c.sum.calls += f.calls
	c.sum.plain += f.plain
	c.sum.fallback += f.fallback
}

func (c *chatRun) meanFirst() float64 {
	if c.n == 0 {
		return 0
	}
	return float64(c.sum.first.Microseconds()) / 1000 / float64(c.n)
}

// turn asks turn n of the chat and measures it.
func (c *chatRun) turn(b *testing.B, n int) (f turnFigures) {
	start := time.Now()
	var draftAt, tokenAt time.Time
	_, err := c.e.Hub.Ask(context.Background(), c.chat, fmt.Sprintf("Tell me something about the sea, part %d.", n), func(ev hub.Event) {
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
			f.plan, f.planTok = ev.Usage.PromptDuration, ev.Usage.PromptTokens
			if apps := ev.Plan.Apps(); len(apps) == 1 && apps[0] == hub.VanillaApp {
				f.plain = 1
			}
			if ev.Plan.Fallback {
				f.fallback = 1
			}
		case hub.EventAnswer, hub.EventError:
			f.answer, f.answerTok, f.calls = ev.Usage.PromptDuration-f.plan, ev.Usage.PromptTokens-f.planTok, ev.Usage.Calls
		}
	})
	if err != nil {
		b.Logf("turn %d: %v", n, err)
	}
	at := tokenAt
	if !draftAt.IsZero() {
		at = draftAt
	}
	if !at.IsZero() {
		f.first = at.Sub(start)
	}
	return f
}

func getenvInt(k string) int {
	n, _ := strconv.Atoi(os.Getenv(k))
	return n
}
