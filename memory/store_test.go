package memory

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The helper process: the test binary re-executed by a test, which sets
// helperEnv to what it should do and helperDirEnv to the data directory.
const (
	helperEnv    = "BULKHEAD_MEMORY_HELPER"
	helperDirEnv = "BULKHEAD_MEMORY_HELPER_DIR"
)

func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(helperDirEnv)
	switch os.Getenv(helperEnv) {
	case "":
		t.Skip("only run as a helper process")
	case "in-use":
		s, err := Open(dir, Options{})
		if err == nil {
			_ = s.Close()
			t.Fatal("Open succeeded while another process holds the directory")
		}
		if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), dir) {
			t.Fatalf("Open error = %v, want ErrInUse naming %s", err, dir)
		}
		t.Log(err)
	case "crash":
		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		n := mustNamespace(t, s, "spoke/a")
		mustAppend(t, n, "chat", "survives kill -9")
		if err := n.Set("grant", []byte("synced")); err != nil {
			t.Fatal(err)
		}
		_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
		time.Sleep(time.Minute)
	}
}

func runHelper(t *testing.T, what, dir string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), helperEnv+"="+what, helperDirEnv+"="+dir)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestOpenInUse(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	t.Run("same process", func(t *testing.T) {
		s2, err := Open(dir, Options{})
		if err == nil {
			_ = s2.Close()
			t.Fatal("second Open succeeded")
		}
		want := "data directory " + dir + " is in use by another bulkhead process"
		if !errors.Is(err, ErrInUse) || err.Error() != want {
			t.Errorf("second Open error = %q, want ErrInUse %q", err, want)
		}
	})
	t.Run("other process", func(t *testing.T) {
		out, err := runHelper(t, "in-use", dir)
		if err != nil || !strings.Contains(out, "is in use by another bulkhead process") {
			t.Errorf("helper process: %v\n%s", err, out)
		}
	})
}

func TestPersistence(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(dir); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("data dir mode = %v, %v; want 0700", info.Mode(), err)
	}
	if !s.db.Opts().SyncWrites {
		t.Error("SyncWrites is off")
	}
	c, err := s.CreateChat("kept")
	if err != nil {
		t.Fatal(err)
	}
	n := mustNamespace(t, s, "spoke/a")
	mustAppend(t, n, c.ID, "remember me")
	if err := n.Set("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	s = reopen(t, dir)
	if got, err := s.Chat(c.ID); err != nil || got.Title != "kept" {
		t.Errorf("Chat after reopen = %+v, %v", got, err)
	}
	n = mustNamespace(t, s, "spoke/a")
	if its, err := n.Interactions(c.ID); err != nil || len(its) != 1 || its[0].Input != "remember me" {
		t.Errorf("Interactions after reopen = %+v, %v", its, err)
	}
	if v, err := n.Get("k"); err != nil || string(v) != "v" {
		t.Errorf("Get after reopen = %q, %v", v, err)
	}
	if it := mustAppend(t, n, c.ID, "next"); it.Seq != 2 {
		t.Errorf("Append after reopen got seq %d, want 2", it.Seq)
	}
}

func TestPersistenceAfterKill(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if out, err := runHelper(t, "crash", dir); err == nil {
		t.Fatalf("helper process was not killed:\n%s", out)
	}
	s := reopen(t, dir)
	n := mustNamespace(t, s, "spoke/a")
	if its, err := n.Interactions("chat"); err != nil || len(its) != 1 || its[0].Input != "survives kill -9" {
		t.Errorf("Interactions after kill = %+v, %v", its, err)
	}
	if v, err := n.Get("grant"); err != nil || string(v) != "synced" {
		t.Errorf("Get after kill = %q, %v", v, err)
	}
}

