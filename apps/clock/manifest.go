package clock

import (
	"encoding/json"

	"github.com/bulkhead-dev/bulkhead/apps"
)

func raw(s string) json.RawMessage { return json.RawMessage(s) }

const momentJSON = `{"type":"object","properties":{"time":{"type":"string"},"timezone":{"type":"string"},"weekday":{"type":"string"},"abbreviation":{"type":"string"}},"required":["time","timezone","weekday"]}`

func manifest() apps.Manifest {
	return apps.Manifest{
		Name:        "clock",
		Description: "Tells the date and time in any time zone, converts times between zones, and does date arithmetic.",
		Functions: []apps.Function{
			{
				Name:        "now",
				Description: "The current date and time in a time zone (an IANA name such as \"Europe/Paris\" or the city it is named for, \"Tokyo\"; default: the computer's own zone), in RFC 3339 form, with the weekday.",
				Effect:      apps.EffectRead,
				Params:      raw(`{"type":"object","properties":{"timezone":{"type":"string","description":"IANA time zone name, the city it is named for, \"UTC\" or \"Local\"."}},"additionalProperties":false}`),
				Result:      raw(momentJSON),
			},
			{
				Name: "convert",
				Description: "Convert a time to another time zone. The time is either RFC 3339 with its offset (\"2024-05-01T14:30:00+02:00\"; then from is ignored) " +
					"or a wall-clock time \"2024-05-01 14:30\" in the zone from, which defaults to UTC. A wall-clock time the clocks skip (when daylight saving starts) is refused.",
				Effect: apps.EffectRead,
				Params: raw(`{"type":"object","properties":{"time":{"type":"string","description":"The time to convert."},"from":{"type":"string","description":"IANA time zone (or its city) of a wall-clock time (default UTC)."},"to":{"type":"string","description":"IANA time zone (or its city) to convert to."}},"required":["time","to"],"additionalProperties":false}`),
				Result: raw(momentJSON),
			},
			{
				Name: "date_add",
				Description: "Add years, months, weeks and days (any may be negative) to a date YYYY-MM-DD or \"today\", in that order. " +
					"When the day does not exist in the new month it becomes the month's last day (January 31 plus one month is February 28 or 29). " +
					"With until, also counts the days from the resulting date to until (negative when until is earlier).",
				Effect: apps.EffectRead,
				Params: raw(`{"type":"object","properties":{"date":{"type":"string","description":"YYYY-MM-DD or \"today\"."},"days":{"type":"integer"},"weeks":{"type":"integer"},"months":{"type":"integer"},"years":{"type":"integer"},"until":{"type":"string","description":"A second date, YYYY-MM-DD or \"today\"."}},"required":["date"],"additionalProperties":false}`),
				Result: raw(`{"type":"object","properties":{"date":{"type":"string"},"weekday":{"type":"string"},"days_between":{"type":"integer"}},"required":["date","weekday"]}`),
			},
		},
		Provides: map[string]string{
			"clock.now":      "now",
			"clock.convert":  "convert",
			"clock.date_add": "date_add",
		},
	}
}
