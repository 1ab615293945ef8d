package memory

import (
	"bytes"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

func chatIDs(cs []Chat) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func TestChats(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	if cs, err := s.Chats(); err != nil || len(cs) != 0 {
		t.Fatalf("Chats on an empty store = %v, %v", cs, err)
	}
	idRE := regexp.MustCompile(`^\d{8}T\d{6}-[0-9a-f]{6}$`)
	var made []Chat
	for _, title := range []string{"first", "second", "third"} {
		c, err := s.CreateChat(title)
		if err != nil {
			t.Fatal(err)
		}
		if !idRE.MatchString(c.ID) || c.Title != title || c.Created.IsZero() || !c.Updated.Equal(c.Created) {
			t.Fatalf("CreateChat(%q) = %+v", title, c)
		}
		made = append(made, c)
	}
	if made[0].ID == made[1].ID || made[1].ID == made[2].ID {
		t.Fatalf("duplicate chat ids: %v", chatIDs(made))
	}

	// Give them distinct Updated times in the past: second, then third, then first.
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i, hours := range []int{1, 3, 2} {
		c := made[i]
		c.Updated = base.Add(time.Duration(hours) * time.Hour)
		if err := s.UpdateChat(c); err != nil {
			t.Fatal(err)
		}
	}
	renamed := made[2]
	renamed.Title, renamed.Updated = "third, renamed", base.Add(2*time.Hour)
	if err := s.UpdateChat(renamed); err != nil {
		t.Fatal(err)
	}
	list, err := s.Chats()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{made[1].ID, made[2].ID, made[0].ID}; !slices.Equal(chatIDs(list), want) {
		t.Fatalf("Chats order = %v, want %v", chatIDs(list), want)
	}
	if list[1].Title != "third, renamed" || !list[1].Created.Equal(made[2].Created) {
		t.Errorf("after UpdateChat: %+v", list[1])
	}

	// A spoke's append leaves the chat record alone; the hub's moves the
	// chat to the top.
	mustAppend(t, mustNamespace(t, s, "spoke/a"), made[0].ID, "hello")
	list, err = s.Chats()
	if err != nil {
		t.Fatal(err)
	}
	if list[0].ID == made[0].ID {
		t.Errorf("a spoke's append moved the chat: %+v", list[0])
	}
	mustAppend(t, mustNamespace(t, s, "hub"), made[0].ID, "hello")
	list, err = s.Chats()
	if err != nil {
		t.Fatal(err)
	}
	if list[0].ID != made[0].ID || !list[0].Updated.After(base.Add(3*time.Hour)) {
		t.Errorf("after Append, Chats()[0] = %+v, want %s", list[0], made[0].ID)
	}

	tests := []struct {
		name string
		err  error
	}{
		{"Chat", func() error { _, err := s.Chat("nope"); return err }()},
		{"UpdateChat", s.UpdateChat(Chat{ID: "nope", Title: "x"})},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, ErrNotFound) {
			t.Errorf("%s of a missing chat: error = %v, want ErrNotFound", tt.name, tt.err)
		}
	}
}

func TestDeleteChat(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	owners := []string{"hub", "spoke/a", "spoke/ab", "spoke/b"}
	doomed, err := s.CreateChat("doomed")
	if err != nil {
		t.Fatal(err)
	}
	kept, err := s.CreateChat("kept")
	if err != nil {
		t.Fatal(err)
	}
	// A chat whose id extends the doomed one's must survive too.
	longer := doomed.ID + "x"
	for _, owner := range owners {
		n := mustNamespace(t, s, owner)
		for _, chat := range []string{doomed.ID, kept.ID, longer} {
			mustAppend(t, n, chat, owner+" in "+chat)
			mustAppend(t, n, chat, owner+" again")
		}
		if err := n.Set(doomed.ID, []byte("a plain key named like the chat")); err != nil {
			t.Fatal(err)
		}
	}
	// More than one delete batch in one namespace.
	seedLog(t, mustNamespace(t, s, "spoke/b"), doomed.ID, deleteBatch+10)

	if err := s.DeleteChat(doomed.ID); err != nil {
		t.Fatalf("DeleteChat: %v", err)
	}
	if _, err := s.Chat(doomed.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Chat(deleted) error = %v, want ErrNotFound", err)
	}
	list, err := s.Chats()
	if err != nil || !slices.Equal(chatIDs(list), []string{kept.ID}) {
		t.Errorf("Chats after delete = %v, %v; want [%s]", chatIDs(list), err, kept.ID)
	}
	for _, owner := range owners {
		n := mustNamespace(t, s, owner)
		tests := []struct {
			chat string
			want int
		}{
			{doomed.ID, 0},
			{kept.ID, 2},
			{longer, 2},
		}
		for _, tt := range tests {
			got, err := n.Interactions(tt.chat)
			if err != nil || len(got) != tt.want {
				t.Errorf("%s: Interactions(%q) = %d, %v; want %d", owner, tt.chat, len(got), err, tt.want)
			}
		}
		if _, err := n.Get(doomed.ID); err != nil {
			t.Errorf("%s: plain key named like the chat was removed: %v", owner, err)
		}
	}
	if err := s.DeleteChat(doomed.ID); err != nil {
		t.Errorf("second DeleteChat: %v", err)
	}
}