func reopen(t *testing.T, dir string) *Store {
	t.Helper()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("reopen: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// Not parallel: it changes the working directory and TMPDIR.
func TestEphemeralWritesNothing(t *testing.T) {
	cwd, tmp := t.TempDir(), t.TempDir()
	t.Chdir(cwd)
	t.Setenv("TMPDIR", tmp)
	s, err := OpenEphemeral(Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !s.Ephemeral() || s.Dir() != "" {
		t.Errorf("Ephemeral() = %v, Dir() = %q", s.Ephemeral(), s.Dir())
	}
	n := mustNamespace(t, s, "hub")
	const secret = "private-chat-7d1f2c"
	mustAppend(t, n, "c", secret)
	if err := n.Set(secret, []byte(secret)); err != nil {
		t.Fatal(err)
	}
	if its, err := n.Recent("c", 1); err != nil || len(its) != 1 || its[0].Input != secret {
		t.Errorf("Recent = %+v, %v", its, err)
	}
	if err := s.RunGC(); err != nil {
		t.Errorf("RunGC on an ephemeral store: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{cwd, tmp} {
		entries, err := os.ReadDir(dir)
		if err != nil || len(entries) != 0 {
			t.Errorf("%s holds %v (%v), want nothing", dir, entries, err)
		}
	}
	if s2, err := Open(t.TempDir(), Options{}); err != nil || s2.Ephemeral() {
		t.Errorf("Open: Ephemeral() is true or %v", err)
	} else {
		_ = s2.Close()
	}
}

// syncBuffer is an io.Writer safe for badger's goroutines.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func TestLoggerReceivesBadgerLog(t *testing.T) {
	t.Parallel()
	var buf syncBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s, err := Open(t.TempDir(), Options{Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	if err := mustNamespace(t, s, "hub").Set("k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"component=badger", "Lifetime L0 stalled"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
}

// Not parallel: it replaces os.Stderr.
func TestNothingOnStderr(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := os.Stderr
	os.Stderr = w
	defer func() { os.Stderr = stderr }()
	var got []byte
	done := make(chan struct{})
	go func() {
		defer close(done)
		got, _ = io.ReadAll(r)
	}()

	dir := t.TempDir()
	tests := []struct {
		name string
		open func() (*Store, error)
	}{
		{"nil logger", func() (*Store, error) { return Open(dir, Options{}) }},
		{"with logger", func() (*Store, error) { return Open(dir, Options{Logger: slog.New(slog.DiscardHandler)}) }},
		{"ephemeral", func() (*Store, error) { return OpenEphemeral(Options{}) }},
	}
	for _, tt := range tests {
		s, err := tt.open()
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		n := mustNamespace(t, s, "hub")
		mustAppend(t, n, "c", strings.Repeat("x", 1<<10))
		if !s.Ephemeral() {
			if s2, err := Open(dir, Options{}); !errors.Is(err, ErrInUse) {
				t.Errorf("%s: second Open error = %v, want ErrInUse", tt.name, err)
				if err == nil {
					_ = s2.Close()
				}
			}
		}
		if err := s.RunGC(); err != nil {
			t.Errorf("%s: RunGC: %v", tt.name, err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: Close: %v", tt.name, err)
		}
	}

	os.Stderr = stderr
	_ = w.Close()
	<-done
	_ = r.Close()
	if len(got) != 0 {
		t.Errorf("written to stderr:\n%s", got)
	}
}

func TestRunGC(t *testing.T) {
	t.Parallel()
	s := openTest(t)
	n := mustNamespace(t, s, "spoke/a")
	big := bytes.Repeat([]byte("v"), 64<<10)
	for i := range 50 {
		if err := n.Set("k", append(big, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Delete("k"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := s.RunGC(); err != nil {
			t.Errorf("RunGC: %v", err)
		}
	}
}

func TestGCTicker(t *testing.T) {
	t.Parallel()
	s, err := Open(t.TempDir(), Options{GCInterval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	deadline := time.Now().Add(10 * time.Second)
	for s.gcPasses.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatalf("GC ran %d times in 10s", s.gcPasses.Load())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestClose(t *testing.T) {
	t.Parallel()
	for _, ephemeral := range []bool{false, true} {
		var s *Store
		var err error
		if ephemeral {
			s, err = OpenEphemeral(Options{})
		} else {
			s, err = Open(t.TempDir(), Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		n := mustNamespace(t, s, "hub")
		for range 2 {
			if err := s.Close(); err != nil {
				t.Errorf("ephemeral=%v: Close: %v", ephemeral, err)
			}
		}
		calls := map[string]error{
			"Get":     func() error { _, err := n.Get("k"); return err }(),
			"Set":     n.Set("k", nil),
			"Append":  func() error { _, err := n.Append("c", Interaction{}); return err }(),
			"Recent":  func() error { _, err := n.Recent("c", 1); return err }(),
			"Chats":   func() error { _, err := s.Chats(); return err }(),
			"Delete":  s.DeleteChat("c"),
			"RunGC":   s.RunGC(),
			"KeysErr": func() error { _, err := n.Keys(""); return err }(),
		}
		for name, err := range calls {
			if !errors.Is(err, ErrClosed) && !(ephemeral && name == "RunGC" && err == nil) {
				t.Errorf("ephemeral=%v: %s after Close: %v, want ErrClosed", ephemeral, name, err)
			}
		}
	}
}
