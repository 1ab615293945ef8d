package changes_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/bulkhead-dev/bulkhead/changes"
)

// bigLayer is a layer over an empty folder that holds n small text files
// in 100 folders and one file of size bytes, as an app's writes leave
// it.
func bigLayer(tb testing.TB, n int, size int64) (*changes.Store, changes.Layer) {
	tb.Helper()
	s, err := changes.Open(filepath.Join(tb.TempDir(), "changes"), changes.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	l, err := s.New(changes.Owner{App: "bench"}, tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	up := l.Overlay().Upper
	for i := range n {
		p := filepath.Join(up, fmt.Sprint(i%100), fmt.Sprintf("file%d.txt", i))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(fmt.Sprintf("line one of %d\nline two\n", i)), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	f, err := os.Create(filepath.Join(up, "big.bin"))
	if err != nil {
		tb.Fatal(err)
	}
	chunk := bytes.Repeat([]byte{0xAB}, 1<<20)
	for written := int64(0); written < size; written += int64(len(chunk)) {
		if _, err := f.Write(chunk); err != nil {
			tb.Fatal(err)
		}
	}
	f.Close()
	return s, l
}

// BenchmarkReadAChangeSet reads a set of 10,000 files and a 100 MB file
// (every entry listed, each text file's diff): the time and the memory
// its dialog waits for.
//
//	go test -run XXX -bench ReadAChangeSet -benchtime 5x -count 6 ./changes | benchstat -
func BenchmarkReadAChangeSet(b *testing.B) {
	s, l := bigLayer(b, 10_000, 100<<20)
	b.ReportAllocs()
	for b.Loop() {
		set, err := s.Read(context.Background(), l)
		if err != nil {
			b.Fatal(err)
		}
		if len(set.View.Entries) != 10_001 {
			b.Fatalf("%d entries", len(set.View.Entries))
		}
	}
}

// Reading a set whose files add up to 100 MB holds none of them whole:
// what the read allocates is bounded by the set's listing and its diffs
// (20,000 lines in all), not by the bytes the app wrote.
func TestReadingABigSetIsBounded(t *testing.T) {
	s, l := bigLayer(t, 2_000, 100<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	set, err := s.Read(context.Background(), l)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(set.View.Entries); n != 2_001 {
		t.Fatalf("%d entries", n)
	}
	allocated := after.TotalAlloc - before.TotalAlloc
	if allocated > 32<<20 {
		t.Errorf("reading the set allocated %d MB: a 100 MB file was read whole", allocated>>20)
	}
	for _, e := range set.View.Entries {
		if e.Path == "big.bin" && (e.Diff == nil || e.Diff.Unshown == "" || e.Size != 100<<20) {
			t.Errorf("the big file is listed with its size, its diff not shown: %+v", e)
		}
	}
}
