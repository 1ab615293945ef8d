package notes

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/appstest"
)

var errNotFound = errors.New("not found")

// fakeKV is an in-memory apps.KV that wraps errNotFound as the real
// namespace does.
type fakeKV struct {
	m       map[string][]byte
	failSet bool
}

func newFakeKV() *fakeKV { return &fakeKV{m: map[string][]byte{}} }

func (f *fakeKV) Get(key string) ([]byte, error) {
	v, ok := f.m[key]
	if !ok {
		return nil, fmt.Errorf("get %q: %w", key, errNotFound)
	}
	return slices.Clone(v), nil
}

func (f *fakeKV) Set(key string, val []byte) error {
	if f.failSet {
		return errors.New("disk full")
	}
	f.m[key] = slices.Clone(val)
	return nil
}

func (f *fakeKV) Delete(key string) error { delete(f.m, key); return nil }

func (f *fakeKV) Keys(prefix string) ([]string, error) {
	var out []string
	for k := range f.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out, nil
}

func call(t *testing.T, a *App, kv apps.KV, fn, args string) (map[string]any, error) {
	t.Helper()
	out, err := a.Call(context.Background(), apps.Call{Function: fn, Args: json.RawMessage(args), Memory: kv, NotFound: errNotFound})
	if err != nil {
		return nil, err
	}
	appstest.CheckResult(t, a, fn, out)
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatal(err)
	}
	return m, nil
}

func TestManifest(t *testing.T) {
	if err := New().Manifest().Check(apps.Default()); err != nil {
		t.Fatal(err)
	}
}

func titles(m map[string]any) []string {
	var out []string
	for _, n := range m["notes"].([]any) {
		out = append(out, n.(map[string]any)["title"].(string))
	}
	return out
}

func TestNotes(t *testing.T) {
	a, kv := New(), newFakeKV()
	add := func(title, body string) string {
		t.Helper()
		b, _ := json.Marshal(map[string]string{"title": title, "body": body})
		m, err := call(t, a, kv, "add", string(b))
		if err != nil {
			t.Fatal(err)
		}
		return m["id"].(string)
	}
	ids := []string{
		add("Groceries", "Milk, EGGS and bread"),
		add("Dentist", "Tuesday at 10, bring the insurance card"),
		add("Trip ideas", "Lisbon in May; eggs benedict at the café"),
	}
	if !slices.Equal(ids, []string{"1", "2", "3"}) {
		t.Errorf("ids = %v, want 1 2 3", ids)
	}
	tests := []struct {
		fn, args string
		want     []string
	}{
		{"search", `{"query":"eggs"}`, []string{"Groceries", "Trip ideas"}},
		{"search", `{"query":"DENTIST"}`, []string{"Dentist"}},
		{"search", `{"query":"eggs lisbon"}`, []string{"Trip ideas"}},
		{"search", `{"query":"café"}`, []string{"Trip ideas"}},
		{"search", `{"query":"nothing like this"}`, nil},
		{"search", `{"query":""}`, []string{"Groceries", "Dentist", "Trip ideas"}},
		{"search", `{}`, []string{"Groceries", "Dentist", "Trip ideas"}},
		{"list", `{}`, []string{"Groceries", "Dentist", "Trip ideas"}},
	}
	for _, tt := range tests {
		m, err := call(t, a, kv, tt.fn, tt.args)
		if err != nil || !slices.Equal(titles(m), tt.want) {
			t.Errorf("%s(%s) = %v, %v; want %v", tt.fn, tt.args, titles(m), err, tt.want)
		}
	}
	m, err := call(t, a, kv, "read", `{"id":"2"}`)
	if err != nil || m["title"] != "Dentist" || m["body"] != "Tuesday at 10, bring the insurance card" || m["id"] != "2" {
		t.Errorf("read 2 = %v, %v", m, err)
	}
	if m, err := call(t, a, kv, "delete", `{"id":"2"}`); err != nil || m["ok"] != true {
		t.Errorf("delete 2 = %v, %v", m, err)
	}
	for _, fn := range []string{"read", "delete"} {
		for _, id := range []string{"2", "99", "../seq", "", "seq"} {
			if _, err := call(t, a, kv, fn, `{"id":"`+id+`"}`); err == nil || err.Error() != fmt.Sprintf("no note %q", id) {
				t.Errorf("%s(%q) error = %v", fn, id, err)
			}
		}
	}
	if id := add("After delete", ""); id != "4" {
		t.Errorf("id after a delete = %s, want 4 (ids are never reused)", id)
	}
	m, _ = call(t, a, kv, "list", `{}`)
	if got := titles(m); !slices.Equal(got, []string{"Groceries", "Trip ideas", "After delete"}) {
		t.Errorf("list after delete = %v", got)
	}
}

