package tui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps/demo"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
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
