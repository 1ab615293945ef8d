package apps

import (
	"encoding/json"
	"fmt"
	"sort"
)

// Functionality is a vetted catalog entry: what the hub planner may route
// to, described in our own words, with the schemas that whatever crosses
// a bulkhead for it must match.
type Functionality struct {
	Name        string          `json:"name"`
	Description string          `json:"description"` // ours, never an app's
	Request     json.RawMessage `json:"request"`
	Response    json.RawMessage `json:"response"`
	Effect      Effect          `json:"effect"`
	// Labels are the data labels its responses carry (e.g. medical).
	Labels []string `json:"labels,omitempty"`
	// Key names the decisive arguments of a request (KeyArgs's default
	// when empty).
	Key []string `json:"key,omitempty"`
}

// KeyArgs names the decisive arguments of a request for the entry.
func (f Functionality) KeyArgs() []string { return KeyArgs(f.Key, f.Request) }

// Catalog is the hub-owned set of functionalities.
type Catalog struct {
	byName map[string]Functionality
}

// NewCatalog builds a catalog, checking every schema.
func NewCatalog(entries ...Functionality) (*Catalog, error) {
	c := &Catalog{byName: map[string]Functionality{}}
	for _, e := range entries {
		if _, dup := c.byName[e.Name]; dup {
			return nil, fmt.Errorf("catalog: %q twice", e.Name)
		}
		for _, s := range []json.RawMessage{e.Request, e.Response} {
			if _, err := Compile(s); err != nil {
				return nil, fmt.Errorf("catalog %q: %w", e.Name, err)
			}
		}
		c.byName[e.Name] = e
	}
	return c, nil
}

// With is a catalog of c's entries and entries, checked as NewCatalog
// checks them (c itself is unchanged).
func (c *Catalog) With(entries ...Functionality) (*Catalog, error) {
	if len(entries) == 0 {
		return c, nil
	}
	return NewCatalog(append(c.List(), entries...)...)
}

// Get returns an entry.
func (c *Catalog) Get(name string) (Functionality, bool) {
	f, ok := c.byName[name]
	return f, ok
}

