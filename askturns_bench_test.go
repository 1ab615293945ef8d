package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/bench/benchtest"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// BenchmarkAskTurns measures a person: whole `bulkhead ask` processes, as
// a user's shell runs them, isolated and in the --vanilla baseline, each
// mode on a real Ollama server of its own with the tiny model
// (OLLAMA_NUM_PARALLEL=3; BULKHEAD_BENCH_PARALLEL=1 for a server with one
// slot). Each request goes to the real server, which reads its prompt and
// writes as many tokens as the scripted reply has; the words are the
// script's (ollamatest's Dub): a plan of plain chat and an answer of ~48
// tokens, the memory upkeep's summary and entities, and for an app
// request the bench's reference plan and calls (benchtest.FakeSolver).
//
// A person pauses between turns: after every turn the benchmark waits
// until the mode's model server has had no request for longer than the
// serving process waits before its memory upkeep, plus two seconds — the
// upkeep (memory.every 4) and whatever it does after run before the next
// turn, as they do for a person who reads the answer.
//
// Each round, in each mode in turn: the serving process is stopped and the
// model unloaded from the server (turn 1 is a cold start of both; what
// the data directory learned of the server is kept, as a user's is); then
//
//   - chat: six turns `ask --json --stream` in one chat — turn 1 cold,
//     turn 5 the turn after an upkeep;
//   - apps: in the same chat, a one-app request (after a chat turn), a
//     two-app request (after an app request), a one-app request again,
//     then a chat turn again (its conversation read where it was kept);
//   - text: a chat of its own, five turns `ask --stream` in plain text on
//     a terminal (a pty), as a text user's chat is (turn 5 after its
//     upkeep).
//
// Every turn is reported on its own, as the median over the rounds of the
// isolated figure over the vanilla one (runs made side by side), with the
// range in the log: its first words (in plain text, its first visible character) and its
// end (the answer event; in plain text, the exit). First words count only
// from a part that is kept: a draft later withdrawn is not (in plain
// text, words the printer took back from the terminal). Model calls
// per turn are the requests the person waits for — a withdrawn draft and
// the one-token background calls (a seat, a warm) are counted apart.
//
// One first round warms the machine up and is not counted. The binary is
// built from this tree (give the go command its caches: the test's HOME
// is its own), or named by $BULKHEAD_BENCH_BIN:
//
//	GOCACHE=$(go env GOCACHE) GOMODCACHE=$(go env GOMODCACHE) BULKHEAD_OLLAMA_BIN=… go test -run XXX -bench AskTurns -benchtime 4x -count 1 -timeout 2h .
//
// $BULKHEAD_BENCH_TRACE names a folder that receives, per mode, the
// model server's debug log (which cache slot each request took, how much
// of its prompt it found there) and each turn's start and figures:
// turns.log.
func BenchmarkAskTurns(b *testing.B) {
	trace := os.Getenv("BULKHEAD_BENCH_TRACE")
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
	b.Setenv("BULKHEAD_SERVE_IDLE", "30m")
	shapes := benchtest.Shapes().Tasks
	oneApp, twoApps := shapes[1], shapes[2]
	script := personScript(benchtest.FakeSolver(benchtest.Shapes(), false), oneApp.Query, twoApps.Query)
	modes := []*paceMode{{name: "isolated"}, {name: "vanilla", flags: []string{"--vanilla"}}}
	for _, m := range modes {
		m.real = ollamatest.StartRealWith(b, ollamatest.RealOptions{Parallel: parallel, Tools: true, Params: map[string]any{"num_ctx": 8192}, Debug: trace != ""})
		if trace != "" {
			b.Cleanup(func() {
				if data, err := os.ReadFile(m.real.LogPath); err == nil {
					_ = os.WriteFile(filepath.Join(trace, m.name+"-ollama.log"), data, 0o644)
				}
			})
		}
		m.srv = ollamatest.NewScripted(b, script, "m")
		m.srv.Dub(m.real.Client, m.real.Model)
		m.data = filepath.Join(b.TempDir(), "data")
		m.cfg = filepath.Join(b.TempDir(), "config.yaml")
		if err := os.WriteFile(m.cfg, []byte("enable: [builtin]\nmemory:\n  every: 4\n"), 0o600); err != nil {
			b.Fatal(err)
		}
		stopServingAfter(b, []string{"--data-dir", m.data})
	}
	const warmup = 1
	var rows []string // the turns, in order
	b.ResetTimer()
	for round := range b.N + warmup {
		for _, m := range modes {
			if err := serve.Stop(m.data, 30*time.Second); err != nil {
				b.Fatal(err)
			}
			unload(b, m.real)
			figures := map[string]paceTurn{}
			ask := func(row, chat string, text bool, query string) string {
				args := append([]string{"ask", "--config", m.cfg, "--ollama-host", m.srv.Host(), "--model", "m", "--data-dir", m.data, "--on-prompt", "expected"}, m.flags...)
				if !text {
					args = append(args, "--json")
				}
				args = append(args, "--stream")
				if chat != "" {
					args = append(args, "--chat", chat)
				}
				args = append(args, fmt.Sprintf("Round %d, %s: %s", round+1, row, query))
				before := len(m.srv.Requests())
				if trace != "" {
					traceTurn(b, trace, fmt.Sprintf("%s round %d %s", m.name, round, row))
				}
				t := askOnce(b, bin, args)
				if text && chat == "" {
					// Plain text names no chat: the newest is this one.
					t.chat = newestChat(b, bin, m)
				}
				reqs := m.srv.Requests()[before:]
				for _, r := range reqs {
					if hub.IsWarm(&r) {
						t.background++
					} else {
						t.calls++
					}
				}
				if t.withdrawn {
					t.calls--
				}
				if trace != "" {
					traceTurn(b, trace, fmt.Sprintf("%s round %d %s: first %v, answer %v, exit %v, calls %d + %d background", m.name, round, row,
						t.first.Round(time.Millisecond), t.answer.Round(time.Millisecond), t.exit.Round(time.Millisecond), t.calls, t.background))
				}
				figures[row] = t
				if round == warmup && m == modes[0] {
					rows = append(rows, row)
				}
				// A person's pause: the background work runs now.
				b.StopTimer()
				if !m.srv.Quiet(upkeepQuiet, 3*time.Minute) {
					b.Fatalf("%s: the model server never went quiet after %s", m.name, row)
				}
				b.StartTimer()
				return t.chat
			}
			sea := "tell me something about the sea."
			chat := ask("chat 1 (cold)", "", false, sea)
			for turn := 2; turn <= 6; turn++ {
				row := fmt.Sprintf("chat %d", turn)
				if turn == 5 {
					row += " (after the upkeep)"
				}
				ask(row, chat, false, sea)
			}
			ask("one app, after a chat turn", chat, false, oneApp.Query)
			ask("two apps, after an app request", chat, false, twoApps.Query)
			ask("one app, after an app request", chat, false, oneApp.Query)
			ask("chat 7, after an app request", chat, false, sea)
			text := ask("text 1", "", true, sea)
			for turn := 2; turn <= 5; turn++ {
				row := fmt.Sprintf("text %d", turn)
				if turn == 5 {
					row += " (after the upkeep)"
				}
				ask(row, text, true, sea)
			}
			if round >= warmup {
				m.rounds = append(m.rounds, figures)
			}
		}
	}
	b.StopTimer()
	iso, van := modes[0].rounds, modes[1].rounds
	var summary strings.Builder
	ratio := func(row string, of func(paceTurn) time.Duration) (mid, lo, hi float64, is, vs float64) {
		var rs []float64
		var id, vd []time.Duration
		for i := range iso {
			rs = append(rs, float64(of(iso[i][row]))/float64(of(van[i][row])))
			id, vd = append(id, of(iso[i][row])), append(vd, of(van[i][row]))
		}
		slices.Sort(rs)
		return rs[len(rs)/2], rs[0], rs[len(rs)-1], median(id, nil), median(vd, nil)
	}
	calls := func(rounds []map[string]paceTurn, row string) string {
		var c, bg, w []int
		for _, f := range rounds {
			c, bg = append(c, f[row].calls), append(bg, f[row].background)
			if f[row].withdrawn {
				w = append(w, 1)
			}
		}
		slices.Sort(c)
		slices.Sort(bg)
		s := fmt.Sprint(c[len(c)/2])
		if len(w) > 0 {
			s += fmt.Sprintf(" +%d/%d withdrawn", len(w), len(rounds))
		}
		if bg[len(bg)/2] > 0 {
			s += fmt.Sprintf(" +%d bg", bg[len(bg)/2])
		}
		return s
	}
	fmt.Fprintf(&summary, "\n| turn | first words | ms (iso / van) | complete | ms (iso / van) | model calls (iso / van) |\n|---|---|---|---|---|---|")
	for k, row := range rows {
		fm, fl, fh, fi, fv := ratio(row, func(t paceTurn) time.Duration { return t.first })
		am, al, ah, ai, av := ratio(row, func(t paceTurn) time.Duration { return t.answer })
		fmt.Fprintf(&summary, "\n| %s | %.2f× (%.2f–%.2f) | %.0f / %.0f | %.2f× (%.2f–%.2f) | %.0f / %.0f | %s / %s |",
			row, fm, fl, fh, fi, fv, am, al, ah, ai, av, calls(iso, row), calls(van, row))
		b.ReportMetric(fm, fmt.Sprintf("t%02d-first-x", k+1))
		b.ReportMetric(am, fmt.Sprintf("t%02d-end-x", k+1))
	}
	for _, m := range modes {
		data, _ := os.ReadFile(filepath.Join(m.data, "servers.json"))
		fmt.Fprintf(&summary, "\n%s, the order learned (servers.json): %s", m.name, strings.Join(strings.Fields(string(data)), " "))
	}
	// Printed, not logged: a benchmark's log is cut after ten lines.
	fmt.Fprintf(os.Stderr, "AskTurns at a person's pace, %d slot(s), %d rounds (tNN in the metrics is the table's row):%s\n", parallel, len(iso), summary.String())
	b.ReportMetric(0, "ns/op")
}

