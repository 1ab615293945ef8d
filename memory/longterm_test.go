package memory

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestLongTermSummariesAndEntities(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	n := mustNamespace(t, s, "spoke/mail")
	lt := n.LongTerm()
	if _, err := lt.Summary("c1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("missing summary: %v", err)
	}
	if err := lt.SetSummary(Summary{Chat: "c1", Text: "read two emails", Through: 3, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	got, err := lt.Summary("c1")
	if err != nil || got.Text != "read two emails" || got.Through != 3 || got.Updated.IsZero() {
		t.Fatalf("summary %+v %v", got, err)
	}
	if err := lt.PutEntities(Entity{Key: "alice.email", Value: "alice@example.com", Source: "m"}, Entity{Key: "lunch.day", Value: "Friday"}); err != nil {
		t.Fatal(err)
	}
	es, _ := lt.Entities()
	if len(es) != 2 || es[0].Key != "alice.email" || es[1].Time.IsZero() {
		t.Fatalf("entities %+v", es)
	}
	hits, _ := lt.Search("when is LUNCH?", 5)
	if len(hits) != 1 || hits[0].Value != "Friday" {
		t.Fatalf("search %+v", hits)
	}
	// The plain key-value space (what an app sees) cannot reach it.
	keys, _ := n.Keys("")
	if len(keys) != 0 {
		t.Fatalf("long-term keys leak into the plain space: %v", keys)
	}
	if err := lt.Clear(); err != nil {
		t.Fatal(err)
	}
	if es, _ := lt.Entities(); len(es) != 0 {
		t.Fatalf("cleared entities %+v", es)
	}
	if ss, _ := lt.Summaries(); len(ss) != 0 {
		t.Fatalf("cleared summaries %+v", ss)
	}
}

func TestRecordsAreTheHubsOnly(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	hub := mustNamespace(t, s, "hub")
	mail := mustNamespace(t, s, "spoke/mail")
	if _, err := mail.Record("notes"); err == nil {
		t.Fatal("a spoke's namespace must hold no records")
	}
	for _, app := range []string{"mail", "mailx", "notes"} {
		r, err := hub.Record(app)
		if err != nil {
			t.Fatal(err)
		}
		if err := r.PutEntities(Entity{Key: "k", Value: "of " + app}); err != nil {
			t.Fatal(err)
		}
	}
	apps, _ := hub.Records()
	if !slices.Equal(apps, []string{"mail", "mailx", "notes"}) {
		t.Fatalf("records %v", apps)
	}
	r, _ := hub.Record("mail")
	es, _ := r.Entities()
	if len(es) != 1 || es[0].Value != "of mail" {
		t.Fatalf("record of mail %+v", es)
	}
	// The hub's own long-term memory is apart from its records.
	if es, _ := hub.LongTerm().Entities(); len(es) != 0 {
		t.Fatalf("records leak into the hub's own entities: %+v", es)
	}
	if err := r.Clear(); err != nil {
		t.Fatal(err)
	}
	if apps, _ := hub.Records(); !slices.Equal(apps, []string{"mailx", "notes"}) {
		t.Fatalf("after clearing mail: %v", apps)
	}
}

func TestEntitiesAreBounded(t *testing.T) {
	t.Parallel()
	s := openEphemeralTest(t)
	lt := mustNamespace(t, s, "hub").LongTerm()
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var es []Entity
	for i := range MaxEntities + 10 {
		es = append(es, Entity{Key: fmt.Sprintf("k%04d", i), Value: "v", Time: start.Add(time.Duration(i) * time.Second)})
	}
	if err := lt.PutEntities(es...); err != nil {
		t.Fatal(err)
	}
	got, _ := lt.Entities()
	if len(got) != MaxEntities || got[0].Key != "k0010" {
		t.Fatalf("kept %d, first %q", len(got), got[0].Key)
	}
}

func TestDeleteOwnerAndOwners(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	hub := mustNamespace(t, s, "hub")
	a := mustNamespace(t, s, "spoke/a")
	ab := mustNamespace(t, s, "spoke/ab")
	for _, n := range []*Namespace{hub, a, ab} {
		mustAppend(t, n, "c", "hello")
		n.Set("k", []byte("v"))
		n.LongTerm().SetSummary(Summary{Chat: "c", Text: "x"})
	}
	owners, _ := s.Owners()
	if !slices.Equal(owners, []string{"hub", "spoke/a", "spoke/ab"}) {
		t.Fatalf("owners %v", owners)
	}
	if err := s.DeleteOwner("hub"); err == nil {
		t.Fatal("the hub's namespace must not be deletable")
	}
	if err := s.DeleteOwner("spoke/a"); err != nil {
		t.Fatal(err)
	}
	owners, _ = s.Owners()
	if !slices.Equal(owners, []string{"hub", "spoke/ab"}) {
		t.Fatalf("owners after delete %v", owners)
	}
	if its, _ := ab.Interactions("c"); len(its) != 1 {
		t.Fatal("deleting spoke/a touched spoke/ab")
	}
}

func TestRemoveOneInteraction(t *testing.T) {
	t.Parallel()
	n := mustNamespace(t, openEphemeralTest(t), "hub")
	mustAppend(t, n, "c", "one")
	two := mustAppend(t, n, "c", "two")
	if err := n.Remove("c", two.Seq); err != nil {
		t.Fatal(err)
	}
	if its, _ := n.Interactions("c"); len(its) != 1 || its[0].Input != "one" {
		t.Fatalf("left %+v", its)
	}
}

func TestScratchNeverWrites(t *testing.T) {
	t.Parallel()
	n := mustNamespace(t, openTest(t), "hub")
	n.Set("grants/a", []byte("A"))
	n.Set("grants/b", []byte("B"))
	sc := NewScratch(n)
	sc.Set("grants/c", []byte("C"))
	sc.Set("grants/a", []byte("A2"))
	sc.Delete("grants/b")
	if v, _ := sc.Get("grants/a"); string(v) != "A2" {
		t.Fatalf("overlay read %q", v)
	}
	if _, err := sc.Get("grants/b"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted key: %v", err)
	}
	if keys, _ := sc.Keys("grants/"); !slices.Equal(keys, []string{"grants/a", "grants/c"}) {
		t.Fatalf("keys %v", keys)
	}
	if keys, _ := n.Keys(""); !slices.Equal(keys, []string{"grants/a", "grants/b"}) {
		t.Fatalf("the namespace changed: %v", keys)
	}
	if v, _ := n.Get("grants/a"); string(v) != "A" {
		t.Fatalf("the namespace changed: %q", v)
	}
}

func TestDeleteChatForgetsItsSummariesAndEntities(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	c, _ := s.CreateChat("x")
	other, _ := s.CreateChat("y")
	hub := mustNamespace(t, s, "hub")
	mail := mustNamespace(t, s, "spoke/mail")
	rec, _ := hub.Record("mail")
	for _, lt := range []*LongTerm{hub.LongTerm(), mail.LongTerm(), rec} {
		for _, chat := range []string{c.ID, other.ID} {
			lt.SetSummary(Summary{Chat: chat, Text: "about " + chat})
			lt.PutEntities(Entity{Key: "from." + chat, Value: "v", Chat: chat})
		}
	}
	if err := s.DeleteChat(c.ID); err != nil {
		t.Fatal(err)
	}
	for _, lt := range []*LongTerm{hub.LongTerm(), mail.LongTerm(), rec} {
		if _, err := lt.Summary(c.ID); !errors.Is(err, ErrNotFound) {
			t.Fatalf("summary of the deleted chat survived: %v", err)
		}
		if _, err := lt.Summary(other.ID); err != nil {
			t.Fatalf("another chat's summary went: %v", err)
		}
		es, _ := lt.Entities()
		if len(es) != 1 || es[0].Chat != other.ID {
			t.Fatalf("entities %+v", es)
		}
	}
}
