package demo_test

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
)

// The calendar checks against the catalog like the other demo apps, lists
// a day's events in time order, adds one (kept in its namespace) and
// refuses a date that is not a day.
func TestCalendar(t *testing.T) {
	t.Parallel()
	c := demo.NewCalendar()
	m := c.Manifest()
	if err := m.Check(apps.Default()); err != nil || !m.Demo {
		t.Fatalf("manifest: %v (demo %v)", err, m.Demo)
	}
	for fn, own := range m.Provides {
		f, _ := m.Function(own)
		if entry, _ := apps.Default().Get(fn); f.Effect != entry.Effect {
			t.Errorf("%s effect %s, catalog %s", own, f.Effect, entry.Effect)
		}
	}
	kv := newKV()
	got := mustCall(t, c, kv, "list", `{"date":"2025-03-14"}`)
	evs := got["events"].([]any)
	if len(evs) != 2 || evs[0].(map[string]any)["title"] != "Lunch with Alice" {
		t.Fatalf("the day's events in time order: %v", evs)
	}
	id := mustCall(t, c, kv, "add", `{"title":"Dentist","date":"2025-03-20","time":"10:00"}`)["id"].(string)
	all, err := demo.Events(kv, errNotFound)
	if err != nil || len(all) != 3 || all[2].ID != id || all[2].Title != "Dentist" {
		t.Fatalf("the added event is kept: %+v %v", all, err)
	}
	if _, err := call(t, c, kv, "add", `{"title":"x","date":"2025-02-30"}`); err == nil || !strings.Contains(err.Error(), "not a day") {
		t.Fatalf("a date that is not a day: %v", err)
	}
	// A seeded namespace gets its own events instead of the defaults.
	kv2 := newKV()
	if err := demo.SeedCalendar(kv2, errNotFound, []demo.Event{{ID: "x1", Title: "Only", Date: "2025-01-01"}}); err != nil {
		t.Fatal(err)
	}
	if evs, _ := demo.Events(kv2, errNotFound); len(evs) != 1 || evs[0].Title != "Only" {
		t.Fatalf("seeded: %+v", evs)
	}
}
