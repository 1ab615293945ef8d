package memory

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

func BenchmarkRecent(b *testing.B) {
	s := openTest(b)
	n := mustNamespace(b, s, "hub")
	seedLog(b, n, "chat", 100_000)
	b.ReportAllocs()
	for b.Loop() {
		got, err := n.Recent("chat", 20)
		if err != nil || len(got) != 20 || got[19].Seq != 100_000 {
			b.Fatalf("Recent = %d items, %v", len(got), err)
		}
	}
}

func BenchmarkAppend(b *testing.B) {
	for _, ephemeral := range []bool{false, true} {
		b.Run(fmt.Sprintf("ephemeral=%v", ephemeral), func(b *testing.B) {
			var s *Store
			if ephemeral {
				s = openEphemeralTest(b)
			} else {
				s = openTest(b)
			}
			n := mustNamespace(b, s, "hub")
			it := Interaction{Input: "what is the weather", Output: "sunny", Status: StatusOK}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := n.Append("chat", it); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWorkingMemory builds a spoke's working memory in a chat with
// 100,000 logged interactions: the last 10, the chat's summary, and an
// entity looked up by key and by search among MaxEntities.
func BenchmarkWorkingMemory(b *testing.B) {
	s := openTest(b)
	n := mustNamespace(b, s, "spoke/mail")
	seedLog(b, n, "chat", 100_000)
	lt := n.LongTerm()
	if err := lt.SetSummary(Summary{Chat: "chat", Text: strings.Repeat("The user read mail about the trip. ", 22), Through: 100_000}); err != nil {
		b.Fatal(err)
	}
	var es []Entity
	for i := range MaxEntities {
		es = append(es, Entity{Key: fmt.Sprintf("contact.c%03d.email", i), Value: fmt.Sprintf("c%03d@example.com", i)})
	}
	es[MaxEntities/2] = Entity{Key: "trip.dates", Value: "May 3 to May 7"}
	if err := lt.PutEntities(es...); err != nil {
		b.Fatal(err)
	}
	b.Run("recent+summary", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			its, err := n.Recent("chat", 10)
			if err != nil || len(its) != 10 {
				b.Fatal(err)
			}
			if _, err := lt.Summary("chat"); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("entity by key", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if e, err := lt.Entity("trip.dates"); err != nil || e.Value == "" {
				b.Fatal(err)
			}
		}
	})
	b.Run("recall search", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if hits, err := lt.Search("trip dates", 8); err != nil || len(hits) == 0 || hits[0].Key != "trip.dates" {
				b.Fatalf("%v %v", hits, err)
			}
		}
	})
}

// BenchmarkGrowthPer1000Turns writes what 1,000 turns leave in memory —
// per turn the hub's request and answer, one spoke's, both summaries, the
// hub's record of the spoke, and two entities for each — and reports the
// database's growth on disk (after Close, so that badger has flushed its
// memtables), in total and per file kind.
func BenchmarkGrowthPer1000Turns(b *testing.B) {
	query := "Find the emails from Alice about the trip to Lisbon next month, please"
	answer := strings.Repeat("Alice wrote twice about the Lisbon trip: flights and the hotel. ", 6)
	plan := `{"plan":{"steps":[{"id":"s1","functionality":"mail.search","app":"mail","query":"emails from Alice about Lisbon","depends_on":[]}]},"usage":{"calls":3,"prompt_tokens":900,"eval_tokens":120}}`
	summary := strings.Repeat("The user asks about mail from Alice and the Lisbon trip. ", 15)[:800]
	for _, longTerm := range []bool{false, true} {
		b.Run(map[bool]string{false: "logs only", true: "logs+summaries+entities"}[longTerm], func(b *testing.B) {
			growth(b, longTerm, query, answer, plan, summary)
		})
	}
}

func growth(b *testing.B, longTerm bool, query, answer, plan, summary string) {
	for b.Loop() {
		dir := b.TempDir()
		size := func() map[string]int64 {
			out := map[string]int64{}
			filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					if info, err := d.Info(); err == nil {
						out[filepath.Ext(path)] += info.Size()
						out["total"] += info.Size()
					}
				}
				return nil
			})
			return out
		}
		s, err := Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		s.Close()
		empty := size()
		s, err = Open(dir, Options{})
		if err != nil {
			b.Fatal(err)
		}
		hub, mail := mustNamespace(b, s, "hub"), mustNamespace(b, s, "spoke/mail")
		rec, _ := hub.Record("mail")
		for i := range 1000 {
			chat := fmt.Sprintf("chat%d", i/20) // 20 turns a chat
			for _, n := range []*Namespace{hub, mail} {
				it, err := n.Append(chat, Interaction{Input: query, Status: StatusPending})
				if err != nil {
					b.Fatal(err)
				}
				it.Output, it.Status = answer, StatusOK
				if n == hub {
					it.Meta = json.RawMessage(plan)
				}
				if err := n.Update(it); err != nil {
					b.Fatal(err)
				}
			}
			if !longTerm {
				continue
			}
			for _, lt := range []*LongTerm{hub.LongTerm(), mail.LongTerm(), rec} {
				if err := lt.SetSummary(Summary{Chat: chat, Text: summary, Through: uint64(i), Model: "qwen3:1.7b"}); err != nil {
					b.Fatal(err)
				}
				if err := lt.PutEntities(Entity{Key: fmt.Sprintf("contact.c%d.email", i%300), Value: "alice@example.com", Source: "user", Chat: chat},
					Entity{Key: "trip.dates", Value: "May 3 to May 7", Source: "user", Chat: chat}); err != nil {
					b.Fatal(err)
				}
			}
		}
		s.Close()
		full := size()
		b.ReportMetric(float64(full["total"]-empty["total"]), "B/1000turns")
		b.ReportMetric(float64(full[".sst"]-empty[".sst"]), "sst-B")
		b.ReportMetric(float64(full[".vlog"]-empty[".vlog"]), "vlog-B")
		b.ReportMetric(float64(full[".mem"]-empty[".mem"]), "mem-B")
	}
}
