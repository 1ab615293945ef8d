// Package clock is the built-in clock app: the current time in a time
// zone, conversion of a time between zones, and calendar arithmetic on
// dates.
//
// Time zones are IANA names ("Europe/Paris", "America/New_York"), the
// city a zone is named for ("Tokyo", "new york"), "UTC" and "Local"; the
// zone database is embedded (time/tzdata), so they
// work on systems without one. Dates are calendar dates in YYYY-MM-DD form.
// Adding months or years keeps the day of the month when it exists and
// otherwise clamps it to the month's last day, as a person would: January
// 31 plus one month is the last day of February.
//
// An App holds no state besides its clock and is safe for concurrent use
// if that clock is.
package clock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	_ "time/tzdata" // zones work without a system database

	"github.com/bulkhead-dev/bulkhead/apps"
)

const dateLayout = "2006-01-02"

// Bounds on date arithmetic, so no sum overflows; results must also lie
// in the years 1 to 9999.
const (
	maxYears  = 10000
	maxMonths = 12 * maxYears
	maxWeeks  = 53 * maxYears
	maxDays   = 366 * maxYears
)

// App is the clock app.
type App struct {
	now func() time.Time
	man apps.Manifest
}

var _ apps.App = (*App)(nil)

// New returns the clock app reading the time from now (nil: time.Now).
func New(now func() time.Time) *App {
	if now == nil {
		now = time.Now
	}
	return &App{now: now, man: manifest()}
}

// Manifest declares the app.
func (a *App) Manifest() apps.Manifest { return a.man }

// Call runs one function.
func (a *App) Call(ctx context.Context, c apps.Call) (json.RawMessage, error) {
	return apps.Dispatch(ctx, a.man, map[string]apps.Handler{
		"now": apps.Typed(func(ctx context.Context, _ apps.Call, p struct{ Timezone string }) (any, error) {
			return a.current(p.Timezone, apps.ZoneOf(ctx))
		}),
		"convert": apps.Typed(func(_ context.Context, _ apps.Call, p struct{ Time, From, To string }) (any, error) {
			return convert(p.Time, p.From, p.To)
		}),
		"date_add": apps.Typed(func(ctx context.Context, _ apps.Call, p dateAddArgs) (any, error) {
			return a.dateAdd(p, apps.ZoneOf(ctx))
		}),
	}, c)
}

// zone loads a time zone by name; "" is def.
func zone(name string, def *time.Location) (*time.Location, error) {
	switch strings.TrimSpace(name) {
	case "":
		return def, nil
	case "Local", "local":
		return def, nil
	case "UTC", "utc", "Z":
		return time.UTC, nil
	}
	loc, err := time.LoadLocation(strings.TrimSpace(name))
	if err == nil {
		return loc, nil
	}
	if z, ok := zoneOfCity(name); ok {
		return time.LoadLocation(z)
	}
	return nil, fmt.Errorf("unknown time zone %q: use an IANA name such as \"Europe/Paris\" or \"America/New_York\", or a city that names one (\"Tokyo\")", name)
}

// zoneOfCity is the IANA zone a city names, as people write it: "Tokyo"
// is Asia/Tokyo, "new york" America/New_York, "Buenos Aires"
// America/Argentina/Buenos_Aires.
func zoneOfCity(name string) (string, bool) {
	key := strings.ToLower(strings.Join(strings.Fields(strings.ReplaceAll(name, "_", " ")), " "))
	if key == "" {
		return "", false
	}
	for _, z := range zoneNames {
		city := z[strings.LastIndexByte(z, '/')+1:]
		if strings.ToLower(strings.ReplaceAll(city, "_", " ")) == key {
			return z, true
		}
	}
	return "", false
}

type moment struct {
	Time         string `json:"time"` // RFC 3339
	Timezone     string `json:"timezone"`
	Weekday      string `json:"weekday"`
	Abbreviation string `json:"abbreviation"`
}

func describe(t time.Time) moment {
	abbr, _ := t.Zone()
	return moment{Time: t.Format(time.RFC3339), Timezone: t.Location().String(), Weekday: t.Weekday().String(), Abbreviation: abbr}
}