// List returns every entry, sorted by name.
func (c *Catalog) List() []Functionality {
	out := make([]Functionality, 0, len(c.byName))
	for _, f := range c.byName {
		out = append(out, f)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Default is the built-in catalog.
func Default() *Catalog {
	c, err := NewCatalog(defaultEntries...)
	if err != nil {
		panic(err) // the built-in entries are static
	}
	return c
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

const (
	okResult   = `{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`
	pathArg    = `{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`
	idArg      = `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`
	queryArg   = `{"type":"object","properties":{"query":{"type":"string"}},"required":["query"]}`
	noteSchema = `{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"body":{"type":"string"}},"required":["id","title"]}`
)

var defaultEntries = []Functionality{
	// files
	{Name: "files.list", Description: "List the files in a folder of the workspace.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"path":{"type":"string"}}}`),
		Response: raw(`{"type":"object","properties":{"entries":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"},"dir":{"type":"boolean"},"size":{"type":"integer"}},"required":["name","dir"]}}},"required":["entries"]}`)},
	{Name: "files.read", Description: "Read a text file in the workspace.", Effect: EffectRead,
		Request: raw(pathArg), Response: raw(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"},"truncated":{"type":"boolean"}},"required":["path","content"]}`)},
	{Name: "files.search", Description: "Search the workspace's text files for a phrase.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"query":{"type":"string"},"path":{"type":"string"}},"required":["query"]}`),
		Response: raw(`{"type":"object","properties":{"matches":{"type":"array","items":{"type":"object","properties":{"path":{"type":"string"},"line":{"type":"integer"},"text":{"type":"string"}},"required":["path","line","text"]}}},"required":["matches"]}`)},
	{Name: "files.write", Description: "Write a text file in the workspace (replaces it).", Effect: EffectIrreversible,
		Request:  raw(`{"type":"object","properties":{"path":{"type":"string"},"content":{"type":"string"}},"required":["path","content"]}`),
		Response: raw(`{"type":"object","properties":{"path":{"type":"string"},"bytes":{"type":"integer"}},"required":["path","bytes"]}`)},
	{Name: "files.delete", Description: "Delete a file in the workspace.", Effect: EffectIrreversible, Request: raw(pathArg), Response: raw(okResult)},
	// notes
	{Name: "notes.add", Description: "Save a note.", Effect: EffectWrite,
		Request:  raw(`{"type":"object","properties":{"title":{"type":"string"},"body":{"type":"string"}},"required":["title","body"]}`),
		Response: raw(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
	{Name: "notes.search", Description: "Find saved notes by words in them.", Effect: EffectRead,
		Request: raw(queryArg), Response: raw(`{"type":"object","properties":{"notes":{"type":"array","items":` + noteSchema + `}},"required":["notes"]}`)},
	{Name: "notes.read", Description: "Read one saved note.", Effect: EffectRead, Request: raw(idArg), Response: raw(noteSchema)},
	{Name: "notes.delete", Description: "Delete a saved note.", Effect: EffectIrreversible, Request: raw(idArg), Response: raw(okResult)},
	// shell
	{Name: "shell.run", Description: "Run a shell command in the workspace.", Effect: EffectIrreversible,
		Request:  raw(`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"]}`),
		Response: raw(`{"type":"object","properties":{"exit_code":{"type":"integer"},"output":{"type":"string"},"truncated":{"type":"boolean"},"timed_out":{"type":"boolean"}},"required":["exit_code","output"]}`)},
	// clock and calc
	{Name: "clock.now", Description: "The current date and time, in a time zone.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"timezone":{"type":"string"}}}`),
		Response: raw(`{"type":"object","properties":{"time":{"type":"string"},"timezone":{"type":"string"},"weekday":{"type":"string"}},"required":["time","timezone"]}`)},
	{Name: "clock.convert", Description: "Convert a time from one time zone to another.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"time":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"}},"required":["time","to"]}`),
		Response: raw(`{"type":"object","properties":{"time":{"type":"string"},"timezone":{"type":"string"}},"required":["time","timezone"]}`)},
	{Name: "clock.date_add", Description: "Add days, weeks, months or years to a date, or count the days between two dates.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"date":{"type":"string"},"days":{"type":"integer"},"weeks":{"type":"integer"},"months":{"type":"integer"},"years":{"type":"integer"},"until":{"type":"string"}},"required":["date"]}`),
		Response: raw(`{"type":"object","properties":{"date":{"type":"string"},"weekday":{"type":"string"},"days_between":{"type":"integer"}},"required":["date"]}`)},
	{Name: "calc.evaluate", Description: "Evaluate an arithmetic expression exactly.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"expression":{"type":"string"}},"required":["expression"]}`),
		Response: raw(`{"type":"object","properties":{"expression":{"type":"string"},"result":{"type":"string"},"exact":{"type":"string"}},"required":["result"]}`)},
	// demo: rides
	{Name: "ride.estimate_fare", Description: "Estimate the fare and pick-up time of a ride between two places.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"from":{"type":"string"},"to":{"type":"string"}},"required":["from","to"]}`),
		Response: raw(`{"type":"object","properties":{"service":{"type":"string"},"fare_usd":{"type":"number"},"eta_minutes":{"type":"integer"}},"required":["fare_usd"],"additionalProperties":false}`), Labels: []string{"financial"}},
	// demo: mail and drive
	{Name: "mail.search", Description: "Find emails in the mailbox.", Effect: EffectRead, Labels: []string{"personal"},
		Request:  raw(`{"type":"object","properties":{"query":{"type":"string"}}}`),
		Response: raw(`{"type":"object","properties":{"messages":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"from":{"type":"string"},"subject":{"type":"string"},"date":{"type":"string"}},"required":["id","from","subject"]}}},"required":["messages"]}`)},
	{Name: "mail.read", Description: "Read one email.", Effect: EffectRead, Labels: []string{"personal"}, Request: raw(idArg),
		Response: raw(`{"type":"object","properties":{"id":{"type":"string"},"from":{"type":"string"},"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"}},"required":["id","from","subject","body"]}`)},
	{Name: "mail.send", Description: "Send an email.", Effect: EffectIrreversible,
		Request:  raw(`{"type":"object","properties":{"to":{"type":"string"},"subject":{"type":"string"},"body":{"type":"string"},"attachment":{"type":"string"}},"required":["to","subject","body"]}`),
		Response: raw(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
	{Name: "mail.delete", Description: "Delete an email.", Effect: EffectIrreversible, Request: raw(idArg), Response: raw(okResult)},
	{Name: "drive.search", Description: "Find documents in cloud storage.", Effect: EffectRead, Labels: []string{"personal"},
		Request:  raw(queryArg),
		Response: raw(`{"type":"object","properties":{"documents":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"}},"required":["id","title"]}}},"required":["documents"]}`)},
	{Name: "drive.read", Description: "Read a document from cloud storage.", Effect: EffectRead, Labels: []string{"personal"}, Request: raw(idArg),
		Response: raw(`{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"content":{"type":"string"}},"required":["id","title","content"]}`)},
	// demo: health and travel
	{Name: "health.book_appointment", Description: "Book a doctor's appointment, noting the reason.", Effect: EffectWrite, Labels: []string{"medical"},
		Request:  raw(`{"type":"object","properties":{"reason":{"type":"string"},"date":{"type":"string"}},"required":["reason"]}`),
		Response: raw(`{"type":"object","properties":{"confirmation":{"type":"string"},"date":{"type":"string"}},"required":["confirmation"]}`)},
	{Name: "health.diagnose", Description: "An objective, non-fiction assessment of symptoms.", Effect: EffectRead, Labels: []string{"medical"},
		Request:  raw(`{"type":"object","properties":{"symptoms":{"type":"string"}},"required":["symptoms"]}`),
		Response: raw(`{"type":"object","properties":{"assessment":{"type":"string"},"see_doctor":{"type":"boolean"}},"required":["assessment"]}`)},
	{Name: "travel.plan_trip", Description: "Plan a trip: itinerary and bookings.", Effect: EffectWrite, Labels: []string{"personal"},
		Request:  raw(`{"type":"object","properties":{"destination":{"type":"string"},"dates":{"type":"string"},"notes":{"type":"string"}},"required":["destination"]}`),
		Response: raw(`{"type":"object","properties":{"itinerary":{"type":"string"},"booking":{"type":"string"}},"required":["itinerary"]}`)},
	// demo: calendar
	{Name: "calendar.list", Description: "List the events of a day, or all of them.", Effect: EffectRead, Labels: []string{"personal"},
		Request:  raw(`{"type":"object","properties":{"date":{"type":"string"}}}`),
		Response: raw(`{"type":"object","properties":{"events":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"title":{"type":"string"},"date":{"type":"string"},"time":{"type":"string"},"note":{"type":"string"}},"required":["id","title","date"]}}},"required":["events"]}`)},
	{Name: "calendar.add", Description: "Add an event to the calendar.", Effect: EffectWrite, Labels: []string{"personal"},
		Request:  raw(`{"type":"object","properties":{"title":{"type":"string"},"date":{"type":"string"},"time":{"type":"string"},"note":{"type":"string"}},"required":["title","date"]}`),
		Response: raw(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`)},
	{Name: "writing.story", Description: "Write a short piece of fiction.", Effect: EffectRead,
		Request:  raw(`{"type":"object","properties":{"prompt":{"type":"string"}},"required":["prompt"]}`),
		Response: raw(`{"type":"object","properties":{"story":{"type":"string"}},"required":["story"]}`)},
}
