package judge

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// A relative date or time in the request ("tomorrow", "next Friday",
// "in two hours") binds what it means — the date, in the user's time
// zone, when the operator checked the plan — as well as the word: an app
// that books tomorrow's real date does what the user asked, and the
// dialog shows both ("tomorrow — Sun 6 Dec"). Another date is not what
// the plan bound.

// Meaning is what a relative expression means: a date (2006-01-02) or a
// time (2006-01-02T15:04, to the minute), in the user's time zone.
type Meaning struct {
	Kind  string `json:"kind"`  // "date" or "time"
	Value string `json:"value"` // its canonical form
	Words string `json:"words"` // how a dialog says it: "Sun 6 Dec", "Sat 5 Dec 14:30"
	// Zone is the asker's UTC offset when it was read ("+09:00"): a
	// time a call writes without an offset is read in it, never in the
	// serving process's own zone.
	Zone string `json:"zone,omitempty"`
}

const (
	dateLayout = "2006-01-02"
	timeLayout = "2006-01-02T15:04"
)

var (
	reWeekday  = regexp.MustCompile(`^(?:(next|this|coming|on|this coming)\s+)?(monday|tuesday|wednesday|thursday|friday|saturday|sunday)$`)
	reInPeriod = regexp.MustCompile(`^in\s+(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|a couple of|half an)\s+(minutes?|hours?|days?|weeks?)$`)
	numberWord = map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "a couple of": 2}
	weekdays   = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday, "wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}
)

// Means is what v means when it is a relative date or time, read at now
// (in now's location); ok is false for anything else.
func Means(v string, now time.Time) (Meaning, bool) {
	if now.IsZero() {
		return Meaning{}, false
	}
	s := strings.ToLower(NormSpace(v))
	s = strings.TrimPrefix(s, "for ")
	zone := now.Format("-07:00")
	day := func(d int) (Meaning, bool) {
		t := now.AddDate(0, 0, d)
		return Meaning{Kind: "date", Value: t.Format(dateLayout), Words: t.Format("Mon 2 Jan"), Zone: zone}, true
	}
	switch s {
	case "today", "tonight", "this evening", "this afternoon", "this morning":
		return day(0)
	case "tomorrow", "tomorrow morning", "tomorrow evening", "tomorrow night":
		return day(1)
	case "the day after tomorrow", "day after tomorrow":
		return day(2)
	case "yesterday":
		return day(-1)
	}
	if m := reWeekday.FindStringSubmatch(s); m != nil {
		want := weekdays[m[2]]
		d := (int(want) - int(now.Weekday()) + 7) % 7
		if d == 0 && m[1] != "this" {
			d = 7 // "Friday" said on a Friday is the next one
		}
		return day(d)
	}
	if m := reInPeriod.FindStringSubmatch(s); m != nil {
		n, err := strconv.Atoi(m[1])
		if err != nil {
			n = numberWord[m[1]]
		}
		half := m[1] == "half an"
		switch unit := strings.TrimSuffix(m[2], "s"); unit {
		case "day":
			return day(n)
		case "week":
			return day(7 * n)
		case "hour", "minute":
			d := time.Duration(n) * time.Minute
			if unit == "hour" {
				d = time.Duration(n) * time.Hour
			}
			if half {
				d = 30 * time.Minute
			}
			t := now.Add(d).Truncate(time.Minute)
			return Meaning{Kind: "time", Value: t.Format(timeLayout), Words: t.Format("Mon 2 Jan 15:04"), Zone: zone}, true
		}
	}
	return Meaning{}, false
}

// meant is a bound value that is what a relative expression means.
type meant Meaning

// sameMeaning reports whether a call's value is the date or time m
// means: a date as 2006-01-02 exactly; a time, in any of the usual
// layouts, as the same minute.
func sameMeaning(leaf any, m meant) bool {
	s, ok := leaf.(string)
	if !ok {
		return false
	}
	if m.Kind == "date" {
		return s == m.Value
	}
	zone := m.Zone
	if zone == "" {
		zone = "Z"
	}
	want, err := time.Parse(timeLayout+"Z07:00", m.Value+zone)
	if err != nil {
		return false
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04:05", timeLayout, "2006-01-02 15:04", "2006-01-02 15:04:05"} {
		// A time written without an offset is the asker's.
		t, err := time.ParseInLocation(layout, s, want.Location())
		if err == nil {
			return t.Truncate(time.Minute).Equal(want)
		}
	}
	return false
}

// Wider is a relative expression in query that holds an occurrence of
// value and means something else ("the day after tomorrow" holds
// "tomorrow"; "this Friday", said on a Friday, holds "Friday"): the value
// the plan bound is then only part of what the user wrote, and is not
// theirs as a date. ok is false where every occurrence stands on its own
// or every wider reading means the same.
func Wider(query, value string, now time.Time) (expr string, m Meaning, ok bool) {
	own, isDate := Means(value, now)
	if !isDate {
		return "", Meaning{}, false
	}
	q, v := relWords(query), relWords(value)
	if len(v) == 0 {
		return "", Meaning{}, false
	}
	const reach = 4 // the longest expression Means reads is five words
	for i := 0; i+len(v) <= len(q); i++ {
		if !sameWords(q[i:i+len(v)], v) {
			continue
		}
		for a := 0; a <= reach && i-a >= 0; a++ {
			for b := 0; b <= reach && i+len(v)+b <= len(q); b++ {
				if a == 0 && b == 0 {
					continue
				}
				w := strings.Join(q[i-a:i+len(v)+b], " ")
				if wm, ok := Means(w, now); ok && (wm.Kind != own.Kind || wm.Value != own.Value) {
					return w, wm, true
				}
			}
		}
	}
	return "", Meaning{}, false
}

// relWords splits text into its words: letters, digits and the marks
// inside a word; everything else separates.
func relWords(text string) []string {
	return strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.Is(unicode.Mn, r)
	})
}

func sameWords(a, b []string) bool {
	for i := range a {
		if strings.ToLower(a[i]) != strings.ToLower(b[i]) {
			return false
		}
	}
	return true
}

func (m Meaning) String() string { return fmt.Sprintf("%s (%s)", m.Words, m.Value) }
