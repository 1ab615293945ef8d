package judge

import (
	"testing"
	"time"
)

// A time a relative expression means is the asker's: read in the zone of
// the clock the request came with, and compared in it — a call that
// writes the time without an offset means the asker's wall clock, never
// the serving process's own zone, whatever that is.
func TestARelativeTimeIsInTheAskersZone(t *testing.T) {
	t.Parallel()
	tokyo := time.FixedZone("Tokyo", 9*3600)
	honolulu := time.FixedZone("Honolulu", -10*3600)
	for _, c := range []struct {
		loc  *time.Location
		call string
		same bool
	}{
		{tokyo, "2026-12-05T20:30", true},             // 18:30 + 2h, Tokyo's wall clock
		{tokyo, "2026-12-05T20:30:00+09:00", true},    // the same, with its offset
		{tokyo, "2026-12-05T11:30:00Z", true},         // the same instant, in UTC
		{tokyo, "2026-12-05T11:30", false},            // UTC's wall clock, written as if local
		{honolulu, "2026-12-05T01:30", true},          // 23:30 the day before + 2h
		{honolulu, "2026-12-05T20:30", false},         // Tokyo's answer in Honolulu
		{honolulu, "2026-12-05 01:30:00", true},       // another layout
		{honolulu, "2026-12-05T11:30:00+00:00", true}, // the instant again
	} {
		now := time.Date(2026, 12, 5, 9, 30, 0, 0, time.UTC).In(c.loc)
		m, ok := Means("in two hours", now)
		if !ok || m.Kind != "time" {
			t.Fatalf("in two hours at %v: %+v, %v", now, m, ok)
		}
		if got := sameMeaning(c.call, meant(m)); got != c.same {
			t.Errorf("in two hours at %v (%+v): %s same = %v, want %v", now, m, c.call, got, c.same)
		}
	}
}
