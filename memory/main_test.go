package memory

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
)

func TestMain(m *testing.M) {
	testenv.Main(m, true)
}

// openTest opens a store on a fresh temporary directory, closed at cleanup.
func openTest(tb testing.TB) *Store {
	tb.Helper()
	s, err := Open(tb.TempDir(), Options{})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func openEphemeralTest(tb testing.TB) *Store {
	tb.Helper()
	s, err := OpenEphemeral(Options{})
	if err != nil {
		tb.Fatalf("OpenEphemeral: %v", err)
	}
	tb.Cleanup(func() { _ = s.Close() })
	return s
}

func mustNamespace(tb testing.TB, s *Store, owner string) *Namespace {
	tb.Helper()
	n, err := s.Namespace(owner)
	if err != nil {
		tb.Fatalf("Namespace(%q): %v", owner, err)
	}
	return n
}

func mustAppend(tb testing.TB, n *Namespace, chat, input string) Interaction {
	tb.Helper()
	it, err := n.Append(chat, Interaction{Input: input})
	if err != nil {
		tb.Fatalf("Append(%q, %q) in %s: %v", chat, input, n.Owner(), err)
	}
	return it
}

// seedLog writes interactions 1..count of chat straight into the database in
// one write batch, for tests and benchmarks that need a long log quickly.
func seedLog(tb testing.TB, n *Namespace, chat string, count int) {
	tb.Helper()
	wb := n.s.db.NewWriteBatch()
	cp := chatLogPrefix(n.prefix, chat)
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := 1; i <= count; i++ {
		it := Interaction{
			Seq: uint64(i), Chat: chat, Status: StatusOK,
			Input:   fmt.Sprintf("question %d", i),
			Output:  fmt.Sprintf("answer %d", i),
			Started: start.Add(time.Duration(i) * time.Second),
		}
		val, err := json.Marshal(it)
		if err != nil {
			wb.Cancel()
			tb.Fatal(err)
		}
		if err := wb.Set(logKey(cp, it.Seq), val); err != nil {
			wb.Cancel()
			tb.Fatal(err)
		}
	}
	if err := wb.Flush(); err != nil {
		tb.Fatal(err)
	}
}

func inputs(its []Interaction) []string {
	out := make([]string, len(its))
	for i, it := range its {
		out[i] = it.Input
	}
	return out
}

func seqs(its []Interaction) []uint64 {
	out := make([]uint64, len(its))
	for i, it := range its {
		out[i] = it.Seq
	}
	return out
}
