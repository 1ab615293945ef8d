package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// The ride comparison runs both apps and shows their typed results in a
// card, the synthesis below it.
func TestRideComparisonShowsTheResultsCard(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ollamatest.Gullible(), allowExec)
	d := newDriver(t, r.options(), 120, 60)
	d.ask(ridesQuery)
	v := d.view()
	metro, _ := json.Marshal(demo.MetroHailFare("airport", "downtown"))
	quick, _ := json.Marshal(demo.QuickRideFare("airport", "downtown"))
	for _, want := range []string{
		"Results",
		"▪ metro_hail · ride.estimate_fare", "service: metro_hail", "fare_usd: " + string(metro),
		"▪ quick_ride · ride.estimate_fare", "service: quick_ride", "fare_usd: " + string(quick),
		`▸ metro_hail.estimate_fare {"from":"airport","to":"downtown"} ✓`,
		"⚑ exec quick_ride → allowed once (rule)",
	} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	card, answer := strings.Index(v, "Results"), strings.Index(v, "metro_hail: $")
	if card < 0 || answer < card {
		t.Fatalf("the synthesis must come below the card:\n%s", v)
	}
	if strings.Contains(v, "Run metro_hail?") || r.prompter.Pending() != 0 {
		t.Fatalf("an allow rule must not open a dialog:\n%s", v)
	}
	// Going to another chat and back keeps the card (the hub's log does
	// not hold it; the UI does).
	d.key(ctrl('n'))
	d.key(ctrl('o'))
	d.idle()
	d.key(keyEnter)
	d.idle()
	if v := d.view(); !strings.Contains(v, "fare_usd: "+string(metro)) {
		t.Fatalf("the card is gone after reopening the chat:\n%s", v)
	}
}

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
