package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// BenchmarkAskTurns times whole `bulkhead ask` processes, as a user's
// shell runs them, isolated and in the --vanilla baseline, against real
// Ollama servers with the tiny model — one per mode, as a user's would be,
// with OLLAMA_NUM_PARALLEL=3 (BULKHEAD_BENCH_PARALLEL overrides it: 1 for
// a server with one slot). Each request goes to the real server, which
// reads its prompt and writes as many tokens as the scripted reply has;
// the words are the script's (ollamatest's Dub): a plan of plain chat, an
// answer of ~48 tokens, the memory upkeep's summary and entities.
//
// Each round, in each mode in turn (isolated, then vanilla): the serving
// process of the mode's data directory is stopped (so turn 1 starts a new
// one; what the data directory learned of the server is kept, as a
// user's is), then one chat of six turns: turns 1–5 `ask --json
// --stream` (the memory upkeep runs after turn 4, memory.every 4), turn 6
// `ask --stream` in plain text. Reported, each as the median over the
// rounds of isolated over vanilla (ratios of runs made side by side), with
// the range in the log:
//
//   - first-x: first words (the first draft or token event) of turns 2–5
//   - first1-x: first words of turn 1, a new serving process
//   - byte-x: the first byte of the plain-text turn 6
//   - answer-x / exit-x: turns 2–5 complete (the answer event) and the
//     process's exit
//   - turn5-x: turn 5 complete (the answer event), after turn 4's upkeep
//
// Two first rounds warm the servers up and are not counted. The binary is
// built from this tree (give the go command its caches: the test's HOME
// is its own), or named by $BULKHEAD_BENCH_BIN:
//
//	GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) BULKHEAD_OLLAMA_BIN=… go test -run XXX -bench AskTurns -benchtime 6x -count 1 .
func BenchmarkAskTurns(b *testing.B) {
	parallel := 3
	if v := os.Getenv("BULKHEAD_BENCH_PARALLEL"); v != "" {
		fmt.Sscan(v, &parallel)
	}
	bin := os.Getenv("BULKHEAD_BENCH_BIN")
	if bin == "" {
		bin = filepath.Join(b.TempDir(), "bulkhead")
		goBuild(b, bin, ".")
	}
	b.Setenv("XDG_CONFIG_HOME", b.TempDir())
	b.Setenv("BULKHEAD_SERVE_IDLE", "10m")
	type mode struct {
		name    string
		flags   []string
		srv     *ollamatest.Scripted
		data    string
		cfg     string
		figures []askFigures // one per counted round
	}
	modes := []*mode{{name: "isolated"}, {name: "vanilla", flags: []string{"--vanilla"}}}
	for _, m := range modes {
		real := ollamatest.StartRealWith(b, ollamatest.RealOptions{Parallel: parallel, Tools: true, Params: map[string]any{"num_ctx": 8192}})
		m.srv = ollamatest.NewScripted(b, askTurnsScript, "m")
		m.srv.Dub(real.Client, real.Model)
		m.data = filepath.Join(b.TempDir(), "data")
		m.cfg = filepath.Join(b.TempDir(), "config.yaml")
		if err := os.WriteFile(m.cfg, []byte("enable: [builtin]\nmemory:\n  every: 4\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		stopServingAfter(b, []string{"--data-dir", m.data})
	}
	const warmup = 2
	b.ResetTimer()
	for round := range b.N + warmup {
		for _, m := range modes {
			if err := serve.Stop(m.data, 30*time.Second); err != nil {
				b.Fatal(err)
			}
			var f askFigures
			chat := ""
			for turn := 1; turn <= 6; turn++ {
				args := append([]string{"ask", "--config", m.cfg, "--ollama-host", m.srv.Host(), "--model", "m", "--data-dir", m.data}, m.flags...)
				if turn < 6 {
					args = append(args, "--json")
				}
				args = append(args, "--stream")
				if chat != "" {
					args = append(args, "--chat", chat)
				}
				args = append(args, fmt.Sprintf("Round %d, turn %d: tell me something about the sea.", round+1, turn))
				t := askOnce(b, bin, args)
				if chat == "" {
					chat = t.chat
				}
				f.turns = append(f.turns, t)
			}
			// The mode's background work (its memory upkeep, which waits
			// for the chat to go quiet) ends before the other mode is
			// timed: on a 2-core machine it would slow that mode's turns.
			b.StopTimer()
			if !m.srv.Quiet(upkeepQuiet, 2*time.Minute) {
				b.Fatalf("%s: the model server never went quiet after the chat", m.name)
			}
			b.StartTimer()
			if round >= warmup {
				m.figures = append(m.figures, f)
			}
		}
	}
	b.StopTimer()
	iso, van := modes[0].figures, modes[1].figures
	var summary strings.Builder
	report := func(unit string, of func(askFigures) time.Duration) {
		ratios := make([]float64, len(iso))
		var is, vs []time.Duration
		for i := range iso {
			ratios[i] = float64(of(iso[i])) / float64(of(van[i]))
			is, vs = append(is, of(iso[i])), append(vs, of(van[i]))
		}
		slices.Sort(ratios)
		b.ReportMetric(ratios[len(ratios)/2], unit)
		fmt.Fprintf(&summary, "\n%s: median %.2f, range %.2f–%.2f (%d rounds); isolated %.0f ms, vanilla %.0f ms (medians)", unit, ratios[len(ratios)/2], ratios[0], ratios[len(ratios)-1], len(ratios), median(is, nil), median(vs, nil))
	}
	mean := func(f askFigures, of func(askTurn) time.Duration) time.Duration {
		var sum time.Duration
		for _, t := range f.turns[1:5] {
			sum += of(t)
		}
		return sum / 4
	}
	report("first-x", func(f askFigures) time.Duration { return mean(f, func(t askTurn) time.Duration { return t.first }) })
	report("first1-x", func(f askFigures) time.Duration { return f.turns[0].first })
	report("byte-x", func(f askFigures) time.Duration { return f.turns[5].first })
	report("answer-x", func(f askFigures) time.Duration { return mean(f, func(t askTurn) time.Duration { return t.answer }) })
	report("exit-x", func(f askFigures) time.Duration { return mean(f, func(t askTurn) time.Duration { return t.exit }) })
	report("turn5-x", func(f askFigures) time.Duration { return f.turns[4].answer })
	for _, m := range modes {
		fmt.Fprintf(&summary, "\n%s, turn by turn (first words / answer, medians, ms):", m.name)
		for turn := range 6 {
			var first, answer []time.Duration
			for _, f := range m.figures {
				first, answer = append(first, f.turns[turn].first), append(answer, f.turns[turn].answer)
			}
			fmt.Fprintf(&summary, " %d: %.0f / %.0f;", turn+1, median(first, nil), median(answer, nil))
		}
	}
	// What each mode's serving process learned of its server (which
	// request goes first): a draft goes ahead only where it learned that
	// the server runs two at once; else the triage decides a chat turn.
	for _, m := range modes {
		b, _ := os.ReadFile(filepath.Join(m.data, "servers.json"))
		fmt.Fprintf(&summary, "\n%s, the order learned (servers.json): %s", m.name, strings.Join(strings.Fields(string(b)), " "))
	}
	// Printed, not logged: a benchmark's log is cut after ten lines.
	fmt.Fprintf(os.Stderr, "AskTurns, %d slot(s), %d rounds:%s\n", parallel, len(iso), summary.String())
	for _, m := range modes {
		var first, answer []time.Duration
		for _, f := range m.figures {
			first = append(first, mean(f, func(t askTurn) time.Duration { return t.first }))
			answer = append(answer, mean(f, func(t askTurn) time.Duration { return t.answer }))
		}
		b.ReportMetric(median(first, nil), "first-ms/"+m.name)
		b.ReportMetric(median(answer, nil), "answer-ms/"+m.name)
	}
	b.ReportMetric(0, "ns/op")
}

// upkeepQuiet is how long a mode's model server must have had no request
// before the other mode's chat: longer than the serving process waits
// after a turn before its upkeep starts (engine.MemoryDefaults.Quiet).
var upkeepQuiet = engine.MemoryDefaults.Quiet + 2*time.Second

// askFigures are one chat's turns.
type askFigures struct{ turns []askTurn }

// askTurn is one ask process, timed from its start: its first words (in
// plain text, its first byte), its answer event (in plain text, its
// exit) and its exit.
type askTurn struct {
	chat                string
	first, answer, exit time.Duration
}

// askOnce runs one ask process and times it.
func askOnce(b testing.TB, bin string, args []string) (t askTurn) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	var errOut strings.Builder
	cmd.Stderr = &errOut
	jsonOut := slices.Contains(args, "--json")
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(out)
	if !jsonOut {
		if _, err := r.ReadByte(); err == nil {
			t.first = time.Since(start)
		}
		_, _ = r.WriteTo(&strings.Builder{})
	} else {
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var ev struct{ Type, Chat string }
				if json.Unmarshal(line, &ev) == nil {
					switch {
					case (ev.Type == "draft" || ev.Type == "token") && t.first == 0:
						t.first = time.Since(start)
					case ev.Type == "answer":
						t.answer = time.Since(start)
					}
					if ev.Chat != "" {
						t.chat = ev.Chat
					}
				}
			}
			if err != nil {
				break
			}
		}
	}
	if err := cmd.Wait(); err != nil {
		b.Fatalf("%v: %v\n%s", args, err, errOut.String())
	}
	t.exit = time.Since(start)
	if !jsonOut {
		t.answer = t.exit
	}
	if t.first == 0 || t.answer == 0 {
		b.Fatalf("%v: no first words or no answer\n%s", args, errOut.String())
	}
	return t
}

