package files

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/appstest"
)

// setup makes a workspace and, beside it, an outside folder holding a
// secret, with links from the workspace that lead out in every way.
func setup(t *testing.T) (ws, outside string) {
	t.Helper()
	ws, outside = t.TempDir(), t.TempDir()
	must(t, os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("top secret\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(ws, "docs", "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "docs", "a.txt"), []byte("Hello world\nsecond line\n"), 0o644))
	links := map[string]string{
		"outfile":       filepath.Join(outside, "secret.txt"),         // file → outside
		"outdir":        outside,                                      // dir → outside
		"chain1":        "chain2",                                     // chain that ends outside
		"chain2":        "docs/chain3",                                //
		"docs/chain3":   filepath.Join(outside, "secret.txt"),         //
		"relout":        filepath.Join("..", filepath.Base(outside)),  // relative, climbs out
		"docs/up":       "../..",                                      // intermediate dir → above the root
		"dangling":      filepath.Join(outside, "new.txt"),            // does not exist yet
		"inlink":        "docs/a.txt",                                 // stays inside
		"abslink":       filepath.Join(ws, "docs"),                    // absolute, inside
		"loop1":         "loop2",                                      //
		"loop2":         "loop1",                                      //
		"docs/sub/deep": filepath.Join("..", "..", "..", "outside.x"), // climbs out from deep
	}
	for name, target := range links {
		must(t, os.Symlink(target, filepath.Join(ws, name)))
	}
	return ws, outside
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func call(t *testing.T, a *App, fn string, args any) (map[string]any, error) {
	t.Helper()
	b, err := json.Marshal(args)
	must(t, err)
	out, err := a.Call(context.Background(), apps.Call{Function: fn, Args: b})
	if err != nil {
		return nil, err
	}
	appstest.CheckResult(t, a, fn, out)
	var m map[string]any
	must(t, json.Unmarshal(out, &m))
	return m, nil
}

func TestManifest(t *testing.T) {
	if err := New(t.TempDir(), Options{}).Manifest().Check(apps.Default()); err != nil {
		t.Fatal(err)
	}
}