func (a *App) current(tz string, here *time.Location) (moment, error) {
	loc, err := zone(tz, here)
	if err != nil {
		return moment{}, err
	}
	return describe(a.now().In(loc).Truncate(time.Second)), nil
}

// wallLayouts are the accepted forms of a time without an offset.
var wallLayouts = []string{"2006-01-02 15:04", "2006-01-02 15:04:05", "2006-01-02T15:04", "2006-01-02T15:04:05"}

// convert reads tm — RFC 3339 with its own offset, or a wall-clock time
// in zone from (default UTC) — and shows it in zone to.
func convert(tm, from, to string) (moment, error) {
	dst, err := zone(to, nil)
	if err != nil {
		return moment{}, err
	}
	if dst == nil {
		return moment{}, errors.New("say which time zone to convert to")
	}
	src, err := zone(from, time.UTC)
	if err != nil {
		return moment{}, err
	}
	tm = strings.TrimSpace(tm)
	if t, err := time.Parse(time.RFC3339, tm); err == nil {
		return describe(t.In(dst)), nil
	}
	for _, layout := range wallLayouts {
		w, err := time.Parse(layout, tm)
		if err != nil {
			continue
		}
		t := time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, src)
		if t.Hour() != w.Hour() || t.Minute() != w.Minute() || t.Day() != w.Day() {
			return moment{}, fmt.Errorf("%s does not exist in %s: the clocks skip it", tm, src)
		}
		return describe(t.In(dst)), nil
	}
	return moment{}, fmt.Errorf("time %q: write it as \"2024-05-01 14:30\" or in RFC 3339, such as \"2024-05-01T14:30:00+02:00\"", tm)
}

type dateAddArgs struct {
	Date                       string
	Days, Weeks, Months, Years int64
	Until                      string
}

type dateResult struct {
	Date        string `json:"date"`
	Weekday     string `json:"weekday"`
	DaysBetween *int64 `json:"days_between,omitempty"`
}

// dateAdd adds years and months (clamping the day to the month's end),
// then weeks and days; with until it counts the days from the result to
// until.
func (a *App) dateAdd(p dateAddArgs, here *time.Location) (dateResult, error) {
	d, err := a.parseDate(p.Date, here)
	if err != nil {
		return dateResult{}, err
	}
	for _, b := range []struct {
		name  string
		n, mx int64
	}{{"days", p.Days, maxDays}, {"weeks", p.Weeks, maxWeeks}, {"months", p.Months, maxMonths}, {"years", p.Years, maxYears}} {
		if b.n > b.mx || b.n < -b.mx {
			return dateResult{}, fmt.Errorf("%s must be between -%d and %d", b.name, b.mx, b.mx)
		}
	}
	months := int64(d.Month()-1) + p.Months + 12*p.Years
	year := int64(d.Year()) + floorDiv(months, 12)
	if year < 1 || year > 9999 {
		return dateResult{}, errors.New("the result is outside the years 1 to 9999")
	}
	month := time.Month(months-12*floorDiv(months, 12)) + 1
	day := min(d.Day(), daysIn(int(year), month))
	r := time.Date(int(year), month, day, 0, 0, 0, 0, time.UTC).AddDate(0, 0, int(p.Days+7*p.Weeks))
	if r.Year() < 1 || r.Year() > 9999 {
		return dateResult{}, errors.New("the result is outside the years 1 to 9999")
	}
	res := dateResult{Date: r.Format(dateLayout), Weekday: r.Weekday().String()}
	if p.Until != "" {
		u, err := a.parseDate(p.Until, here)
		if err != nil {
			return dateResult{}, err
		}
		n := int64(u.Sub(r) / (24 * time.Hour))
		res.DaysBetween = &n
	}
	return res, nil
}

// parseDate reads YYYY-MM-DD, or "today" in the asking person's zone
// (here), as midnight UTC.
func (a *App) parseDate(s string, here *time.Location) (time.Time, error) {
	s = strings.TrimSpace(s)
	if strings.EqualFold(s, "today") {
		y, m, d := a.now().In(here).Date()
		return time.Date(y, m, d, 0, 0, 0, 0, time.UTC), nil
	}
	t, err := time.Parse(dateLayout, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q: write it as YYYY-MM-DD, such as \"2024-05-01\"", s)
	}
	return t, nil
}

func daysIn(year int, m time.Month) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}
