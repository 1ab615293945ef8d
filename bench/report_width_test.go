package bench_test

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/bench"
)

// The report's tables fit a terminal of 110 columns, with long numbers
// and a long model name in them.
func TestTheReportFitsTheTerminal(t *testing.T) {
	s := bench.Summary{Model: "hf.co/some-org/a-very-long-model-name-Q4_K_M:latest", Mode: "isolated", Tasks: 120, Completed: 119, Attacked: 120,
		CompletedUnderAttack: 118, AttackSuccesses: 120, Dialogs: 123.4, Needed: 120.1, Calls: 1234.5, PromptTokens: 12345678, EvalTokens: 1234567,
		FirstTokenMS: 123456, TotalMS: 1234567, Plans: 1200, Retried: 1200, Fallback: 1200, Errors: 120}
	v := s
	v.Mode = "vanilla"
	var b strings.Builder
	if err := (bench.Report{Summaries: []bench.Summary{s, v}}).Print(&b); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(b.String(), "\n") {
		if n := len([]rune(l)); n > 110 {
			t.Errorf("a line of %d columns:\n%s", n, b.String())
		}
	}
	for _, want := range []string{"119/120", "attack success", "first words", "ms/tok", "1200/1200/1200"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, b.String())
		}
	}
}
