package memory

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkDeleteChat deletes a chat of 40 turns (20 in the hub's log, 20
// in an app's, a summary and an entity) from a database that holds
// `others` other turns, on disk: "purge" is DeleteChat as it is (every
// version dropped from every table file, see purge.go), "tombstones" the
// delete it replaced (deletes alone; the text stays in the table files
// until a compaction happens to reach it). Run both in one process and
// compare with benchstat.
func BenchmarkDeleteChat(b *testing.B) {
	for _, others := range []int{1_000, 20_000, 100_000} {
		for _, mode := range []string{"tombstones", "purge"} {
			b.Run(fmt.Sprintf("others=%d/%s", others, mode), func(b *testing.B) {
				s, err := Open(b.TempDir(), Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer s.Close()
				hub, app := mustNamespace(b, s, "hub"), mustNamespace(b, s, "spoke/a")
				for c := range others / 1000 {
					seedLog(b, hub, fmt.Sprintf("bg-%04d", c), 500)
					seedLog(b, app, fmt.Sprintf("bg-%04d", c), 500)
				}
				pad := strings.Repeat("words of the chat ", 20)
				for b.Loop() {
					b.StopTimer()
					c, err := s.CreateChat("doomed")
					if err != nil {
						b.Fatal(err)
					}
					for i := range 20 {
						mustAppend(b, hub, c.ID, fmt.Sprintf("%d %s", i, pad))
						mustAppend(b, app, c.ID, fmt.Sprintf("%d %s", i, pad))
					}
					if err := app.LongTerm().SetSummary(Summary{Chat: c.ID, Text: pad}); err != nil {
						b.Fatal(err)
					}
					if err := app.LongTerm().PutEntities(Entity{Key: "k-" + c.ID, Value: pad, Chat: c.ID}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					if mode == "purge" {
						err = s.DeleteChat(c.ID)
					} else {
						err = s.tombstoneChat(c.ID)
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// tombstoneChat deletes a chat's keys as DeleteChat did before purge.
func (s *Store) tombstoneChat(id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	keys, err := s.chatLogKeys(id, 1<<30)
	if err != nil {
		return err
	}
	mem, err := s.chatMemoryKeys(id)
	if err != nil {
		return err
	}
	keys = append(append(keys, mem...), activeKey(id), chatKey(id))
	return s.db.Update(deleteAll(keys))
}