// versions counts the versions badger holds of key (tombstones included).
func versions(tb testing.TB, s *Store, key []byte) int {
	tb.Helper()
	n := 0
	err := s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: key, AllVersions: true})
		defer it.Close()
		for it.Seek(key); it.ValidForPrefix(key); it.Next() {
			if bytes.Equal(it.Item().Key(), key) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

// A turn does not rewrite the chat's record: its versions do not grow
// with the turns (badger keeps each one until a compaction, and a scan of
// the chat index steps over them all); the chat's Updated still follows
// the hub's last turn.
func TestTurnsDoNotRewriteTheChatRecord(t *testing.T) {
	t.Parallel()
	for _, ephemeral := range []bool{false, true} {
		s := openTest(t)
		if ephemeral {
			s = openEphemeralTest(t)
		}
		c, err := s.CreateChat("")
		if err != nil {
			t.Fatal(err)
		}
		c.Title = "titled on the first turn"
		if err := s.UpdateChat(c); err != nil {
			t.Fatal(err)
		}
		hub, spoke := mustNamespace(t, s, "hub"), mustNamespace(t, s, "spoke/a")
		var last Interaction
		for i := range 50 {
			last = mustAppend(t, hub, c.ID, fmt.Sprintf("turn %d", i))
			mustAppend(t, spoke, c.ID, "step")
			last.Status, last.Output = StatusOK, "answer"
			if err := hub.Update(last); err != nil {
				t.Fatal(err)
			}
		}
		if got := versions(t, s, chatKey(c.ID)); got != 2 {
			t.Errorf("ephemeral=%v: the chat record has %d versions after 50 turns, want 2 (created, titled)", ephemeral, got)
		}
		got, err := s.Chat(c.ID)
		if err != nil || !got.Updated.Equal(last.Started) || got.Title != c.Title || !got.Created.Equal(c.Created) {
			t.Errorf("ephemeral=%v: Chat = %+v, %v; want Updated %v (the last turn's start)", ephemeral, got, err, last.Started)
		}
		list, err := s.Chats()
		if err != nil || len(list) != 1 || !list[0].Updated.Equal(last.Started) {
			t.Errorf("ephemeral=%v: Chats = %+v, %v", ephemeral, list, err)
		}
		if err := s.DeleteChat(c.ID); err != nil {
			t.Fatal(err)
		}
		for _, key := range [][]byte{chatKey(c.ID), activeKey(c.ID)} {
			err := s.view(func(txn *badger.Txn) error { _, err := txn.Get(key); return err })
			if !errors.Is(err, badger.ErrKeyNotFound) {
				t.Errorf("ephemeral=%v: after DeleteChat, %q: %v", ephemeral, key, err)
			}
		}
	}
}

// Owners lists an owner whose first key is deleted or rewritten many
// times by its first live key, and drops one whose keys are all deleted.
func TestOwnersPastDeletedAndRewrittenKeys(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	a, b, c := mustNamespace(t, s, "spoke/a"), mustNamespace(t, s, "spoke/b"), mustNamespace(t, s, "spoke/c")
	for i := range 200 {
		if err := a.Set("a-first", []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range []string{"a", "b", "c"} {
		if err := b.Set(k, []byte("v")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Delete("a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Set("only", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("only"); err != nil {
		t.Fatal(err)
	}
	got, err := s.Owners()
	if want := []string{"spoke/a", "spoke/b"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("Owners = %v, %v; want %v", got, err, want)
	}
}
