package memory

import (
	"fmt"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/memory/memorytest"
)

// TestForgetMeansGone: after a chat is deleted and an owner forgotten, a
// scan of every file of the data directory — badger's tables decoded, not
// grepped — finds none of their text, whether it had reached the table
// files or was still in the memtable; what sits beside it (another chat, an
// entity whose key begins with a deleted one's, another owner) stays.
func TestForgetMeansGone(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	doomed, err := s.CreateChat("GONE-title")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := s.CreateChat("KEPT-title")
	if err != nil {
		t.Fatal(err)
	}
	fill := func(s *Store, round string) {
		hub, a, y := mustNamespace(t, s, "hub"), mustNamespace(t, s, "spoke/a"), mustNamespace(t, s, "spoke/y")
		for i := range 300 {
			mustAppend(t, hub, doomed.ID, fmt.Sprintf("GONE-hub-%s-%d %s", round, i, strings.Repeat("pad ", 20)))
			mustAppend(t, a, doomed.ID, fmt.Sprintf("GONE-app-%s-%d", round, i))
			mustAppend(t, hub, kept.ID, fmt.Sprintf("KEPT-hub-%s-%d", round, i))
			mustAppend(t, y, kept.ID, fmt.Sprintf("YGONE-%s-%d", round, i))
		}
		must(t, a.LongTerm().SetSummary(Summary{Chat: doomed.ID, Text: "GONE-summary-" + round}))
		must(t, a.LongTerm().SetSummary(Summary{Chat: kept.ID, Text: "KEPT-summary-" + round}))
		must(t, a.LongTerm().PutEntities(
			Entity{Key: "trip", Value: "GONE-entity-" + round, Chat: doomed.ID},
			Entity{Key: "trip.dates", Value: "KEPT-entity-" + round, Chat: kept.ID}))
		rec, err := hub.Record("a")
		must(t, err)
		must(t, rec.SetSummary(Summary{Chat: doomed.ID, Text: "GONE-record-" + round}))
		must(t, y.Set("note", []byte("YGONE-kv-"+round)))
	}
	fill(s, "old")
	must(t, s.Close())

	// The scan reads what the tables hold: before any delete it finds it.
	hits, err := memorytest.Find(dir, "GONE-hub-old-7 ", "GONE-entity-old", "YGONE-kv-old")
	must(t, err)
	if decoded(hits) != 3 {
		t.Fatalf("the scan should find the text in the tables before the delete: %v", hits)
	}

	// Later writes stay in the memtable (and its write-ahead file) until
	// the delete.
	s, err = Open(dir, Options{})
	must(t, err)
	fill(s, "new")
	must(t, s.DeleteChat(doomed.ID))
	must(t, s.DeleteOwner("spoke/y"))

	// What sits beside it is intact.
	if its, err := mustNamespace(t, s, "hub").Interactions(kept.ID); err != nil || len(its) != 600 {
		t.Fatalf("kept chat: %d turns, %v", len(its), err)
	}
	if e, err := mustNamespace(t, s, "spoke/a").LongTerm().Entity("trip.dates"); err != nil || e.Value != "KEPT-entity-new" {
		t.Fatalf("the entity beside the deleted one: %+v, %v", e, err)
	}
	if _, err := mustNamespace(t, s, "spoke/a").LongTerm().Entity("trip"); err == nil {
		t.Fatal("the deleted chat's entity is still there")
	}
	if _, err := s.Chat(kept.ID); err != nil {
		t.Fatalf("kept chat: %v", err)
	}
	purges := s.purges.Load()
	must(t, s.Close())

	hits, err = memorytest.Find(dir, "GONE-", "YGONE-")
	must(t, err)
	if len(hits) > 0 {
		t.Fatalf("deleted text is still in the data directory:\n%v", hits)
	}
	if purges != 2 {
		t.Fatalf("purges = %d, want 2", purges)
	}
	hits, err = memorytest.Find(dir, "KEPT-hub-new-299", "KEPT-entity-new", "KEPT-summary-new")
	must(t, err)
	if decoded(hits) != 3 {
		t.Fatalf("the kept text should still be in the tables: %v", hits)
	}
}

func decoded(hits []memorytest.Hit) int {
	seen := map[string]bool{}
	for _, h := range hits {
		if h.How == "decoded" {
			seen[h.Needle] = true
		}
	}
	return len(seen)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
