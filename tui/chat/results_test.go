package chat

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

func TestResultsCardFlattensTheJSON(t *testing.T) {
	t.Parallel()
	th := style.New(true)
	results := []hub.StepResult{
		{App: "a", Functionality: "x.y", Value: json.RawMessage(`{"z":{"b":1.50,"list":[1e3,"two"],"empty":{}},"s":"red \u001b[31mtext\u202e","ok":true,"n":null}`)},
		{App: "b", Functionality: "x.y", Error: "the service is down"},
	}
	out := resultsCard(th, results, 60)
	plain := ansi.Strip(out)
	for _, want := range []string{"z.b: 1.50", "z.list.0: 1e3", "z.list.1: two", "z.empty: {}", `s: red \x1b[31mtext\u202e`, "ok: true", "n: null", "▪ b · x.y", "✗ the service is down"} {
		if !strings.Contains(plain, want) {
			t.Errorf("card lacks %q:\n%s", want, plain)
		}
	}
	if strings.Contains(out, "\x1b[31mtext") {
		t.Error("an escape sequence from an app reached the terminal")
	}
	if !strings.Contains(out, th.Err.Render("✗ the service is down")) {
		t.Error("a failed step must be drawn in red")
	}
	if i, j := strings.Index(plain, "z.b"), strings.Index(plain, "ok: true"); i < 0 || j < i {
		t.Error("keys must keep the JSON's order")
	}
	for _, w := range []int{1, 8, 12, 30, 200} {
		for _, l := range strings.Split(resultsCard(th, results, w), "\n") {
			if lw := ansi.StringWidth(l); lw > max(w, 1) {
				t.Fatalf("at width %d a line is %d wide: %q", w, lw, l)
			}
		}
	}
}
