package changes_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// staging skips where this system cannot stage a command's writes (no
// Landlock, no namespaces, no overlay in a user namespace).
func staging(t *testing.T) {
	t.Helper()
	r := sandbox.Probe(context.Background(), sandbox.Policy{})
	for _, l := range r.Layers {
		if l.Name == "staged writes" && !l.Holds {
			t.Skipf("no staged writes here: %s", l.Detail)
		}
	}
	if r.Err != "" {
		t.Skipf("no sandbox here: %s", r.Err)
	}
}

// files makes the files of m (path: content; a path ending in / is a
// folder) in dir.
func files(t *testing.T, dir string, m map[string]string) {
	t.Helper()
	for p, c := range m {
		full := filepath.Join(dir, p)
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// write runs script as an app's command over a new layer of folder, and
// returns the layer.
func write(t *testing.T, s *changes.Store, folder, script string) changes.Layer {
	t.Helper()
	l, err := s.New(changes.Owner{App: "tester", Chat: "c1"}, folder)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pol := sandbox.Policy{ReadWrite: []string{folder}, Layers: map[string]sandbox.Overlay{folder: l.Overlay()}, Deny: []string{s.Root()},
		Env: []string{"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com", "GIT_CONFIG_NOSYSTEM=1"}}
	cmd, cleanup, err := sandbox.Command(ctx, pol, folder, "/bin/sh", "-c", script)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("the app's command: %v\n%s", err, out.String())
	}
	return l
}

func open(t *testing.T) *changes.Store {
	t.Helper()
	s, err := changes.Open(filepath.Join(t.TempDir(), "changes"), changes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func read(t *testing.T, s *changes.Store, l changes.Layer) *changes.Set {
	t.Helper()
	set, err := s.Read(context.Background(), l)
	if err != nil {
		t.Fatal(err)
	}
	return set
}

// entry finds the entry for path.
func entry(t *testing.T, set *changes.Set, path string) permissions.ChangeEntry {
	t.Helper()
	for _, e := range set.View.Entries {
		if e.Path == path {
			return e
		}
	}
	var all []string
	for _, e := range set.View.Entries {
		all = append(all, e.Words())
	}
	t.Fatalf("no entry for %s in:\n%s", path, strings.Join(all, "\n"))
	return permissions.ChangeEntry{}
}

// snapshot is a folder as the user finds it.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == dir {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		fi, _ := os.Lstat(p)
		v := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			v += " " + hex.EncodeToString(sum[:6])
		}
		out[rel] = v
		return nil
	})
	return out
}

func same(a, b map[string]string) []string {
	var out []string
	for k, v := range b {
		if a[k] != v {
			out = append(out, fmt.Sprintf("%s: %q -> %q", k, a[k], v))
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			out = append(out, k+" removed")
		}
	}
	sort.Strings(out)
	return out
}