// paceMode is one mode's server, data directory and figures.
type paceMode struct {
	name      string
	flags     []string
	real      *ollamatest.Real
	srv       *ollamatest.Scripted
	data, cfg string
	rounds    []map[string]paceTurn // per counted round, by row
}

// newestChat is the id of the chat of m's data directory used last.
func newestChat(b testing.TB, bin string, m *paceMode) string {
	b.Helper()
	out, err := exec.Command(bin, "chats", "list", "--json", "--config", m.cfg, "--data-dir", m.data).Output()
	if err != nil {
		b.Fatalf("chats list: %v", err)
	}
	var chats []struct{ ID string }
	if err := json.Unmarshal(out, &chats); err != nil || len(chats) == 0 {
		b.Fatalf("chats list: %v: %s", err, out)
	}
	return chats[0].ID
}

// unload has the real server drop the model, so that the next request
// loads it and reads its prompt cold, as after a reboot.
func unload(b testing.TB, r *ollamatest.Real) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.Client.Generate(ctx, &api.GenerateRequest{Model: r.Model, KeepAlive: &api.Duration{}}, func(api.GenerateResponse) error { return nil }); err != nil {
		b.Fatalf("unload the model: %v", err)
	}
	for ctx.Err() == nil {
		ps, err := r.Client.ListRunning(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(ps.Models) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("the model server never unloaded the model")
}

// personScript answers a person's chat (askTurnsScript) and their app
// requests (the bench's reference plans and calls: solver), each request
// by what it is about.
func personScript(solver ollamatest.Script, appQueries ...string) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		format := string(req.Format)
		if strings.Contains(format, `"summary"`) || strings.Contains(format, `"entities"`) {
			return askTurnsScript(req) // the upkeep's
		}
		// The request being answered: the last user message — in the
		// planner's prompt, which lists the chat's earlier requests, the
		// last of them.
		last := ""
		for _, m := range req.Messages {
			if m.Role == "user" {
				last = m.Content
			}
		}
		if len(req.Format) > 0 && strings.Contains(string(req.Format), `"steps"`) {
			if i := strings.LastIndex(last, "Request: "); i >= 0 {
				last = last[i:]
			}
		}
		// An app's spoke, a synthesis; the baseline's one model (the
		// monolith) is an app's only for an app request: its chat turn
		// is answered as the draft's is, with the same words.
		spoke := ollamatest.SpokeApp(req)
		app := spoke != "" && spoke != hub.MonolithApp || strings.Contains(last, "```json")
		for _, q := range appQueries {
			app = app || strings.Contains(last, q)
		}
		switch {
		case !app:
		case hub.IsTriage(req):
			return ollamatest.JSON("apps")
		default:
			return solver(req)
		}
		return askTurnsScript(req)
	}
}