func TestEscapesRefused(t *testing.T) {
	ws, outside := setup(t)
	a := New(ws, Options{})
	paths := []string{
		"..", "../", "../x.txt", "docs/../../x.txt", "/etc/passwd",
		filepath.Join(outside, "secret.txt"), "outfile", "outdir", "outdir/secret.txt",
		"chain1", "relout/secret.txt", "docs/up", "docs/up/x.txt", "dangling",
		"docs/sub/deep", "./docs/./../outdir/secret.txt",
	}
	for _, p := range paths {
		for _, tc := range []struct {
			fn   string
			args map[string]any
		}{
			{"read", map[string]any{"path": p}},
			{"list", map[string]any{"path": p}},
			{"search", map[string]any{"path": p, "query": "secret"}},
			{"write", map[string]any{"path": p, "content": "pwned"}},
			{"delete", map[string]any{"path": p}},
		} {
			_, err := call(t, a, tc.fn, tc.args)
			want := `path "` + p + `" is outside the workspace`
			if err == nil || err.Error() != want {
				t.Errorf("%s(%q) error = %v, want %q", tc.fn, p, err, want)
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "secret.txt")); err != nil || string(b) != "top secret\n" {
		t.Errorf("outside file changed: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("write through a dangling link created a file outside: %v", err)
	}
	if _, err := call(t, a, "read", map[string]any{"path": "loop1"}); err == nil || !strings.Contains(err.Error(), "too many symbolic links") {
		t.Errorf("read of a link loop: %v", err)
	}
}

func TestInsidePathsAllowed(t *testing.T) {
	ws, _ := setup(t)
	a := New(ws, Options{})
	for _, p := range []string{"docs/a.txt", "./docs/../docs/a.txt", filepath.Join(ws, "docs", "a.txt"), "inlink", "abslink/a.txt", "docs/sub/../a.txt"} {
		m, err := call(t, a, "read", map[string]any{"path": p})
		if err != nil {
			t.Errorf("read(%q): %v", p, err)
			continue
		}
		if m["content"] != "Hello world\nsecond line\n" {
			t.Errorf("read(%q) content = %q", p, m["content"])
		}
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	ws := t.TempDir()
	a := New(ws, Options{})
	const content = "naïve café ☕\nline two\n"
	m, err := call(t, a, "write", map[string]any{"path": "new/dir/note.md", "content": content})
	if err != nil {
		t.Fatal(err)
	}
	if m["path"] != "new/dir/note.md" || m["bytes"] != float64(len(content)) || m["created"] != true {
		t.Errorf("write result = %v", m)
	}
	m, err = call(t, a, "read", map[string]any{"path": "new/dir/note.md"})
	if err != nil || m["content"] != content || m["truncated"] != false {
		t.Fatalf("read back = %v, %v", m, err)
	}
	if m, err = call(t, a, "write", map[string]any{"path": "new/dir/note.md", "content": "x"}); err != nil || m["created"] != false {
		t.Errorf("overwrite = %v, %v", m, err)
	}
	if _, err := call(t, a, "write", map[string]any{"path": "new", "content": "x"}); err == nil || !strings.Contains(err.Error(), "is a folder") {
		t.Errorf("write over a folder: %v", err)
	}
	if _, err := call(t, a, "write", map[string]any{"path": ".", "content": "x"}); err == nil {
		t.Error("write to the workspace itself succeeded")
	}
}

func TestReadTruncatedAndBinary(t *testing.T) {
	ws := t.TempDir()
	must(t, os.WriteFile(filepath.Join(ws, "long.txt"), []byte(strings.Repeat("abcdefghij", 3)), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "utf8.txt"), []byte("aaaaaaaaa€"), 0o644)) // € cut in half at 10
	must(t, os.WriteFile(filepath.Join(ws, "bin.dat"), []byte{0x7f, 'E', 'L', 'F', 0, 1, 2}, 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "latin1.txt"), []byte{'c', 'a', 'f', 0xe9}, 0o644))
	a := New(ws, Options{MaxRead: 10})
	m, err := call(t, a, "read", map[string]any{"path": "long.txt"})
	if err != nil || m["content"] != "abcdefghij" || m["truncated"] != true || m["size"] != float64(30) {
		t.Errorf("long.txt = %v, %v", m, err)
	}
	m, err = call(t, a, "read", map[string]any{"path": "utf8.txt"})
	if err != nil || m["content"] != "aaaaaaaaa" || m["truncated"] != true {
		t.Errorf("utf8.txt = %v, %v", m, err)
	}
	for _, p := range []string{"bin.dat", "latin1.txt"} {
		if _, err := call(t, a, "read", map[string]any{"path": p}); err == nil || !strings.Contains(err.Error(), "binary") {
			t.Errorf("read(%s) error = %v, want binary refused", p, err)
		}
	}
	if _, err := call(t, a, "read", map[string]any{"path": "missing.txt"}); err == nil || err.Error() != `"missing.txt" does not exist` {
		t.Errorf("read missing: %v", err)
	}
	if _, err := call(t, a, "read", map[string]any{"path": "."}); err == nil || !strings.Contains(err.Error(), "folder") {
		t.Errorf("read of a folder: %v", err)
	}
	must(t, syscall.Mkfifo(filepath.Join(ws, "pipe"), 0o644))
	for _, tc := range []struct {
		fn   string
		args map[string]any
		want string
	}{ // none may wait for the other end of the pipe
		{"read", map[string]any{"path": "pipe"}, `"pipe" is not a regular file`},
		{"list", map[string]any{"path": "pipe"}, `"pipe" is a file, not a folder`},
		{"write", map[string]any{"path": "pipe", "content": "x"}, `"pipe" is not a regular file`},
	} {
		if _, err := call(t, a, tc.fn, tc.args); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s of a named pipe: %v, want %q", tc.fn, err, tc.want)
		}
	}
	if m, err := call(t, a, "search", map[string]any{"query": "x"}); err != nil || len(m["matches"].([]any)) != 0 {
		t.Errorf("search past a named pipe = %v, %v", m, err)
	}
}