// Every kind of change an app makes is listed, with what it is, and
// nothing reaches the folder until it is accepted; accepted, the folder
// is what the app saw — less what never lands (a set-id bit, a fifo).
func TestASetListsEveryChangeAndAcceptAppliesIt(t *testing.T) {
	t.Parallel()
	staging(t)
	s := open(t)
	dir := t.TempDir()
	files(t, dir, map[string]string{"edit.txt": "one\ntwo\nthree\n", "gone.txt": "bye\n", "old/a.txt": "a\n", "old/b.txt": "b\n",
		"moved.txt": "same content\n", "mode.sh": "#!/bin/sh\n", "keep.txt": "keep\n", "replace/": ""})
	before := snapshot(t, dir)
	l := write(t, s, dir, `set -e
printf 'one\nTWO\nthree\n' > edit.txt
echo new > new.txt
rm gone.txt
rm -rf old
mkdir -p sub/deeper && mv moved.txt sub/deeper/moved.txt
chmod 755 mode.sh
mkdir empty
echo suid > suid && chmod 4755 suid
ln -s ../elsewhere link
rmdir replace && echo file > replace
mkfifo pipe
`)
	if diff := same(before, snapshot(t, dir)); len(diff) > 0 {
		t.Fatalf("the folder changed before anything was accepted:\n%s", strings.Join(diff, "\n"))
	}
	set := read(t, s, l)
	want := map[string]string{"edit.txt": "changed", "new.txt": "added", "gone.txt": "removed", "old": "removed",
		"sub/deeper/moved.txt": "renamed", "mode.sh": "mode", "empty": "added", "suid": "added", "link": "added",
		"replace": "replaced", "pipe": "added"}
	for p, op := range want {
		if e := entry(t, set, p); e.Op != op {
			t.Errorf("%s: %s, want %s (%s)", p, e.Op, op, e.Words())
		}
	}
	if len(set.View.Entries) != len(want) {
		var all []string
		for _, e := range set.View.Entries {
			all = append(all, e.Words())
		}
		t.Errorf("%d entries, want %d:\n%s", len(all), len(want), strings.Join(all, "\n"))
	}
	if e := entry(t, set, "edit.txt"); e.Diff == nil || e.Diff.Removed != 1 || e.Diff.Added != 1 {
		t.Errorf("a text file's change shows its diff: %+v", e.Diff)
	}
	if e := entry(t, set, "old"); e.Files != 2 {
		t.Errorf("a folder removed says what it held: %+v", e)
	}
	if e := entry(t, set, "sub/deeper/moved.txt"); e.From != "moved.txt" {
		t.Errorf("a rename says where from: %+v", e)
	}
	if e := entry(t, set, "pipe"); e.Never == "" {
		t.Errorf("a fifo is shown and never applied: %+v", e)
	}
	if e := entry(t, set, "suid"); !strings.Contains(strings.Join(e.Warnings, ";"), "set-id") {
		t.Errorf("a set-id bit is warned of: %+v", e)
	}
	res, err := s.Accept(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 {
		t.Errorf("only the fifo is not applied: %v", res.Failed)
	}
	got := snapshot(t, dir)
	for p, v := range map[string]string{"edit.txt": "-rw-r--r--", "new.txt": "-rw-r--r--", "sub/deeper/moved.txt": "-rw-r--r--",
		"mode.sh": "-rwxr-xr-x", "empty": "drwxr-xr-x", "suid": "-rwxr-xr-x", "link": "Lrwxrwxrwx -> ../elsewhere", "replace": "-rw-r--r--"} {
		if !strings.HasPrefix(got[p], v) {
			t.Errorf("after accepting, %s is %q, want %q", p, got[p], v)
		}
	}
	for _, p := range []string{"gone.txt", "old", "moved.txt", "pipe"} {
		if _, ok := got[p]; ok {
			t.Errorf("after accepting, %s is still there", p)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "edit.txt")); string(b) != "one\nTWO\nthree\n" {
		t.Errorf("edit.txt: %q", b)
	}
	if ls, _ := s.Layers(); len(ls) != 1 {
		t.Errorf("a set with an entry left (the fifo) stays pending: %v", ls)
	} else if again := read(t, s, ls[0]); len(again.View.Entries) != 1 || again.View.Entries[0].Path != "pipe" {
		t.Errorf("read again, only the fifo is left: %+v", again.View.Entries)
	}
}

// Discarding a set leaves the folder as it was and removes the layer.
func TestDiscardLeavesTheFolderAsItWas(t *testing.T) {
	t.Parallel()
	staging(t)
	s := open(t)
	dir := t.TempDir()
	files(t, dir, map[string]string{"a.txt": "a\n"})
	before := snapshot(t, dir)
	l := write(t, s, dir, "echo b > a.txt && echo c > c.txt && rm -f a.txt")
	if err := s.Discard(read(t, s, l)); err != nil {
		t.Fatal(err)
	}
	if diff := same(before, snapshot(t, dir)); len(diff) > 0 {
		t.Errorf("discarded, yet the folder changed: %v", diff)
	}
	if ls, _ := s.Layers(); len(ls) != 0 {
		t.Errorf("a discarded set is removed whole: %v", ls)
	}
}

// Accepting some entries applies those alone; the rest are discarded.
func TestAcceptSomeAppliesThoseAlone(t *testing.T) {
	t.Parallel()
	staging(t)
	s := open(t)
	dir := t.TempDir()
	l := write(t, s, dir, "echo 1 > one.txt && echo 2 > two.txt && echo 3 > three.txt")
	set := read(t, s, l)
	var pick []int
	for i, e := range set.View.Entries {
		if e.Path == "two.txt" {
			pick = append(pick, i)
		}
	}
	if _, err := s.Accept(set, pick); err != nil {
		t.Fatal(err)
	}
	got := snapshot(t, dir)
	if len(got) != 1 || got["two.txt"] == "" {
		t.Errorf("only two.txt lands: %v", got)
	}
	if ls, _ := s.Layers(); len(ls) != 0 {
		t.Errorf("a decided set goes: %v", ls)
	}
}

// A file of the user's that changed after the app started is a
// conflict, said as such; one that changes between the dialog and the
// answer is not overwritten: it stays pending.
func TestAFolderChangedUnderneathIsAConflict(t *testing.T) {
	t.Parallel()
	staging(t)
	s := open(t)
	dir := t.TempDir()
	files(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	l, err := s.New(changes.Owner{App: "tester"}, dir)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond) // a ctime after the layer's start
	files(t, dir, map[string]string{"a.txt": "the user's edit\n"})
	// the app's writes, as its overlay leaves them
	if err := os.WriteFile(filepath.Join(l.Overlay().Upper, "a.txt"), []byte("app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(l.Overlay().Upper, "b.txt"), []byte("app\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := read(t, s, l)
	if e := entry(t, set, "a.txt"); e.Conflict == "" {
		t.Errorf("a file the user changed since the app started is a conflict: %+v", e)
	}
	if e := entry(t, set, "b.txt"); e.Conflict != "" {
		t.Errorf("b.txt is no conflict: %+v", e)
	}
	files(t, dir, map[string]string{"b.txt": "edited after the dialog showed\n"})
	res, err := s.Accept(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Failed) != 1 {
		t.Fatalf("b.txt changed since shown must not be applied: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "b.txt")); string(b) != "edited after the dialog showed\n" {
		t.Errorf("b.txt was overwritten: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "app\n" {
		t.Errorf("a.txt, accepted with its conflict shown, is the app's: %q", b)
	}
	ls, _ := s.Layers()
	if len(ls) != 1 {
		t.Fatalf("the failed entry stays pending: %v", ls)
	}
	if again := read(t, s, ls[0]); len(again.View.Entries) != 1 || again.View.Entries[0].Path != "b.txt" {
		t.Errorf("pending: %+v", again.View.Entries)
	}
}

// Applying follows no link: a folder of the set's path swapped for a
// link to elsewhere between the dialog and the answer gets nothing
// written through it.
func TestApplyingFollowsNoLink(t *testing.T) {
	t.Parallel()
	staging(t)
	s := open(t)
	dir, outside := t.TempDir(), t.TempDir()
	files(t, dir, map[string]string{"d/x.txt": "x\n"})
	l := write(t, s, dir, "echo new > d/new.txt")
	set := read(t, s, l)
	if err := os.RemoveAll(filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "d")); err != nil {
		t.Fatal(err)
	}
	res, err := s.Accept(set, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Applied) != 0 {
		t.Errorf("applied through a link: %+v", res)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Errorf("a write went through the link: %v", ents)
	}
}

// A pending set outlives the store that read it: a new one (bulkhead
// started again) lists it, with the same entries, and applies nothing
// by itself.
func TestAPendingSetOutlivesARestart(t *testing.T) {
	t.Parallel()
	staging(t)
	root := filepath.Join(t.TempDir(), "changes")
	s, err := changes.Open(root, changes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	l := write(t, s, dir, "echo a > a.txt")
	first := read(t, s, l)
	s2, err := changes.Open(root, changes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ls, err := s2.Layers()
	if err != nil || len(ls) != 1 || ls[0].ID != l.ID || ls[0].Owner.Chat != "c1" {
		t.Fatalf("listed after a restart: %v %v", ls, err)
	}
	again := read(t, s2, ls[0])
	if len(again.View.Entries) != len(first.View.Entries) || again.View.Entries[0].Path != "a.txt" {
		t.Errorf("after a restart: %+v", again.View.Entries)
	}
	if _, err := os.Stat(filepath.Join(dir, "a.txt")); err == nil {
		t.Error("a pending set was applied by itself")
	}
}

// A layer whose process still runs: what was accepted is settled — not
// asked again while the process keeps its view — and a later write to
// the same file is a new change.
func TestAHeldLayerSettlesWhatWasAccepted(t *testing.T) {
	t.Parallel()
	staging(t)
	s := open(t)
	dir := t.TempDir()
	l := write(t, s, dir, "echo a > a.txt")
	stopped := false
	s.Hold(l.ID, func() { stopped = true })
	if _, err := s.Accept(read(t, s, l), nil); err != nil {
		t.Fatal(err)
	}
	if stopped {
		t.Error("accepting all stops no process")
	}
	if set := read(t, s, l); !set.Empty() {
		t.Errorf("an accepted entry is asked again: %+v", set.View.Entries)
	}
	// the server writes the file again (as its overlay would)
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(l.Overlay().Upper, "a.txt"), []byte("again\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	set := read(t, s, l)
	if e := entry(t, set, "a.txt"); e.Op != "changed" {
		t.Errorf("a new write is a new change: %+v", e)
	}
	if err := s.Discard(set); err != nil {
		t.Fatal(err)
	}
	if !stopped {
		t.Error("discarding stops the process that holds the layer")
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "a.txt")); string(b) != "a\n" {
		t.Errorf("discarded: %q", b)
	}
}

// git's own data is summed up as the commits it makes.
func TestACommitIsShownAsACommit(t *testing.T) {
	t.Parallel()
	staging(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	s := open(t)
	dir := t.TempDir()
	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com", "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	files(t, dir, map[string]string{"a.txt": "a\n", "b.txt": "b\n"})
	git("add", ".")
	git("commit", "-q", "-m", "first")
	before := snapshot(t, dir)
	l := write(t, s, dir, `set -e
echo changed > a.txt
git add a.txt
git commit -q -m 'Fix the parser'
`)
	set := read(t, s, l)
	e := entry(t, set, ".git")
	if e.Op != "commits" || !strings.Contains(e.Summary, "1 commit on main: Fix the parser, 1 file") {
		t.Errorf("the commit: %+v", e)
	}
	if len(e.Warnings) == 0 {
		t.Errorf("git's data is warned of: %+v", e)
	}
	entry(t, set, "a.txt")
	if diff := same(before, snapshot(t, dir)); len(diff) > 0 {
		t.Fatalf("the repository changed before anything was accepted: %v", diff)
	}
	if _, err := s.Accept(set, nil); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("git", "-C", dir, "log", "--format=%s").Output()
	if err != nil || string(out) != "Fix the parser\nfirst\n" {
		t.Errorf("after accepting, the log: %q %v", out, err)
	}
	st, _ := exec.Command("git", "-C", dir, "status", "--porcelain").Output()
	if len(st) != 0 {
		t.Errorf("after accepting, the work tree is clean: %q", st)
	}
}

// At start, a private turn's layers go, and empty ones; a pending set
// of an ordinary turn stays.
func TestSweepKeepsOnlyWhatWaits(t *testing.T) {
	t.Parallel()
	s := open(t)
	dir := t.TempDir()
	keep, _ := s.New(changes.Owner{App: "a", Chat: "c"}, dir)
	if err := os.WriteFile(filepath.Join(keep.Overlay().Upper, "x"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	priv, _ := s.New(changes.Owner{App: "a", Chat: "p", Private: true}, dir)
	if err := os.WriteFile(filepath.Join(priv.Overlay().Upper, "secret"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.New(changes.Owner{App: "a", Chat: "c"}, dir); err != nil {
		t.Fatal(err)
	}
	if n := s.Sweep(); n != 2 {
		t.Errorf("swept %d, want the private and the empty layer", n)
	}
	ls, _ := s.Layers()
	if len(ls) != 1 || ls[0].ID != keep.ID {
		t.Errorf("left %v", ls)
	}
}