// upkeepQuiet is how long a mode's model server must have had no request
// before the next turn: longer than the serving process waits after a
// turn before its upkeep starts (engine.MemoryDefaults.Quiet).
var upkeepQuiet = engine.MemoryDefaults.Quiet + 2*time.Second

// paceTurn is one ask process, timed from its start: its first words
// from a part that is kept (in plain text, its first byte), its answer
// event (in plain text, its exit), its exit; its model calls.
type paceTurn struct {
	chat                string
	first, answer, exit time.Duration
	withdrawn           bool // a draft came and was withdrawn
	calls, background   int
}

// askOnce runs one ask process and times it. A JSON client reads a
// pipe; a text client, a person's, reads a terminal (a pty, 120×40).
func askOnce(b testing.TB, bin string, args []string) (t paceTurn) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	var errOut strings.Builder
	cmd.Stderr = &errOut
	jsonOut := slices.Contains(args, "--json")
	var out io.Reader
	if jsonOut {
		pipe, err := cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		out = pipe
	} else {
		ptmx, tty, err := pty.Open()
		if err != nil {
			b.Fatal(err)
		}
		defer ptmx.Close()
		if err := pty.Setsize(ptmx, &pty.Winsize{Cols: 120, Rows: 40}); err != nil {
			b.Fatal(err)
		}
		cmd.Stdout = tty
		defer tty.Close()
		out = ptmx
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	r := bufio.NewReader(out)
	if !jsonOut {
		if f, ok := cmd.Stdout.(*os.File); ok {
			f.Close() // the child's; the terminal ends with it
		}
		t.first, t.withdrawn = firstWords(r, start)
	} else {
		var draft time.Duration // the first draft, while it is kept
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				var ev struct{ Type, Chat string }
				if json.Unmarshal(line, &ev) == nil {
					switch ev.Type {
					case "draft":
						if draft == 0 {
							draft = time.Since(start)
						}
					case "draft_withdrawn":
						draft, t.withdrawn = 0, true
					case "token":
						if t.first == 0 {
							t.first = time.Since(start)
						}
					case "answer":
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
		if draft != 0 {
			t.first = draft // kept: the answer began with it
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

// firstWords reads a terminal's output to its end and says when its
// first visible character came that was not taken back: the printer's
// own sequences (the rows it reserves for a draft, ESC 7, and a draft
// taken back, ESC 8 and an erase) are not words; after a take-back the
// first words are the answer's.
func firstWords(r *bufio.Reader, start time.Time) (first time.Duration, withdrawn bool) {
	for {
		c, err := r.ReadByte()
		if err != nil {
			return first, withdrawn
		}
		switch {
		case c == 0x1b:
			next, err := r.ReadByte()
			if err != nil {
				return first, withdrawn
			}
			switch next {
			case '8':
				first, withdrawn = 0, true
			case '[':
				for { // to the CSI's final byte
					f, err := r.ReadByte()
					if err != nil || f >= 0x40 && f <= 0x7e {
						break
					}
				}
			}
		case c == '\r' || c == '\n' || c == ' ':
		case first == 0:
			first = time.Since(start)
		}
	}
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
	case hub.IsTriage(req):
		return ollamatest.JSON("chat")
	case strings.Contains(format, `"entities"`):
		return ollamatest.JSON(map[string]any{"entities": []map[string]string{{"key": "topic", "value": "the sea"}}})
	case format != "":
		return ollamatest.JSON(map[string]any{})
	}
	return ollamatest.Pieces(ollamatest.Text("The sea covers most of the planet; its tides follow the moon, its deepest trench goes down eleven kilometres, and most of its life lives in the top two hundred metres, where the light reaches."))
}

// traceTurn appends a turn's start, or its figures, to dir/turns.log
// ($BULKHEAD_BENCH_TRACE), in the server log's time format.
func traceTurn(b testing.TB, dir, what string) {
	f, err := os.OpenFile(filepath.Join(dir, "turns.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	fmt.Fprintf(f, "%s %s\n", time.Now().Format("2006-01-02T15:04:05.000Z07:00"), what)
}
