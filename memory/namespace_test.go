package memory

import (
	"bytes"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/dgraph-io/badger/v4"
)

func TestNamespaceOwners(t *testing.T) {
	t.Parallel()
	s := openEphemeralTest(t)
	tests := []struct {
		owner string
		ok    bool
	}{
		{"hub", true},
		{"spoke/a", true},
		{"spoke/notes", true},
		{"spoke/0_x-y", true},
		{"spoke/" + strings.Repeat("a", 63), true},
		{"spoke/" + strings.Repeat("a", 64), false},
		{"", false},
		{"Hub", false},
		{"hub/x", false},
		{"hubx", false},
		{"spoke", false},
		{"spoke/", false},
		{"spoke/-a", false},
		{"spoke/_a", false},
		{"spoke/A", false},
		{"spoke/a/b", false},
		{"spoke/a\n", false},
		{"spoke/a\x00", false},
		{"spoke/../hub", false},
		{"spoke/a b", false},
		{"other/a", false},
	}
	for _, tt := range tests {
		n, err := s.Namespace(tt.owner)
		if tt.ok != (err == nil) {
			t.Errorf("Namespace(%q) error = %v, want ok=%v", tt.owner, err, tt.ok)
			continue
		}
		if tt.ok && n.Owner() != tt.owner {
			t.Errorf("Namespace(%q).Owner() = %q", tt.owner, n.Owner())
		}
	}
}

// crafted keys and chats that look like separators, encodings or other
// owners' prefixes.
var crafted = []string{
	"plain",
	"b",
	"/b",
	"spoke/ab",
	"../hub",
	"\x00",
	"\xff\xff\xff",
	"k",
	"kx",
	"l",
	"lx",
	"c",
	"\x01\x08spoke/abkx",
	"\x01\x03hubkx",
	"\x01\x07spoke/bkx",
	string(ownerPrefix("spoke/ab")) + "k",
	string(ownerPrefix("hub")) + "c",
}

func TestNamespaceIsolation(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a := mustNamespace(t, s, "spoke/a")
	for _, k := range crafted {
		if err := a.Set(k, []byte("secret of a")); err != nil {
			t.Fatalf("Set(%q): %v", k, err)
		}
		mustAppend(t, a, k, "secret input of a")
	}
	// Every key a wrote carries a's prefix and nobody else's.
	ap := ownerPrefix("spoke/a")
	err := s.db.View(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{})
		defer it.Close()
		for it.Rewind(); it.Valid(); it.Next() {
			if k := it.Item().Key(); !bytes.HasPrefix(k, ap) {
				t.Errorf("key %q escaped the prefix of spoke/a", k)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	for _, owner := range []string{"spoke/ab", "spoke/b", "hub", "spoke/aa", "spoke/ak", "spoke/al"} {
		t.Run(owner, func(t *testing.T) {
			t.Parallel()
			n := mustNamespace(t, s, owner)
			for _, k := range crafted {
				if v, err := n.Get(k); !errors.Is(err, ErrNotFound) {
					t.Errorf("Get(%q) = %q, %v; want ErrNotFound", k, v, err)
				}
				if its, err := n.Interactions(k); err != nil || len(its) != 0 {
					t.Errorf("Interactions(%q) = %v, %v; want none", k, its, err)
				}
				if its, err := n.Recent(k, 10); err != nil || len(its) != 0 {
					t.Errorf("Recent(%q) = %v, %v; want none", k, its, err)
				}
			}
			for _, p := range []string{"", "\x00", "b", "spoke", "\x01"} {
				if keys, err := n.Keys(p); err != nil || len(keys) != 0 {
					t.Errorf("Keys(%q) = %q, %v; want none", p, keys, err)
				}
			}
		})
	}
}

func TestNamespaceKV(t *testing.T) {
	t.Parallel()
	s := openEphemeralTest(t)
	n := mustNamespace(t, s, "spoke/notes")
	other := mustNamespace(t, s, "spoke/notes2")
	mustAppend(t, n, "chat", "log entries are not keys")
	for _, k := range []string{"entity/b", "entity/a", "summary", "entityx"} {
		if err := n.Set(k, []byte("v:"+k)); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Set("entity/c", []byte("other")); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete("summary"); err != nil {
		t.Fatal(err)
	}
	if err := n.Delete("never-set"); err != nil {
		t.Errorf("Delete of a missing key: %v", err)
	}

	tests := []struct {
		prefix string
		want   []string
	}{
		{"", []string{"entity/a", "entity/b", "entityx"}},
		{"entity/", []string{"entity/a", "entity/b"}},
		{"entity", []string{"entity/a", "entity/b", "entityx"}},
		{"summary", nil},
		{"zzz", nil},
	}
	for _, tt := range tests {
		got, err := n.Keys(tt.prefix)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("Keys(%q) = %q, %v; want %q", tt.prefix, got, err, tt.want)
		}
	}
	if v, err := n.Get("entity/a"); err != nil || string(v) != "v:entity/a" {
		t.Errorf("Get(entity/a) = %q, %v", v, err)
	}
	if _, err := n.Get("summary"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(deleted) error = %v, want ErrNotFound", err)
	}
	if err := n.Set("", []byte("x")); err == nil {
		t.Error("Set with an empty key succeeded")
	}
}

// The hub's plain keys cannot reach the chat index it shares a prefix with.
func TestHubKeysDoNotReachChats(t *testing.T) {
	t.Parallel()
	s := openEphemeralTest(t)
	hub := mustNamespace(t, s, "hub")
	c, err := s.CreateChat("private")
	if err != nil {
		t.Fatal(err)
	}
	if keys, err := hub.Keys(""); err != nil || len(keys) != 0 {
		t.Errorf("hub Keys = %q, %v; want none", keys, err)
	}
	for _, k := range []string{c.ID, "c" + c.ID, "\x00c" + c.ID} {
		if err := hub.Set(k, []byte(`{"id":"forged"}`)); err != nil {
			t.Fatal(err)
		}
		if err := hub.Delete(k); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Chat(c.ID)
	if err != nil || got.Title != "private" {
		t.Errorf("Chat after hub writes = %+v, %v", got, err)
	}
}