func TestList(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "b"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "a.txt"), []byte("12345"), 0o644))
	must(t, os.Symlink("a.txt", filepath.Join(ws, "c")))
	a := New(ws, Options{})
	m, err := call(t, a, "list", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m["entries"])
	want := `[{"dir":false,"name":"a.txt","size":5},{"dir":true,"name":"b"},{"dir":false,"name":"c","symlink":true}]`
	if string(got) != want {
		t.Errorf("entries = %s, want %s", got, want)
	}
	if _, err := call(t, a, "list", map[string]any{"path": "a.txt"}); err == nil {
		t.Error("list of a file succeeded")
	}
}

func TestSearch(t *testing.T) {
	ws := t.TempDir()
	write := func(p, s string) {
		must(t, os.MkdirAll(filepath.Dir(filepath.Join(ws, p)), 0o755))
		must(t, os.WriteFile(filepath.Join(ws, p), []byte(s), 0o644))
	}
	write("a.txt", "nothing\nThe NEEDLE is here\n")
	write("sub/b.md", "needle one\nno\n  a needle two  \n")
	write(".git/config", "needle in git\n")
	write("bin.dat", "needle\x00binary")
	write("big.txt", "needle\n"+strings.Repeat("x", maxSearchFile))
	a := New(ws, Options{})
	m, err := call(t, a, "search", map[string]any{"query": "Needle"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(m["matches"])
	want := `[{"line":2,"path":"a.txt","text":"The NEEDLE is here"},{"line":1,"path":"sub/b.md","text":"needle one"},{"line":3,"path":"sub/b.md","text":"a needle two"}]`
	if string(got) != want || m["truncated"] != false {
		t.Errorf("matches = %s (truncated %v), want %s", got, m["truncated"], want)
	}
	m, err = call(t, a, "search", map[string]any{"query": "needle", "path": "sub"})
	if err != nil || len(m["matches"].([]any)) != 2 {
		t.Errorf("search under sub = %v, %v", m, err)
	}
	write("many.txt", strings.Repeat("hit\n", 150))
	m, err = call(t, a, "search", map[string]any{"query": "HIT"})
	if err != nil || len(m["matches"].([]any)) != maxMatches || m["truncated"] != true {
		t.Errorf("search capped: %d matches, truncated %v, %v", len(m["matches"].([]any)), m["truncated"], err)
	}
	if _, err := call(t, a, "search", map[string]any{"query": " "}); err == nil {
		t.Error("empty query accepted")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := a.Call(ctx, apps.Call{Function: "search", Args: json.RawMessage(`{"query":"x"}`)}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

func TestDelete(t *testing.T) {
	ws := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(ws, "dir"), 0o755))
	must(t, os.WriteFile(filepath.Join(ws, "f.txt"), []byte("x"), 0o644))
	must(t, os.WriteFile(filepath.Join(ws, "target.txt"), []byte("x"), 0o644))
	must(t, os.Symlink("target.txt", filepath.Join(ws, "link")))
	must(t, os.Symlink("dir", filepath.Join(ws, "dirlink")))
	a := New(ws, Options{})
	if _, err := call(t, a, "delete", map[string]any{"path": "dir"}); err == nil || err.Error() != `"dir" is a folder; only files can be deleted` {
		t.Errorf("delete of a dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(ws, "dir")); err != nil {
		t.Errorf("dir gone: %v", err)
	}
	if m, err := call(t, a, "delete", map[string]any{"path": "f.txt"}); err != nil || m["ok"] != true {
		t.Errorf("delete f.txt = %v, %v", m, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "f.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("f.txt still there: %v", err)
	}
	if _, err := call(t, a, "delete", map[string]any{"path": "f.txt"}); err == nil || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("delete of a missing file: %v", err)
	}
	for _, l := range []string{"link", "dirlink"} { // the link goes, not its target
		if _, err := call(t, a, "delete", map[string]any{"path": l}); err != nil {
			t.Errorf("delete %s: %v", l, err)
		}
	}
	for _, p := range []string{"target.txt", "dir"} {
		if _, err := os.Stat(filepath.Join(ws, p)); err != nil {
			t.Errorf("link target %s gone: %v", p, err)
		}
	}
	if _, err := call(t, a, "delete", map[string]any{"path": ""}); err == nil {
		t.Error("delete of the workspace succeeded")
	}
}

func TestBadCalls(t *testing.T) {
	a := New(t.TempDir(), Options{})
	tests := []struct{ fn, args, want string }{
		{"rename", `{}`, `no function "rename"`},
		{"read", `{}`, "arguments"},
		{"read", `{"path":1}`, "arguments"},
		{"read", `{"path":"a","extra":true}`, "arguments"},
		{"write", `{"path":"a"}`, "arguments"},
		{"list", `[1]`, "arguments"},
		{"list", `{"path":"a"} trailing`, "not JSON"},
	}
	for _, tt := range tests {
		_, err := a.Call(context.Background(), apps.Call{Function: tt.fn, Args: json.RawMessage(tt.args)})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s(%s) error = %v, want %q", tt.fn, tt.args, err, tt.want)
		}
	}
}

// A dialog about a write or a delete says where the path leads (a
// symbolic link's target) and what is there (size, other hard links).
func TestExplainSaysWhereAPathLeads(t *testing.T) {
	t.Parallel()
	ws, _ := setup(t)
	must(t, os.Link(filepath.Join(ws, "docs", "a.txt"), filepath.Join(ws, "hard.txt")))
	a := New(ws, Options{})
	for _, c := range []struct {
		fn, path string
		want     []string
	}{
		{"write", "inlink", []string{"inlink leads to docs/a.txt", "exists, 24 bytes", "hard links"}},
		{"write", "new/file.txt", []string{"new/file.txt in the workspace", "does not exist yet"}},
		{"delete", "docs/a.txt", []string{"docs/a.txt in the workspace", "exists"}},
		{"read", "docs/a.txt", nil},
	} {
		got, err := a.Explain(context.Background(), apps.Call{Function: c.fn, Args: json.RawMessage(`{"path":"` + c.path + `"}`)})
		if err != nil {
			t.Fatalf("%s %s: %v", c.fn, c.path, err)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s %s: %q lacks %q", c.fn, c.path, got, w)
			}
		}
		if c.want == nil && got != "" {
			t.Errorf("%s explains nothing, got %q", c.fn, got)
		}
	}
	if _, err := a.Explain(context.Background(), apps.Call{Function: "write", Args: json.RawMessage(`{"path":"outfile"}`)}); err == nil {
		t.Fatal("a path leading outside must be an error, not an explanation")
	}
}

// A hard link inside the workspace to a file outside it must not let a
// write change the outside file.
func TestWriteRefusesHardLinks(t *testing.T) {
	t.Parallel()
	ws, outside := setup(t)
	target := filepath.Join(outside, "secret.txt")
	if err := os.Link(target, filepath.Join(ws, "innocent.txt")); err != nil {
		t.Skipf("hard links unavailable here: %v", err)
	}
	a := New(ws, Options{})
	_, err := a.Call(context.Background(), apps.Call{Function: "write", Args: json.RawMessage(`{"path":"innocent.txt","content":"pwned"}`)})
	if err == nil || !strings.Contains(err.Error(), "hard links") {
		t.Fatalf("a write through a hard link must be refused, got %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "top secret\n" {
		t.Fatalf("the outside file changed: %q", b)
	}
}

// A hard link inside the workspace to a file outside it must not let a
// read return the outside file either.
func TestReadRefusesHardLinks(t *testing.T) {
	t.Parallel()
	ws, outside := setup(t)
	if err := os.Link(filepath.Join(outside, "secret.txt"), filepath.Join(ws, "innocent.txt")); err != nil {
		t.Skipf("hard links unavailable here: %v", err)
	}
	out, err := New(ws, Options{}).Call(context.Background(), apps.Call{Function: "read", Args: json.RawMessage(`{"path":"innocent.txt"}`)})
	if err == nil || !strings.Contains(err.Error(), "hard links") || strings.Contains(string(out), "top secret") {
		t.Fatalf("a read through a hard link must be refused, got %s %v", out, err)
	}
}
