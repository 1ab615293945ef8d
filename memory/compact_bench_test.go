package memory

import (
	"fmt"
	"math"
	"os"
	"testing"
	"time"
)

// BenchmarkHeadlessAsks runs 1,000 consecutive asks — askCycle, what one
// `bulkhead ask` process does to the store, from Open to Close — over one
// data directory, with the Store's compaction (the default) and without
// it (badger alone, as the store was before). It reports the table files
// on disk after asks 100, 500 and 1,000 (files@N), and how an ask there
// compares with the first ask on a fresh directory: each of the 100 asks
// up to N is followed by a first ask on a new directory, so that the two
// see the same machine load, and x-fresh@N is the geometric mean of the
// 100 ratios of their times (the compactions the asks ran included; a
// geometric mean, so that one ask slowed by the rest of the machine
// weighs little), ms/ask@N the mean time of the asks on the aged one.
func BenchmarkHeadlessAsks(b *testing.B) {
	for _, bc := range []struct {
		name    string
		compact int
	}{{"compaction", 0}, {"badger alone", -1}} {
		b.Run(bc.name, func(b *testing.B) {
			opts := Options{CompactTables: bc.compact}
			for b.Loop() {
				dir := b.TempDir()
				var aged, fresh []time.Duration
				compactions := 0
				for i := 1; i <= 1000; i++ {
					start := time.Now()
					if askCycle(b, dir, opts, i) {
						compactions++
					}
					if !inWindow(i) {
						continue
					}
					aged = append(aged, time.Since(start))
					fresh = append(fresh, timeFreshAsk(b, opts, i))
					if i == 100 || i == 500 || i == 1000 {
						b.ReportMetric(float64(sstFiles(b, dir)), fmt.Sprintf("files@%d", i))
						b.ReportMetric(geoMeanRatio(aged, fresh), fmt.Sprintf("x-fresh@%d", i))
						b.ReportMetric(float64(mean(aged))/1e6, fmt.Sprintf("ms/ask@%d", i))
						aged, fresh = aged[:0], fresh[:0]
					}
				}
				b.ReportMetric(float64(compactions), "compactions")
			}
		})
	}
}

// window is how many asks up to 100, 500 and 1,000 are timed.
const window = 100

func inWindow(i int) bool {
	for _, end := range []int{100, 500, 1000} {
		if i > end-window && i <= end {
			return true
		}
	}
	return false
}

func mean(ds []time.Duration) time.Duration {
	var sum time.Duration
	for _, d := range ds {
		sum += d
	}
	return sum / time.Duration(len(ds))
}

// geoMeanRatio is the geometric mean of a[i]/b[i].
func geoMeanRatio(a, b []time.Duration) float64 {
	var sum float64
	for i := range a {
		sum += math.Log(float64(a[i]) / float64(b[i]))
	}
	return math.Exp(sum / float64(len(a)))
}

// timeFreshAsk times one ask on a new data directory.
func timeFreshAsk(b *testing.B, opts Options, i int) time.Duration {
	dir, err := os.MkdirTemp(b.TempDir(), "fresh")
	if err != nil {
		b.Fatal(err)
	}
	defer os.RemoveAll(dir)
	start := time.Now()
	askCycle(b, dir, opts, i)
	return time.Since(start)
}

// BenchmarkChatsAndOwners lists the chats and the owners of a store whose
// one busy chat has 100 or 10,000 turns (each the hub's request logged
// pending, then answered, and a spoke's step), among 20 chats. The busy
// chat is the oldest, the first in key order, as a long-lived chat is.
func BenchmarkChatsAndOwners(b *testing.B) {
	for _, turns := range []int{100, 10_000} {
		s := openTest(b)
		hub, spoke := mustNamespace(b, s, "hub"), mustNamespace(b, s, "spoke/mail")
		var busy Chat
		for i := range 20 {
			c, err := s.CreateChat("")
			if err != nil {
				b.Fatal(err)
			}
			c.Title = fmt.Sprintf("chat %d", i)
			if err := s.UpdateChat(c); err != nil {
				b.Fatal(err)
			}
			if busy.ID == "" || c.ID < busy.ID {
				busy = c
			}
		}
		for i := range turns {
			it, err := hub.Append(busy.ID, Interaction{Input: fmt.Sprintf("question %d", i)})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := spoke.Append(busy.ID, Interaction{Input: "step", Output: "done", Status: StatusOK}); err != nil {
				b.Fatal(err)
			}
			it.Output, it.Status = "answer", StatusOK
			if err := hub.Update(it); err != nil {
				b.Fatal(err)
			}
		}
		b.Run(fmt.Sprintf("Chats/turns=%d", turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if cs, err := s.Chats(); err != nil || len(cs) != 20 || cs[0].ID != busy.ID {
					b.Fatalf("Chats = %d chats, %v", len(cs), err)
				}
			}
		})
		b.Run(fmt.Sprintf("Owners/turns=%d", turns), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if owners, err := s.Owners(); err != nil || len(owners) != 2 {
					b.Fatalf("Owners = %v, %v", owners, err)
				}
			}
		})
	}
}
