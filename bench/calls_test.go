package bench_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/bench"
	"github.com/bulkhead-dev/bulkhead/bench/benchtest"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// Model calls per request in every plan shape, bulkhead against the
// --vanilla baseline, with a model that does each request right: at most
// vanilla + 1 without drafts. With drafts (hub.draft) a kept draft costs
// nothing more: chat is as many calls as without. An app request may pay
// a withdrawn draft (a call, if it had ended by the plan's kind) and,
// once the server is known to run both at once, the triage beside it
// (each task is a serving process of its own, whose planner's prompt is
// cold: see hub's coldBeside) — which of the two a task meets depends on
// when the probes learned the order, so the bound is the same for all:
// the calls the person waits for (a withdrawn draft's apart) at most one
// over those without drafts, and vanilla + 1. The table is in the log
// (docs/benchmarks.md quotes it): go test ./bench -run
// TestCallsPerPlanShape -v.
func TestCallsPerPlanShape(t *testing.T) {
	suite := benchtest.Shapes()
	calls := map[string]map[string]int{}
	withdrawn := map[string]bool{}
	for _, draft := range []bool{false, true} {
		srv := ollamatest.NewScripted(t, benchtest.FakeSolver(suite, false), "m")
		res, err := benchRun(t, srv, suite, draft)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range res {
			if !r.Completed {
				t.Fatalf("draft %v %s %s: not completed (%s %s): the counts would mean nothing", draft, r.Mode, r.Task, r.Failure, r.Error)
			}
			k := r.Mode
			if r.Mode == bench.ModeIsolated && draft {
				k = "isolated, drafts"
			}
			if calls[r.Task] == nil {
				calls[r.Task] = map[string]int{}
			}
			calls[r.Task][k] = r.Calls
			if draft && r.Mode == bench.ModeIsolated {
				withdrawn[r.Task] = r.Withdrawn
			}
		}
	}
	var b strings.Builder
	b.WriteString("| plan shape | calls, bulkhead (hub.draft off) | calls, bulkhead (drafts) | calls, --vanilla |\n|---|---|---|---|\n")
	for _, task := range suite.Tasks {
		c := calls[task.ID]
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", task.ID, c[bench.ModeIsolated], c["isolated, drafts"], c[bench.ModeVanilla])
		if c[bench.ModeIsolated] > c[bench.ModeVanilla]+1 {
			t.Errorf("%s: %d calls, vanilla %d: want at most vanilla + 1", task.ID, c[bench.ModeIsolated], c[bench.ModeVanilla])
		}
		waited := c["isolated, drafts"]
		if withdrawn[task.ID] {
			waited-- // at most: its call may have been cut before it ended
		}
		switch {
		case task.ID == "chat" && (withdrawn[task.ID] || waited > c[bench.ModeIsolated]):
			t.Errorf("chat: the draft must be the answer, at no extra call: %d calls over %d (withdrawn %v)", c["isolated, drafts"], c[bench.ModeIsolated], withdrawn[task.ID])
		case waited > c[bench.ModeIsolated]+1 || waited > c[bench.ModeVanilla]+1:
			t.Errorf("%s: drafts cost %d calls (withdrawn %v) over %d, vanilla %d", task.ID, c["isolated, drafts"], withdrawn[task.ID], c[bench.ModeIsolated], c[bench.ModeVanilla])
		}
	}
	t.Logf("calls per request:\n%s", b.String())
}

func benchRun(t *testing.T, srv *ollamatest.Scripted, suite bench.Suite, draft bool) ([]bench.Result, error) {
	return bench.Run(t.Context(), bench.Options{Config: config.Config{Ollama: config.Ollama{Host: srv.Host()}, Draft: draft},
		Models: []string{"m"}, Scratch: t.TempDir(), Policy: bench.PolicyOnce, NoInjections: true, Suite: &suite})
}

// The first words of a turn whose draft was kept are the draft's: a draft
// that ended before the plan (no answer token follows it) is still
// counted, and comes before the turn's end.
func TestAKeptDraftsFirstWordsAreCounted(t *testing.T) {
	suite := benchtest.Shapes()
	suite.Tasks = suite.Tasks[:1] // chat
	plan := `{"kind":"chat","steps":[{"id":"s1","functionality":"chat","query":"q","depends_on":[]}]}`
	srv := ollamatest.NewScripted(t, func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			// Slow: its first piece lets the draft start (the planner
			// goes first on a server not yet known); the kind comes
			// after the short draft has ended.
			return ollamatest.Reply{Chunks: []string{plan[:4], plan[4:]}, Delay: 300 * time.Millisecond}
		}
		return ollamatest.Text("Hello there.")
	}, "m")
	res, err := benchRun(t, srv, suite, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.FirstTokenMS < 0 || r.FirstTokenMS >= r.TotalMS {
			t.Errorf("%s: the first words must be counted, before the end: first %.0f ms, total %.0f ms", r.Mode, r.FirstTokenMS, r.TotalMS)
		}
	}
}
