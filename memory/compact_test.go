package memory

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// noCompactors leaves level 0 to the Store: badger compacts nothing on
// its own, so what the tests see does not depend on how long a process
// lived (badger's compactors start up to a second after Open).
func noCompactors(o badger.Options) badger.Options { return o.WithNumCompactors(0) }

// sstFiles counts the table files in dir.
func sstFiles(tb testing.TB, dir string) int {
	tb.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil {
		tb.Fatal(err)
	}
	return len(m)
}

// askCycle is what one `bulkhead ask` does to the store: open it, make a
// chat and title it, read the history, log the hub's and a spoke's turn
// (pending, then answered), an action-log entry and the summaries, and
// close it. It reports whether Close compacted.
func askCycle(tb testing.TB, dir string, opts Options, i int) (compacted bool) {
	tb.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		tb.Fatal(err)
	}
	c, err := s.CreateChat("")
	if err != nil {
		tb.Fatal(err)
	}
	if c, err = s.Chat(c.ID); err != nil {
		tb.Fatal(err)
	}
	c.Title = fmt.Sprintf("question %d", i)
	if err := s.UpdateChat(c); err != nil {
		tb.Fatal(err)
	}
	hub, spoke := mustNamespace(tb, s, "hub"), mustNamespace(tb, s, "spoke/mail")
	if _, err := hub.Recent(c.ID, 8); err != nil {
		tb.Fatal(err)
	}
	answer := strings.Repeat(fmt.Sprintf("Alice wrote about the Lisbon trip (%d). ", i), 6)
	for _, n := range []*Namespace{hub, spoke} {
		it, err := n.Append(c.ID, Interaction{Input: c.Title})
		if err != nil {
			tb.Fatal(err)
		}
		it.Output, it.Status = answer, StatusOK
		if err := n.Update(it); err != nil {
			tb.Fatal(err)
		}
	}
	if err := hub.Set(fmt.Sprintf("actions/%08d", i), []byte(answer)); err != nil {
		tb.Fatal(err)
	}
	for _, n := range []*Namespace{hub, spoke} {
		if err := n.LongTerm().SetSummary(Summary{Chat: c.ID, Text: answer, Through: 1}); err != nil {
			tb.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		tb.Fatal(err)
	}
	return s.compactions.Load() > 0
}

func TestCompactThreshold(t *testing.T) {
	t.Parallel()
	tests := []struct{ opt, want int }{
		{-1, 0}, {0, defaultCompactTables}, {1, minCompactTables}, {6, 6}, {20, 20},
	}
	for _, tt := range tests {
		if got := compactThreshold(tt.opt); got != tt.want {
			t.Errorf("compactThreshold(%d) = %d, want %d", tt.opt, got, tt.want)
		}
	}
}

// Short processes each leave a level-0 table; Close compacts them once
// there are CompactTables of them, so the count stays bounded and nothing
// is lost. Without the compaction at Close (CompactTables -1, what badger
// alone does here) the count grows by one a process.
func TestCloseKeepsTableCountBounded(t *testing.T) {
	t.Parallel()
	const cycles, at = 30, 6
	for _, tt := range []struct {
		name    string
		compact int
		bounded bool
	}{
		{"compaction", at, true},
		{"badger alone", -1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			opts := Options{CompactTables: tt.compact, tune: noCompactors}
			most := 0
			for i := range cycles {
				askCycle(t, dir, opts, i)
				most = max(most, sstFiles(t, dir))
			}
			// At most `at` level-0 tables, plus the one other level's
			// table for this small tree.
			if bounded := most <= at+1; bounded != tt.bounded {
				t.Errorf("after %d processes: at most %d table files at a time; bounded by %d: %v, want %v", cycles, most, at+1, bounded, tt.bounded)
			}
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			chats, err := s.Chats()
			if err != nil || len(chats) != cycles {
				t.Fatalf("Chats after %d processes = %d, %v", cycles, len(chats), err)
			}
			for _, owner := range []string{"hub", "spoke/mail"} {
				its, err := mustNamespace(t, s, owner).Interactions(chats[0].ID)
				if err != nil || len(its) != 1 || its[0].Status != StatusOK {
					t.Errorf("%s: Interactions = %+v, %v", owner, its, err)
				}
			}
		})
	}
}

// A long process compacts on its ticker, not only at Close.
func TestCompactTicker(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for i := range 8 {
		askCycle(t, dir, Options{CompactTables: -1, tune: noCompactors}, i)
	}
	s, err := Open(dir, Options{CompactTables: 6, CompactInterval: 5 * time.Millisecond, tune: noCompactors})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for s.compactions.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no compaction in 10s; level 0 has %d tables", s.db.Levels()[0].NumTables)
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.mu.RLock()
	l0 := s.db.Levels()[0].NumTables
	s.mu.RUnlock()
	if l0 != 0 {
		t.Errorf("after the ticker's compaction level 0 has %d tables", l0)
	}
	if chats, err := s.Chats(); err != nil || len(chats) != 8 {
		t.Errorf("Chats = %d, %v", len(chats), err)
	}
}

// An ephemeral store has no files to merge and never compacts.
func TestCompactEphemeral(t *testing.T) {
	t.Parallel()
	s := openEphemeralTest(t)
	if err := s.compactIfCrowded("test"); err != nil || s.compactions.Load() != 0 {
		t.Errorf("compactIfCrowded on an ephemeral store: %v, %d compactions", err, s.compactions.Load())
	}
}