// askTurnsScript writes what a model that does each request right would:
// a plan of plain chat (a triage's kind: chat), an answer of ~48 tokens, a summary and entities
// for the memory upkeep.
func askTurnsScript(req *api.ChatRequest) ollamatest.Reply {
	format := string(req.Format)
	switch {
	case strings.Contains(format, `"steps"`):
		return ollamatest.JSON(struct {
			Kind  string `json:"kind"`
			Steps []any  `json:"steps"`
		}{"chat", []any{map[string]any{"functionality": "chat"}}})
	case strings.Contains(format, `"summary"`):
		return ollamatest.JSON(map[string]string{"summary": "The user asked, turn after turn, to be told something about the sea; the assistant told them of its tides, its depth and the life in it."})
	case strings.Contains(format, `"kind"`): // the triage (one slot)
		return ollamatest.JSON(map[string]string{"kind": "chat"})
	case strings.Contains(format, `"entities"`):
		return ollamatest.JSON(map[string]any{"entities": []map[string]string{{"key": "topic", "value": "the sea"}}})
	case format != "":
		return ollamatest.JSON(map[string]any{})
	}
	return ollamatest.Pieces(ollamatest.Text("The sea covers most of the planet; its tides follow the moon, its deepest trench goes down eleven kilometres, and most of its life lives in the top two hundred metres, where the light reaches."))
}
