package bench_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/bench"
	"github.com/bulkhead-dev/bulkhead/bench/benchtest"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// pieces streams every answer of script in pieces of about a token (four
// characters), so that a slot model's decode time per piece is a decode
// time per token.
func pieces(script ollamatest.Script) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply { return ollamatest.Pieces(script(req)) }
}

// BenchmarkShapes runs each plan shape — plain chat, one app, two
// functions, one function on two apps, two steps one after the other —
// isolated and in the --vanilla baseline, one after the other in each
// round, each mode on a scripted server of its own, as a user's would be,
// that models Ollama's as bulkhead starts it (SlotModel): three slots,
// a request taking the free slot whose cached prompt shares the longest
// prefix with it; 0.5 ms to read each uncached prompt token (the tools a
// request offers are part of its prompt, as a template renders them),
// 10 ms to write each token of an answer. The model does each request
// right (the reference plan and calls). Each round is a new request (its
// words differ) in a fresh data directory, as bench's runs are, but for
// what is learned of the server (which request goes first), kept as a
// user's data directory keeps it; two first rounds warm the servers up
// and are not counted. Reported: total-x and first-x, the isolated turn's
// time to its end and to its first words over the baseline's; calls-x,
// its model calls over the baseline's.
//
//	go test ./bench -run XXX -bench Shapes -benchtime 4x -count 3 | benchstat -
func BenchmarkShapes(b *testing.B) {
	suite := benchtest.Shapes()
	for _, task := range suite.Tasks {
		b.Run(task.ID, func(b *testing.B) { shape(b, suite, task) })
	}
}

// BenchmarkShapesReal is BenchmarkShapes on real Ollama servers with the
// tiny model, one per mode (OLLAMA_NUM_PARALLEL=3, as bulkhead starts
// one): each request goes to the real server, which reads its prompt and
// writes as many tokens as the reference solution's reply has, and the
// words sent back are the solution's (ollamatest's Dub) — the real
// server's time, a correct plan.
//
//	BULKHEAD_OLLAMA_BIN=… go test ./bench -run XXX -bench ShapesReal -benchtime 4x -count 3 | benchstat -
func BenchmarkShapesReal(b *testing.B) {
	suite := benchtest.Shapes()
	for _, task := range suite.Tasks {
		b.Run(task.ID, func(b *testing.B) { shapeOn(b, suite, task, realServer) })
	}
}

// realServer is a scripted server dubbed over a real one of its own.
func realServer(b *testing.B, suite bench.Suite) *ollamatest.Scripted {
	real := ollamatest.StartRealWith(b, ollamatest.RealOptions{Parallel: 3, Tools: true, Params: map[string]any{"num_ctx": 8192}})
	srv := ollamatest.NewScripted(b, benchtest.FakeSolver(suite, false), "m")
	srv.Dub(real.Client, real.Model)
	return srv
}

// slottedServer is a scripted server with Ollama's slots modelled.
func slottedServer(b *testing.B, suite bench.Suite) *ollamatest.Scripted {
	srv := ollamatest.NewScripted(b, pieces(benchtest.FakeSolver(suite, false)), "m")
	srv.Slotted(ollamatest.SlotModel{Slots: 3, Prefill: 500 * time.Microsecond, Decode: 10 * time.Millisecond})
	return srv
}

func shape(b *testing.B, suite bench.Suite, task bench.Task) { shapeOn(b, suite, task, slottedServer) }

func shapeOn(b *testing.B, suite bench.Suite, task bench.Task, server func(*testing.B, bench.Suite) *ollamatest.Scripted) {
	servers := map[string]*ollamatest.Scripted{bench.ModeIsolated: server(b, suite), bench.ModeVanilla: server(b, suite)}
	one := suite
	type sum struct{ total, first, calls float64 }
	var iso, van sum
	// What is learned of the server is kept across the rounds,
	// as a user's data directory keeps it across bulkheads.
	order := hub.OpenServerOrder("")
	// The first rounds warm the servers up and are not counted: what comes
	// before a request cached, the order learned (in round 0) and its
	// first turn in that order (round 1: the draft, sent first now, takes
	// the slot the planner used, as it does once per server). The first
	// turns of a new server are a measure of their own (docs/benchmarks.md).
	const warmup = 2
	for round := range b.N + warmup {
		if round == warmup {
			iso, van = sum{}, sum{}
			b.ResetTimer()
		}
		// Each round a new request (its words differ from the first): the
		// server has cached what comes before them.
		one.Tasks = []bench.Task{task}
		one.Tasks[0].Query = fmt.Sprintf("Request %d: %s", round+1, task.Query)
		for _, mode := range []string{bench.ModeIsolated, bench.ModeVanilla} {
			res, err := bench.Run(b.Context(), bench.Options{Config: config.Config{Ollama: config.Ollama{Host: servers[mode].Host()}, Draft: true},
				Models: []string{"m"}, Modes: []string{mode}, Scratch: b.TempDir(), Policy: bench.PolicyOnce, NoInjections: true, Suite: &one, Order: order})
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range res {
				if !r.Completed {
					b.Fatalf("%s %s: not completed (%s %s): the times would mean nothing", r.Mode, r.Task, r.Failure, r.Error)
				}
				s := &iso
				if r.Mode == bench.ModeVanilla {
					s = &van
				}
				s.total += r.TotalMS
				s.first += r.FirstTokenMS
				s.calls += float64(r.Calls)
			}
		}
	}
	b.ReportMetric(iso.total/van.total, "total-x")
	b.ReportMetric(iso.first/van.first, "first-x")
	b.ReportMetric(iso.calls/van.calls, "calls-x")
}
