package clock

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/appstest"
)

func TestManifest(t *testing.T) {
	if err := New(nil).Manifest().Check(apps.Default()); err != nil {
		t.Fatal(err)
	}
}

// fixed is 06:30 UTC on the Sunday US daylight saving time began (at
// 07:00 UTC).
var fixed = time.Date(2024, 3, 10, 6, 30, 15, 999, time.UTC)

func TestCall(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, fn, args string
		now            time.Time
		want           string // result JSON, or "error: substring"
	}{
		{"now utc", "now", `{"timezone":"UTC"}`, fixed, `{"time":"2024-03-10T06:30:15Z","timezone":"UTC","weekday":"Sunday","abbreviation":"UTC"}`},
		{"now before dst", "now", `{"timezone":"America/New_York"}`, fixed, `{"time":"2024-03-10T01:30:15-05:00","timezone":"America/New_York","weekday":"Sunday","abbreviation":"EST"}`},
		{"now after dst", "now", `{"timezone":"America/New_York"}`, fixed.Add(time.Hour), `{"time":"2024-03-10T03:30:15-04:00","timezone":"America/New_York","weekday":"Sunday","abbreviation":"EDT"}`},
		{"now half hour zone", "now", `{"timezone":"Asia/Kolkata"}`, fixed, `{"time":"2024-03-10T12:00:15+05:30","timezone":"Asia/Kolkata","weekday":"Sunday","abbreviation":"IST"}`},
		{"now other day", "now", `{"timezone":"Pacific/Auckland"}`, fixed, `{"time":"2024-03-10T19:30:15+13:00","timezone":"Pacific/Auckland","weekday":"Sunday","abbreviation":"NZDT"}`},
		{"now unknown zone", "now", `{"timezone":"Mars/Olympus_Mons"}`, fixed, `error: unknown time zone "Mars/Olympus_Mons"`},
		{"now path zone", "now", `{"timezone":"../../etc/passwd"}`, fixed, `error: unknown time zone`},
		{"now city", "now", `{"timezone":"Tokyo"}`, fixed, `{"time":"2024-03-10T15:30:15+09:00","timezone":"Asia/Tokyo","weekday":"Sunday","abbreviation":"JST"}`},
		{"now city in other words", "now", `{"timezone":" new  york"}`, fixed, `{"time":"2024-03-10T01:30:15-05:00","timezone":"America/New_York","weekday":"Sunday","abbreviation":"EST"}`},
		{"now city three deep", "now", `{"timezone":"Buenos Aires"}`, fixed, `{"time":"2024-03-10T03:30:15-03:00","timezone":"America/Argentina/Buenos_Aires","weekday":"Sunday","abbreviation":"-03"}`},
		{"now no such city", "now", `{"timezone":"Atlantis"}`, fixed, `error: unknown time zone "Atlantis"`},

		{"convert default from utc", "convert", `{"time":"2024-01-01 00:00","to":"Australia/Sydney"}`, fixed, `{"time":"2024-01-01T11:00:00+11:00","timezone":"Australia/Sydney","weekday":"Monday","abbreviation":"AEDT"}`},
		{"convert before dst", "convert", `{"time":"2024-03-09 12:00","from":"America/New_York","to":"UTC"}`, fixed, `{"time":"2024-03-09T17:00:00Z","timezone":"UTC","weekday":"Saturday","abbreviation":"UTC"}`},
		{"convert after dst", "convert", `{"time":"2024-03-10 12:00","from":"America/New_York","to":"UTC"}`, fixed, `{"time":"2024-03-10T16:00:00Z","timezone":"UTC","weekday":"Sunday","abbreviation":"UTC"}`},
		{"convert seconds and T", "convert", `{"time":"2024-07-01T08:15:30","from":"Europe/Paris","to":"America/Los_Angeles"}`, fixed, `{"time":"2024-06-30T23:15:30-07:00","timezone":"America/Los_Angeles","weekday":"Sunday","abbreviation":"PDT"}`},
		{"convert rfc3339 ignores from", "convert", `{"time":"2024-06-01T12:00:00+02:00","from":"America/New_York","to":"Asia/Tokyo"}`, fixed, `{"time":"2024-06-01T19:00:00+09:00","timezone":"Asia/Tokyo","weekday":"Saturday","abbreviation":"JST"}`},
		{"convert skipped time", "convert", `{"time":"2024-03-31 02:30","from":"Europe/Paris","to":"UTC"}`, fixed, `error: does not exist in Europe/Paris`},
		{"convert bad time", "convert", `{"time":"half past two","to":"UTC"}`, fixed, `error: write it as "2024-05-01 14:30"`},
		{"convert bad hour", "convert", `{"time":"2024-01-01 25:00","to":"UTC"}`, fixed, `error: write it as`},
		{"convert unknown to", "convert", `{"time":"2024-01-01 10:00","to":"Nowhere"}`, fixed, `error: unknown time zone "Nowhere"`},
		{"convert empty to", "convert", `{"time":"2024-01-01 10:00","to":" "}`, fixed, `error: say which time zone`},
		{"convert missing to", "convert", `{"time":"2024-01-01 10:00"}`, fixed, `error: arguments`},

		{"month end clamp leap", "date_add", `{"date":"2024-01-31","months":1}`, fixed, `{"date":"2024-02-29","weekday":"Thursday"}`},
		{"month end clamp", "date_add", `{"date":"2023-01-31","months":1}`, fixed, `{"date":"2023-02-28","weekday":"Tuesday"}`},
		{"leap day plus year", "date_add", `{"date":"2024-02-29","years":1}`, fixed, `{"date":"2025-02-28","weekday":"Friday"}`},
		{"back a month", "date_add", `{"date":"2024-03-31","months":-1}`, fixed, `{"date":"2024-02-29","weekday":"Thursday"}`},
		{"months across years", "date_add", `{"date":"2024-11-30","months":-23}`, fixed, `{"date":"2022-12-30","weekday":"Friday"}`},
		{"thirteen months", "date_add", `{"date":"2024-05-31","months":13}`, fixed, `{"date":"2025-06-30","weekday":"Monday"}`},
		{"year end", "date_add", `{"date":"2024-12-31","days":1}`, fixed, `{"date":"2025-01-01","weekday":"Wednesday"}`},
		{"weeks and days", "date_add", `{"date":"2024-03-01","weeks":2,"days":-1}`, fixed, `{"date":"2024-03-14","weekday":"Thursday"}`},
		{"months then days", "date_add", `{"date":"2024-01-31","months":1,"days":1}`, fixed, `{"date":"2024-03-01","weekday":"Friday"}`},
		{"days across dst", "date_add", `{"date":"2024-03-09","until":"2024-03-11"}`, fixed, `{"date":"2024-03-09","weekday":"Saturday","days_between":2}`},
		{"until earlier", "date_add", `{"date":"2024-12-25","until":"2024-01-01"}`, fixed, `{"date":"2024-12-25","weekday":"Wednesday","days_between":-359}`},
		{"until same day", "date_add", `{"date":"2024-01-01","until":"2024-01-01"}`, fixed, `{"date":"2024-01-01","weekday":"Monday","days_between":0}`},
		{"until from result", "date_add", `{"date":"2024-01-01","days":10,"until":"2024-01-31"}`, fixed, `{"date":"2024-01-11","weekday":"Thursday","days_between":20}`},
		{"today", "date_add", `{"date":"today","until":"2024-12-25"}`, time.Date(2024, 12, 20, 12, 0, 0, 0, time.Local), `{"date":"2024-12-20","weekday":"Friday","days_between":5}`},
		{"bad date", "date_add", `{"date":"2024-02-30"}`, fixed, `error: date "2024-02-30"`},
		{"bad format", "date_add", `{"date":"01/02/2024"}`, fixed, `error: YYYY-MM-DD`},
		{"bad until", "date_add", `{"date":"2024-01-01","until":"soon"}`, fixed, `error: date "soon"`},
		{"too many years", "date_add", `{"date":"2024-01-01","years":20000}`, fixed, `error: years must be between`},
		{"out of range", "date_add", `{"date":"2024-01-01","years":8000}`, fixed, `error: outside the years 1 to 9999`},
		{"out of range days", "date_add", `{"date":"9999-12-31","days":1}`, fixed, `error: outside the years 1 to 9999`},
		{"huge number", "date_add", `{"date":"2024-01-01","days":1e300}`, fixed, `error: arguments`},
		{"fraction", "date_add", `{"date":"2024-01-01","days":1.5}`, fixed, `error: arguments`},
		{"unknown field", "date_add", `{"date":"2024-01-01","hours":1}`, fixed, `error: arguments`},
		{"unknown function", "sleep", `{}`, fixed, `error: no function "sleep"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			a := New(func() time.Time { return tt.now })
			out, err := a.Call(context.Background(), apps.Call{Function: tt.fn, Args: json.RawMessage(tt.args)})
			if want, ok := strings.CutPrefix(tt.want, "error: "); ok {
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("error = %v (result %s), want %q", err, out, want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(out) != tt.want {
				t.Errorf("result\n got %s\nwant %s", out, tt.want)
			}
			appstest.CheckResult(t, a, tt.fn, out)
		})
	}
}

func TestDefaults(t *testing.T) {
	a := New(nil)
	out, err := a.Call(context.Background(), apps.Call{Function: "now"})
	if err != nil {
		t.Fatal(err)
	}
	appstest.CheckResult(t, a, "now", out)
	var m struct{ Time, Timezone string }
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	got, err := time.Parse(time.RFC3339, m.Time)
	if err != nil || m.Timezone != "Local" || time.Since(got).Abs() > time.Minute {
		t.Errorf("now = %s, %v", out, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Call(ctx, apps.Call{Function: "now"}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
}
