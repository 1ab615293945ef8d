package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/config"
)

// Below the free-space floor a turn is refused with a clear error; above
// it, it may run.
func TestCheckDisk(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := checkDisk(dir, 1); err != nil {
		t.Fatalf("1 MB free must be there: %v", err)
	}
	err := checkDisk(dir, 1<<40) // a floor no disk reaches
	if !errors.Is(err, ErrDiskFull) || !strings.Contains(err.Error(), "limits.disk_floor_mb") {
		t.Fatalf("want ErrDiskFull naming the key, got %v", err)
	}
	if err := checkDisk(dir, 0); err != nil {
		t.Fatalf("a floor of 0 is off: %v", err)
	}
}

// bulkhead.log is capped and rotated: a flood of log lines leaves a file
// no bigger than the cap and at most three old ones, all the user's
// alone.
func TestLogIsCappedAndRotated(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	w, err := openLog(config.Config{DataDir: dir, Limits: config.Limits{LogMB: 1}})
	if err != nil {
		t.Fatal(err)
	}
	line := []byte(strings.Repeat("x", 1023) + "\n")
	for range 6 << 10 { // 6 MB
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	// The rotating writer removes old files in the background: give it a
	// moment.
	var ents []os.DirEntry
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		ents, _ = os.ReadDir(dir)
		if len(ents) <= 4 || time.Now().After(deadline) {
			break
		}
	}
	if len(ents) > 4 {
		t.Fatalf("%d log files kept, want the log and at most 3 old ones", len(ents))
	}
	var total int64
	for _, e := range ents {
		fi, _ := os.Stat(filepath.Join(dir, e.Name()))
		total += fi.Size()
		if fi.Size() > 1<<20+1024 {
			t.Fatalf("%s is %d bytes, over the 1 MB cap", e.Name(), fi.Size())
		}
		if fi.Mode().Perm()&0o077 != 0 {
			t.Fatalf("%s has mode %v: others can read it", e.Name(), fi.Mode().Perm())
		}
	}
	if total > 4<<20+4096 {
		t.Fatalf("the logs take %d bytes", total)
	}
}