func TestSearchCapped(t *testing.T) {
	a, kv := New(), newFakeKV()
	for i := range maxResults + 5 {
		if _, err := call(t, a, kv, "add", fmt.Sprintf(`{"title":"n%d","body":"x"}`, i)); err != nil {
			t.Fatal(err)
		}
	}
	m, err := call(t, a, kv, "list", `{}`)
	if err != nil || len(m["notes"].([]any)) != maxResults || m["truncated"] != true {
		t.Errorf("list of %d notes: %d returned, truncated %v, %v", maxResults+5, len(m["notes"].([]any)), m["truncated"], err)
	}
	if got := titles(m); got[0] != "n0" || got[9] != "n9" || got[10] != "n10" {
		t.Errorf("notes are not in numeric id order: %v", got[:11])
	}
}

func TestErrors(t *testing.T) {
	a := New()
	tests := []struct {
		fn, args string
		kv       apps.KV
		want     string
	}{
		{"rename", `{}`, newFakeKV(), `no function "rename"`},
		{"add", `{"title":"x"}`, newFakeKV(), "arguments"},
		{"add", `{"title":"x","body":"y","tags":[]}`, newFakeKV(), "arguments"},
		{"add", `{"title":"  ","body":"y"}`, newFakeKV(), "needs a title"},
		{"add", `{"title":"` + strings.Repeat("t", maxTitle+1) + `","body":""}`, newFakeKV(), "title is longer"},
		{"add", `{"title":"x","body":"y"}`, &fakeKV{m: map[string][]byte{}, failSet: true}, "disk full"},
		{"add", `{"title":"x","body":"y"}`, &fakeKV{m: map[string][]byte{"seq": []byte("zz")}}, "counter is damaged"},
		{"read", `{"id":2}`, newFakeKV(), "arguments"},
		{"read", `{"id":"1"}`, &fakeKV{m: map[string][]byte{"note/1": []byte("{")}}, "damaged"},
		{"list", `{"query":"x"}`, newFakeKV(), "arguments"},
		{"list", `{}`, nil, "no memory"},
	}
	for _, tt := range tests {
		c := apps.Call{Function: tt.fn, Args: json.RawMessage(tt.args), NotFound: errNotFound}
		if tt.kv != nil {
			c.Memory = tt.kv
		}
		_, err := a.Call(context.Background(), c)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s(%.40s) error = %v, want %q", tt.fn, tt.args, err, tt.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Call(ctx, apps.Call{Function: "list", Memory: newFakeKV(), NotFound: errNotFound}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled call: %v", err)
	}
}

// syncKV is fakeKV safe for concurrent use, as a memory namespace is.
type syncKV struct {
	mu sync.Mutex
	kv *fakeKV
}

func (s *syncKV) Get(k string) ([]byte, error) {
	s.mu.Lock()
	v, err := s.kv.Get(k)
	s.mu.Unlock()
	runtime.Gosched() // let another add interleave, as goroutines of two spokes would
	return v, err
}
func (s *syncKV) Set(k string, v []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kv.Set(k, v)
}
func (s *syncKV) Delete(k string) error { s.mu.Lock(); defer s.mu.Unlock(); return s.kv.Delete(k) }
func (s *syncKV) Keys(p string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.kv.Keys(p)
}

// Notes added at once from several chats — spokes of their own, one
// shared memory — keep distinct ids: none is lost.
func TestConcurrentAddsKeepEveryNote(t *testing.T) {
	t.Parallel()
	kv := &syncKV{kv: newFakeKV()}
	const workers, each = 8, 50
	var wg sync.WaitGroup
	ids := make(chan string, workers*each)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := New() // each chat's spoke has its own instance
			for i := range each {
				out, err := a.Call(context.Background(), apps.Call{Function: "add", Args: json.RawMessage(fmt.Sprintf(`{"title":"n%d-%d","body":"x"}`, w, i)), Memory: kv, NotFound: errNotFound})
				if err != nil {
					t.Error(err)
					return
				}
				var r struct{ ID string }
				_ = json.Unmarshal(out, &r)
				ids <- r.ID
			}
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if seen[id] {
			t.Fatalf("id %s drawn twice", id)
		}
		seen[id] = true
	}
	keys, _ := kv.Keys(notePrefix)
	if len(seen) != workers*each || len(keys) != workers*each {
		t.Fatalf("%d ids, %d notes stored; want %d", len(seen), len(keys), workers*each)
	}
}
