//go:build linux

package sandbox_test

import (
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

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// staged is a policy that lets a command write dirs, each through a
// layer of its own made under a folder of the test's (as bulkhead makes
// them in its data directory); it returns the layers too.
func staged(t *testing.T, dirs ...string) (sandbox.Policy, map[string]sandbox.Overlay) {
	t.Helper()
	root := t.TempDir()
	layers := map[string]sandbox.Overlay{}
	for i, d := range dirs {
		o := sandbox.Overlay{Upper: filepath.Join(root, fmt.Sprint(i), "upper"), Work: filepath.Join(root, fmt.Sprint(i), "work")}
		for _, x := range []string{o.Upper, o.Work} {
			if err := os.MkdirAll(x, 0o700); err != nil {
				t.Fatal(err)
			}
		}
		layers[d] = o
	}
	return sandbox.Policy{ReadWrite: dirs, Layers: layers, Deny: []string{root}}, layers
}

// tree is a folder as the user finds it: every path with its type, mode,
// link count, link target and content.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fmt.Sprintf("%v", fi.Mode())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			v += " " + hex.EncodeToString(sum[:8])
		}
		out[rel] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffTrees(before, after map[string]string) []string {
	var out []string
	for k, v := range after {
		if b, ok := before[k]; !ok {
			out = append(out, "added "+k)
		} else if b != v {
			out = append(out, "changed "+k+": "+b+" -> "+v)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, "removed "+k)
		}
	}
	sort.Strings(out)
	return out
}

// Whatever a command does in a folder it may write — writes, appends,
// removals, renames across folders, modes and set-id bits, hard and
// symbolic links, hooks, a git repository laid out under another name,
// a fifo — it sees at once, and none of it reaches the real folder: the
// folder is as the user left it, bit for bit, and the layer holds the
// command's writes. With staging left out, the same script changes the
// folder (the test bites); without a layer, the folder is read-only.
func TestWritesStayInTheirLayer(t *testing.T) {
	t.Parallel()
	namespaced(t)
	script := `
set -u
echo new > new.txt && cat new.txt
echo more >> old.txt && cat old.txt
rm gone.txt
mkdir -p d1 d2 && echo f > d1/f && mv d1/f d2/f && cat d2/f
mv sub sub-moved 2>/dev/null || echo "folder rename refused"
chmod 4755 new.txt && ls -l new.txt | cut -c1-10
printf '#!/bin/sh\necho planted\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit
mkdir -p tools/objects tools/refs && echo 'ref: refs/heads/main' > tools/HEAD
printf '[core]\n\tworktree = ..\n\tfsmonitor = echo planted\n' > tools/config
ln old.txt hard.txt && echo linked >> hard.txt
ln -s /etc/passwd link && ln -sf /etc/hostname old-link
mkfifo fifo
echo done
`
	setup := func(ws string) {
		for p, b := range map[string]string{"old.txt": "old\n", "gone.txt": "bye\n", "sub/keep.txt": "kept\n", ".git/hooks/README": "hooks\n"} {
			if err := os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(ws, p), []byte(b), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Symlink("old.txt", filepath.Join(ws, "old-link")); err != nil {
			t.Fatal(err)
		}
	}
	for _, mode := range []string{"staged", "no staging", "no layer"} {
		ws := t.TempDir()
		setup(ws)
		before := tree(t, ws)
		pol, layers := staged(t, ws)
		switch mode {
		case "no staging":
			pol.Without = []sandbox.Mechanism{sandbox.Staging}
		case "no layer":
			pol.Layers = nil
		}
		out, _ := run(t, pol, ws, script)
		changed := diffTrees(before, tree(t, ws))
		switch mode {
		case "staged":
			for _, want := range []string{"new\n", "old\nmore\n", "f\n", "-rwsr-xr-x", "done"} {
				if !strings.Contains(out, want) {
					t.Errorf("the command must see its own writes (%q): %q", want, out)
				}
			}
			if len(changed) > 0 {
				t.Errorf("what the command wrote reached the folder:\n%s", strings.Join(changed, "\n"))
			}
			up := tree(t, layers[ws].Upper)
			for _, p := range []string{"new.txt", "old.txt", "d2/f", ".git/hooks/pre-commit", "tools/config", "hard.txt", "link", "fifo", "gone.txt"} {
				if _, ok := up[p]; !ok {
					t.Errorf("the layer lacks %s: %v", p, up)
				}
			}
		case "no staging":
			if len(changed) < 8 {
				t.Errorf("without staging the script must change the folder (the test bites): %v (%q)", changed, out)
			}
		case "no layer":
			if len(changed) > 0 || strings.Contains(out, "new\n") {
				t.Errorf("a folder without a layer must be read-only: %v (%q)", changed, out)
			}
		}
	}
}

// A folder whose name holds what overlayfs's options separate (a comma,
// a colon, a backslash) is staged all the same: the kernel is given the
// folders by descriptor, not by name.
func TestAnyFolderNameIsStaged(t *testing.T) {
	t.Parallel()
	namespaced(t)
	ws := filepath.Join(t.TempDir(), `a,b:c\d=e`)
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	pol, layers := staged(t, ws)
	out, _ := run(t, pol, ws, "echo hi > x && cat x")
	if !strings.Contains(out, "hi") {
		t.Fatalf("the command could not write its folder: %q", out)
	}
	if _, err := os.Stat(filepath.Join(ws, "x")); err == nil {
		t.Error("the write reached the real folder")
	}
	if b, _ := os.ReadFile(filepath.Join(layers[ws].Upper, "x")); string(b) != "hi\n" {
		t.Errorf("the layer holds %q", b)
	}
}

// git works in a staged work tree as a developer expects: a commit,
// git mv across folders, git stash and git gc — and the real repository
// is untouched until its changes are accepted.
func TestGitWorksInALayer(t *testing.T) {
	t.Parallel()
	namespaced(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	ws := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+ws, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q", "-b", "main")
	for _, p := range []string{"d1/a.txt", "b.txt"} {
		_ = os.MkdirAll(filepath.Join(ws, filepath.Dir(p)), 0o755)
		if err := os.WriteFile(filepath.Join(ws, p), []byte(p+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("add", ".")
	git("commit", "-q", "-m", "first")
	before := tree(t, ws)
	pol, _ := staged(t, ws)
	pol.Env = []string{"GIT_AUTHOR_NAME=u", "GIT_AUTHOR_EMAIL=u@example.com", "GIT_COMMITTER_NAME=u", "GIT_COMMITTER_EMAIL=u@example.com", "GIT_CONFIG_NOSYSTEM=1"}
	out, code := run(t, pol, ws, `set -e
mkdir d2 && git mv d1/a.txt d2/a.txt
git commit -q -m second
echo wip >> b.txt && git stash -q && git stash pop -q
git gc -q
git log --format=%s
echo ok`)
	if code != 0 || !strings.Contains(out, "second\nfirst\nok") {
		t.Fatalf("git in a layer: %d %q", code, out)
	}
	if changed := diffTrees(before, tree(t, ws)); len(changed) > 0 {
		t.Errorf("the real repository changed:\n%s", strings.Join(changed, "\n"))
	}
}
