package demo

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// Event is one entry of the calendar.
type Event struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Date  string `json:"date"`           // YYYY-MM-DD
	Time  string `json:"time,omitempty"` // HH:MM
	// Note is free text: an invitation's description, written by whoever
	// sent it.
	Note string `json:"note,omitempty"`
}

// CalendarDescription is calendar's description.
const CalendarDescription = "Calendar: your events. list shows the events of a day (or all), add puts a new event in."

// seedEvents are the calendar's events on first use.
var seedEvents = []Event{
	{ID: "c1", Title: "Team meeting", Date: "2025-03-14", Time: "15:00", Note: "Room 4."},
	{ID: "c2", Title: "Lunch with Alice", Date: "2025-03-14", Time: "12:00"},
}

// Calendar is the simulated calendar app.
type Calendar struct{ base }

var _ apps.App = (*Calendar)(nil)

const eventSchema = `{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"date":{"type":"string"},"time":{"type":"string"},"note":{"type":"string"}},"required":["id","title","date"],"additionalProperties":false}`

// NewCalendar returns calendar. It is in the demo pack, not in Apps (the
// case studies).
func NewCalendar() *Calendar {
	c := &Calendar{base{m: apps.Manifest{
		Name:        "calendar",
		Description: CalendarDescription,
		Functions: []apps.Function{
			{Name: "list", Description: "List the events of a day (YYYY-MM-DD), or every event when no date is given, in time order.",
				Params: raw(`{"type":"object","properties":{"date":{"type":"string"}},"additionalProperties":false}`),
				Result: raw(`{"type":"object","properties":{"events":{"type":"array","items":` + eventSchema + `}},"required":["events"],"additionalProperties":false}`),
				Effect: apps.EffectRead},
			{Name: "add", Description: "Add an event: a title, a date (YYYY-MM-DD) and a time (HH:MM) if given; returns its id.",
				Params: raw(`{"type":"object","properties":{"title":{"type":"string","minLength":1},"date":{"type":"string","pattern":"^[0-9]{4}-[0-9]{2}-[0-9]{2}$"},"time":{"type":"string"},"note":{"type":"string"}},"required":["title","date"],"additionalProperties":false}`),
				Result: raw(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"additionalProperties":false}`),
				Effect: apps.EffectWrite},
		},
		Provides:  map[string]string{"calendar.list": "list", "calendar.add": "add"},
		Clearance: []string{"personal"},
		Labels:    []string{"personal"},
		Demo:      true,
	}}}
	c.handlers = map[string]handler{"list": c.list, "add": c.add}
	return c
}

func openCalendar(kv apps.KV, notFound error) (store, error) {
	return seedWith(kv, notFound, "event/", seedEvents, eventID)
}

func eventID(e Event) string { return e.ID }

// SeedCalendar makes events the calendar of a namespace calendar has not
// used yet (the default events are not seeded then).
func SeedCalendar(kv apps.KV, notFound error, events []Event) error {
	_, err := seedWith(kv, notFound, "event/", events, eventID)
	return err
}

// Events returns every event of a calendar namespace, in time order.
func Events(kv apps.KV, notFound error) ([]Event, error) {
	s, err := openCalendar(kv, notFound)
	if err != nil {
		return nil, err
	}
	evs, err := all[Event](s, "event/")
	if err != nil {
		return nil, err
	}
	slices.SortStableFunc(evs, func(a, b Event) int { return strings.Compare(a.Date+a.Time, b.Date+b.Time) })
	return evs, nil
}

func (c *Calendar) list(_ context.Context, call apps.Call) (any, error) {
	a, err := decode[struct {
		Date string `json:"date"`
	}](call.Args)
	if err != nil {
		return nil, err
	}
	evs, err := Events(call.Memory, call.NotFound)
	if err != nil {
		return nil, err
	}
	out := []Event{}
	for _, e := range evs {
		if a.Date == "" || e.Date == strings.TrimSpace(a.Date) {
			out = append(out, e)
		}
	}
	return map[string]any{"events": out}, nil
}

func (c *Calendar) add(_ context.Context, call apps.Call) (any, error) {
	a, err := decode[struct {
		Title string `json:"title"`
		Date  string `json:"date"`
		Time  string `json:"time"`
		Note  string `json:"note"`
	}](call.Args)
	if err != nil {
		return nil, err
	}
	if _, err := time.Parse("2006-01-02", a.Date); err != nil {
		return nil, fmt.Errorf("date %q is not a day (YYYY-MM-DD)", a.Date)
	}
	s, err := openCalendar(call.Memory, call.NotFound)
	if err != nil {
		return nil, err
	}
	n, err := s.next("added")
	if err != nil {
		return nil, err
	}
	id := "n" + strconv.Itoa(n)
	e := Event{ID: id, Title: strings.TrimSpace(a.Title), Date: a.Date, Time: strings.TrimSpace(a.Time), Note: a.Note}
	if err := s.put("event/"+id, e); err != nil {
		return nil, err
	}
	return map[string]string{"id": id}, nil
}
