package demo_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/demo"
)

var errNotFound = errors.New("fake: not found")

// fakeKV is an in-memory apps.KV that behaves like memory.Namespace: Get of
// a missing key wraps errNotFound, Keys returns full keys in byte order.
type fakeKV struct {
	mu sync.Mutex
	m  map[string][]byte
}

func newKV() *fakeKV { return &fakeKV{m: map[string][]byte{}} }

func (f *fakeKV) Get(key string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[key]
	if !ok {
		return nil, fmt.Errorf("get %q: %w", key, errNotFound)
	}
	return slices.Clone(v), nil
}

func (f *fakeKV) Set(key string, val []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[key] = slices.Clone(val)
	return nil
}

func (f *fakeKV) Delete(key string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.m, key)
	return nil
}

func (f *fakeKV) Keys(prefix string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k := range f.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

// call runs fn of a with args on kv.
func call(t *testing.T, a apps.App, kv apps.KV, fn, args string) (json.RawMessage, error) {
	t.Helper()
	return a.Call(context.Background(), apps.Call{Function: fn, Args: json.RawMessage(args), Memory: kv, NotFound: errNotFound})
}

// mustCall runs fn and decodes its result into a map.
func mustCall(t *testing.T, a apps.App, kv apps.KV, fn, args string) map[string]any {
	t.Helper()
	out, err := call(t, a, kv, fn, args)
	if err != nil {
		t.Fatalf("%s.%s(%s): %v", a.Manifest().Name, fn, args, err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("%s.%s result %s: %v", a.Manifest().Name, fn, out, err)
	}
	return m
}

func byName(t *testing.T, name string) apps.App {
	t.Helper()
	for _, a := range demo.Apps() {
		if a.Manifest().Name == name {
			return a
		}
	}
	t.Fatalf("no demo app %q", name)
	return nil
}

func TestManifests(t *testing.T) {
	t.Parallel()
	cat := apps.Default()
	var names []string
	for _, a := range demo.Apps() {
		m := a.Manifest()
		names = append(names, m.Name)
		if err := m.Check(cat); err != nil {
			t.Errorf("%s: Check: %v", m.Name, err)
		}
		if !m.Demo {
			t.Errorf("%s: Demo is false", m.Name)
		}
		for fn, own := range m.Provides {
			f, _ := m.Function(own)
			if entry, _ := cat.Get(fn); f.Effect != entry.Effect {
				t.Errorf("%s.%s effect %s, catalog %s is %s", m.Name, own, f.Effect, fn, entry.Effect)
			}
		}
	}
	want := []string{"metro_hail", "quick_ride", "mail", "drive", "health_companion", "travel_mate", "creative_muse", "symptom_solver"}
	if !slices.Equal(names, want) {
		t.Errorf("Apps() = %v, want %v", names, want)
	}
}

func TestManifestIsACopy(t *testing.T) {
	t.Parallel()
	a := demo.NewMail()
	m := a.Manifest()
	m.Clearance[0] = "medical"
	m.Provides["mail.send"] = "nope"
	m.Functions[0].Name = "nope"
	if m2 := a.Manifest(); m2.Clearance[0] != "personal" || m2.Provides["mail.send"] != "send" || m2.Functions[0].Name != "search" {
		t.Errorf("changing a returned manifest changed the app: %+v", m2)
	}
}

func TestRegistry(t *testing.T) {
	t.Parallel()
	r, err := apps.NewRegistry(apps.Default(), demo.Apps()...)
	if err != nil {
		t.Fatalf("NewRegistry: %v", err)
	}
	tests := map[string][]string{
		"ride.estimate_fare":      {"metro_hail", "quick_ride"},
		"mail.send":               {"mail"},
		"drive.read":              {"drive"},
		"health.book_appointment": {"health_companion"},
		"health.diagnose":         {"symptom_solver"},
		"travel.plan_trip":        {"travel_mate"},
		"writing.story":           {"creative_muse"},
		"files.read":              nil,
	}
	for fn, want := range tests {
		if got := r.Providers(fn); !slices.Equal(got, want) {
			t.Errorf("Providers(%q) = %v, want %v", fn, got, want)
		}
	}
}

// samples are valid arguments for every function of every demo app.
var samples = []struct{ app, fn, args string }{
	{"metro_hail", "estimate_fare", `{"from":"Central Station","to":"Airport"}`},
	{"quick_ride", "estimate_fare", `{"from":"Central Station","to":"Airport"}`},
	{"mail", "search", `{"query":"lunch"}`},
	{"mail", "search", `{}`},
	{"mail", "read", `{"id":"e2"}`},
	{"mail", "send", `{"to":"bob@example.com","subject":"hi","body":"hello","attachment":"x"}`},
	{"mail", "delete", `{"id":"e1"}`},
	{"drive", "search", `{"query":"financial"}`},
	{"drive", "read", `{"id":"d2"}`},
	{"health_companion", "book_appointment", `{"reason":"migraine for a week"}`},
	{"health_companion", "book_appointment", `{"reason":"check-up","date":"2025-04-01"}`},
	{"health_companion", "symptoms", `{}`},
	{"travel_mate", "plan_trip", `{"destination":"Lisbon","dates":"May 3-6","notes":"window seat"}`},
	{"travel_mate", "plan_trip", `{"destination":"Kyoto"}`},
	{"creative_muse", "story", `{"prompt":"a dragon who hates gold"}`},
	{"symptom_solver", "diagnose", `{"symptoms":"fever and a cough"}`},
}

func TestResultsMatchSchemas(t *testing.T) {
	t.Parallel()
	cat := apps.Default()
	covered := map[string]bool{}
	for _, s := range samples {
		t.Run(s.app+"."+s.fn, func(t *testing.T) {
			a := byName(t, s.app)
			m := a.Manifest()
			f, _ := m.Function(s.fn)
			covered[s.app+"."+s.fn] = true
			if err := apps.Validate(f.Params, json.RawMessage(s.args)); err != nil {
				t.Errorf("sample args do not match the params schema: %v", err)
			}
			out, err := call(t, a, newKV(), s.fn, s.args)
			if err != nil {
				t.Fatalf("Call: %v", err)
			}
			if err := apps.Validate(f.Result, out); err != nil {
				t.Errorf("result %s vs own schema: %v", out, err)
			}
			for fn, own := range m.Provides {
				if own != s.fn {
					continue
				}
				entry, _ := cat.Get(fn)
				if err := apps.Validate(entry.Request, json.RawMessage(s.args)); err != nil {
					t.Errorf("sample args vs catalog %s request: %v", fn, err)
				}
				if err := apps.Validate(entry.Response, out); err != nil {
					t.Errorf("result %s vs catalog %s response: %v", out, fn, err)
				}
			}
		})
	}
	for _, a := range demo.Apps() {
		for _, f := range a.Manifest().Functions {
			if !covered[a.Manifest().Name+"."+f.Name] {
				t.Errorf("no sample for %s.%s", a.Manifest().Name, f.Name)
			}
		}
	}
}

func TestBadCalls(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, app, fn, args string }{
		{"unknown function", "mail", "forward", `{}`},
		{"request_functionality is not an app function", "drive", apps.RequestFunctionality, `{}`},
		{"unknown field", "metro_hail", "estimate_fare", `{"from":"a","to":"b","tip":1}`},
		{"missing field", "quick_ride", "estimate_fare", `{"from":"a"}`},
		{"wrong type", "metro_hail", "estimate_fare", `{"from":"a","to":2}`},
		{"empty place", "metro_hail", "estimate_fare", `{"from":"","to":"b"}`},
		{"not an object", "drive", "search", `["q3"]`},
		{"not JSON", "drive", "search", `{"query":`},
		{"trailing data", "drive", "search", `{"query":"x"} {"query":"y"}`},
		{"missing email", "mail", "read", `{"id":"e9"}`},
		{"delete missing", "mail", "delete", `{"id":"s1"}`},
		{"not an address", "mail", "send", `{"to":"bob","subject":"s","body":"b"}`},
		{"missing document", "drive", "read", `{"id":"d9"}`},
		{"empty reason", "health_companion", "book_appointment", `{"reason":""}`},
		{"args to symptoms", "health_companion", "symptoms", `{"all":true}`},
		{"notes not a string", "travel_mate", "plan_trip", `{"destination":"Rome","notes":["asthma"]}`},
		{"empty prompt", "creative_muse", "story", `{"prompt":""}`},
		{"missing symptoms", "symptom_solver", "diagnose", `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if out, err := call(t, byName(t, tt.app), newKV(), tt.fn, tt.args); err == nil {
				t.Errorf("%s.%s(%s) = %s, want an error", tt.app, tt.fn, tt.args, out)
			}
		})
	}
}

func TestStatefulAppsNeedMemory(t *testing.T) {
	t.Parallel()
	for _, s := range []struct{ app, fn, args string }{
		{"mail", "search", `{}`},
		{"drive", "search", `{"query":""}`},
		{"health_companion", "symptoms", `{}`},
		{"travel_mate", "plan_trip", `{"destination":"Rome"}`},
	} {
		_, err := byName(t, s.app).Call(context.Background(), apps.Call{Function: s.fn, Args: json.RawMessage(s.args)})
		if err == nil {
			t.Errorf("%s.%s without memory: no error", s.app, s.fn)
		}
	}
	// Stateless apps need none.
	for _, s := range samples[:2] {
		if _, err := byName(t, s.app).Call(context.Background(), apps.Call{Function: s.fn, Args: json.RawMessage(s.args)}); err != nil {
			t.Errorf("%s.%s without memory: %v", s.app, s.fn, err)
		}
	}
}

func TestCancelledContext(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := demo.NewDrive().Call(ctx, apps.Call{Function: "search", Args: json.RawMessage(`{"query":""}`), Memory: newKV(), NotFound: errNotFound})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("Call on a cancelled context: %v, want context.Canceled", err)
	}
}

// TestDeterministic: the same call on fresh namespaces gives the same bytes.
func TestDeterministic(t *testing.T) {
	t.Parallel()
	for _, s := range samples {
		a, b := byName(t, s.app), byName(t, s.app)
		x, err1 := call(t, a, newKV(), s.fn, s.args)
		y, err2 := call(t, b, newKV(), s.fn, s.args)
		if err1 != nil || err2 != nil || string(x) != string(y) {
			t.Errorf("%s.%s: %s (%v) then %s (%v)", s.app, s.fn, x, err1, y, err2)
		}
	}
}
