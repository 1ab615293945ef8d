//go:build linux

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// attack is what an app does to one protected path, from inside the
// sandbox, in a folder it may write. Each line is run on its own; the
// oracle is the folder as the user finds it afterwards.
func attack(p sandbox.ProtectedPath, i int) (setup func(t *testing.T, ws string), script string, check func(ws string) []string) {
	have, missing, linkdir := fmt.Sprintf("have%d", i), fmt.Sprintf("missing%d", i), fmt.Sprintf("links%d", i)
	target := filepath.Join(have, p.Path) // the file an attacker writes
	if p.Folder {
		target = filepath.Join(have, p.Path, "x")
	}
	setup = func(t *testing.T, ws string) {
		t.Helper()
		for _, d := range []string{filepath.Dir(filepath.Join(ws, target)), filepath.Join(ws, missing), filepath.Join(ws, linkdir)} {
			if err := os.MkdirAll(d, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(ws, target), []byte("orig\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	q := func(s string) string { return "'" + s + "'" }
	lines := []string{
		"echo evil > " + q(target),
		"echo evil >> " + q(target),
		": > " + q(target),
		"chmod 777 " + q(target),
		"touch -d 2001-01-01 " + q(target),
		"ln " + q(target) + " " + q(linkdir+"/hard") + " && echo evil > " + q(linkdir+"/hard"),
		"mkdir -p " + q(filepath.Dir(filepath.Join(missing, p.Path))) + "; " +
			map[bool]string{true: "mkdir " + q(filepath.Join(missing, p.Path)), false: "echo evil > " + q(filepath.Join(missing, p.Path))}[p.Folder],
		"ln -s /etc/passwd " + q(filepath.Join(missing, p.Path)),
		"echo evil > " + q(have+"/new") + " && mv -f " + q(have+"/new") + " " + q(target),
		"mv " + q(filepath.Join(have, p.Path)) + " " + q(have+"/moved"),
		"rm -rf " + q(filepath.Join(have, p.Path)),
		"mv " + q(have) + " " + q(have+"-moved"), // the folder that holds it
	}
	var b strings.Builder
	for _, l := range lines {
		b.WriteString("( " + l + " ) 2>/dev/null\n")
	}
	script = b.String()
	check = func(ws string) []string {
		var bad []string
		if got, err := os.ReadFile(filepath.Join(ws, target)); err != nil || string(got) != "orig\n" {
			bad = append(bad, fmt.Sprintf("%s changed or went (%q, %v)", target, got, err))
		} else if fi, err := os.Stat(filepath.Join(ws, target)); err != nil || fi.Mode().Perm() != 0o644 || fi.ModTime().Year() == 2001 {
			bad = append(bad, target+": its mode or time changed")
		}
		for _, gone := range []string{filepath.Join(missing, p.Path), linkdir + "/hard"} {
			if _, err := os.Lstat(filepath.Join(ws, gone)); err == nil {
				bad = append(bad, gone+" was made")
			}
		}
		// A move that the kernel refused may have been done as a copy
		// (mv copies when a rename fails across folders); the copy holds
		// no protected path, since none can be created.
		for _, copied := range []string{have + "/moved", have + "-moved"} {
			_ = filepath.WalkDir(filepath.Join(ws, copied), func(path string, _ os.DirEntry, err error) error {
				if err != nil {
					return nil
				}
				rel, _ := filepath.Rel(ws, path)
				if _, ok := sandbox.Protects(rel, false); ok {
					bad = append(bad, rel+" was made")
				}
				return nil
			})
		}
		return bad
	}
	return setup, script, check
}

// In a folder an app may write, every protected path stays read-only to
// it: not written, appended, truncated, re-moded, re-timed, hard-linked
// and written through the link, created where it is missing (as a file,
// a folder or a link), replaced, renamed, removed — nor moved away with
// the folder that holds it. Every entry of the list, at depth 1 and
// 2 (have0/.git/hooks/x). Without the guard the same script changes
// them (the test bites), and the rest of the folder works as before.
func TestProtectedPathsStayReadOnly(t *testing.T) {
	t.Parallel()
	namespaced(t)
	for _, without := range []bool{false, true} {
		ws := t.TempDir()
		var script strings.Builder
		var checks []func(string) []string
		for i, p := range sandbox.Protected {
			setup, s, check := attack(p, i)
			setup(t, ws)
			script.WriteString(s)
			checks = append(checks, check)
		}
		script.WriteString("echo ok > plain.txt && mkdir -p d/e && mv plain.txt d/e/ && ln -s e/plain.txt d/link && cat d/link && rm d/link && mv d d2 && echo works\n")
		pol := sandbox.Policy{ReadWrite: []string{ws}}
		if without {
			pol.Without = []sandbox.Mechanism{sandbox.Guard}
		}
		out, _ := run(t, pol, ws, script.String())
		if !strings.Contains(out, "ok\nworks") {
			t.Errorf("without=%v: the rest of the folder must work as before: %q", without, out)
		}
		for i, check := range checks {
			bad := check(ws)
			switch {
			case !without && len(bad) > 0:
				t.Errorf("%s: %s", sandbox.Protected[i].Path, strings.Join(bad, "; "))
			case without && len(bad) == 0:
				t.Errorf("without the guard, the attack on %s changed nothing: the test proves nothing", sandbox.Protected[i].Path)
			}
		}
	}
}

// An app whose folder is a git work tree writes an ordinary file, and
// none of .git's hooks or config, nor a new .envrc or .vscode, at the
// root of the tree; it cannot rename .git away or put a .git of its
// own in a subfolder. With GitCommits (the shell app), a commit the
// user approved goes through — objects, refs and index — and the hooks
// and config stay as they were.
func TestAGitWorkTreeKeepsItsHooks(t *testing.T) {
	t.Parallel()
	namespaced(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	ws := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=u", "-c", "user.email=u@example.com"}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+ws, "GIT_CONFIG_NOSYSTEM=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	git("init", "-q")
	if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "a.txt")
	git("commit", "-q", "-m", "first")
	config, _ := os.ReadFile(filepath.Join(ws, ".git", "config"))
	attempts := `
( printf '#!/bin/sh\necho planted\n' > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit ) 2>/dev/null
( printf '[core]\n\tfsmonitor = "echo planted"\n' >> .git/config ) 2>/dev/null
( echo 'echo planted' > .envrc ) 2>/dev/null
( mkdir .vscode ) 2>/dev/null
( mv .git .git-away ) 2>/dev/null
( mkdir sub && git init -q sub ) 2>/dev/null
echo note > note.txt && echo wrote
`
	for _, commits := range []bool{false, true} {
		line := attempts
		if commits {
			line += "git -c user.name=u -c user.email=u@example.com commit -q -am second 2>&1 || echo commit-failed\n"
			if err := os.WriteFile(filepath.Join(ws, "a.txt"), []byte("changed\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		out, _ := run(t, sandbox.Policy{ReadWrite: []string{ws}, GitCommits: commits}, ws, line)
		if !strings.Contains(out, "wrote") {
			t.Errorf("commits=%v: an ordinary file must be written: %q", commits, out)
		}
		for _, p := range []string{".git/hooks/pre-commit", ".envrc", ".vscode", ".git-away", "sub/.git"} {
			if _, err := os.Lstat(filepath.Join(ws, p)); err == nil {
				t.Errorf("commits=%v: %s was made", commits, p)
			}
		}
		if got, _ := os.ReadFile(filepath.Join(ws, ".git", "config")); string(got) != string(config) {
			t.Errorf("commits=%v: .git/config changed:\n%s", commits, got)
		}
		if commits {
			if strings.Contains(out, "commit-failed") {
				t.Errorf("a commit the user approved must go through: %q", out)
			}
			log, _ := exec.Command("git", "-C", ws, "log", "--oneline").Output()
			if !strings.Contains(string(log), "second") {
				t.Errorf("the commit is not in the log: %q (%q)", log, out)
			}
		}
	}
}

// The list is matched at any depth and without regard to case; a
// commit's data is let through only with GitCommits, and never the
// hooks or the config.
func TestProtects(t *testing.T) {
	t.Parallel()
	cases := []struct {
		rel     string
		commits bool
		want    string // the entry that says why; "" for none
	}{
		{".git", false, ".git"},
		{".git/hooks/pre-commit", false, ".git/hooks"},
		{"a/b/.git/config", false, ".git/config"},
		{"A/.GIT/HOOKS/x", false, ".git/hooks"},
		{".git/objects/ab/cd", false, ".git"},
		{".git/objects/ab/cd", true, ""},
		{".git/index.lock", true, ""},
		{".git/refs/heads/main", true, ""},
		{".git", true, ".git"},
		{".git/hooks/pre-commit", true, ".git/hooks"},
		{".git/config", true, ".git/config"},
		{".git/config.lock", true, ".git"},
		{".git/modules/x/objects/y", true, ".git/modules"},
		{"docs/.envrc", false, ".envrc"},
		{".vscode/tasks.json", false, ".vscode"},
		{"src/main.go", false, ""},
		{".gitignore", false, ""},
		{"my.git/config", false, ""},
		{"x/.bashrc", false, ".bashrc"},
		{"./.mcp.json", false, ".mcp.json"},
	}
	for _, c := range cases {
		p, ok := sandbox.Protects(c.rel, c.commits)
		if got := map[bool]string{true: p.Path, false: ""}[ok]; got != c.want {
			t.Errorf("Protects(%q, %v) = %q, want %q", c.rel, c.commits, got, c.want)
		}
		if ok && p.Runs == "" {
			t.Errorf("%s: says nothing of what runs it", p.Path)
		}
	}
}

// A folder granted to write that holds the user's home (or is it) keeps
// the trees the user's tools run from read-only: the npm cache's code,
// a new ~/.ssh/authorized_keys, ~/.local/bin; the rest of it works.
func TestHomeTreesStayReadOnly(t *testing.T) {
	namespaced(t)
	home := t.TempDir()
	t.Setenv("HOME", home)
	cli := filepath.Join(home, ".npm", "_npx", "abc", "node_modules", "pkg", "cli.js")
	if err := os.MkdirAll(filepath.Dir(cli), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cli, []byte("orig\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	line := `
( echo evil > .npm/_npx/abc/node_modules/pkg/cli.js ) 2>/dev/null
( mkdir -p .ssh && echo key > .ssh/authorized_keys ) 2>/dev/null
( mkdir -p .local/bin && echo evil > .local/bin/git ) 2>/dev/null
( mv .npm npm-away ) 2>/dev/null
echo ok > notes.txt && echo wrote
`
	out, _ := run(t, sandbox.Policy{ReadWrite: []string{home}}, home, line)
	if !strings.Contains(out, "wrote") {
		t.Fatalf("the rest of the folder must work: %q", out)
	}
	if b, _ := os.ReadFile(cli); string(b) != "orig\n" {
		t.Errorf("the npm cache's code changed: %q", b)
	}
	for _, p := range []string{".ssh", ".local/bin/git", "npm-away"} {
		if _, err := os.Lstat(filepath.Join(home, p)); err == nil {
			t.Errorf("%s was made", p)
		}
	}
	// the guard's own folder inside a tree: read-only as a whole
	out, _ = run(t, sandbox.Policy{ReadWrite: []string{filepath.Join(home, ".npm")}}, home, "( echo evil > .npm/new ) 2>/dev/null; echo done")
	if _, err := os.Stat(filepath.Join(home, ".npm", "new")); err == nil || !strings.Contains(out, "done") {
		t.Errorf("a grant of ~/.npm itself must be read-only: %q %v", out, err)
	}
}

// Policy.Keep (bulkhead's config file, given with --config inside a
// folder an app may write) stays read-only as a protected path does.
func TestKeptFilesStayReadOnly(t *testing.T) {
	t.Parallel()
	namespaced(t)
	ws := t.TempDir()
	conf := filepath.Join(ws, "conf", "bulkhead.yaml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("enable: [builtin]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	line := "( echo 'mcp: {}' >> conf/bulkhead.yaml ) 2>/dev/null; ( mv conf conf2 ) 2>/dev/null; ( rm conf/bulkhead.yaml ) 2>/dev/null; echo x > other && echo wrote"
	for _, keep := range []bool{true, false} {
		pol := sandbox.Policy{ReadWrite: []string{ws}}
		if keep {
			pol.Keep = []string{conf}
		}
		out, _ := run(t, pol, ws, line)
		b, _ := os.ReadFile(conf)
		if kept := string(b) == "enable: [builtin]\n"; kept != keep || !strings.Contains(out, "wrote") {
			t.Errorf("keep=%v: the config file reads %q (%q)", keep, b, out)
		}
		if !keep {
			break
		}
	}
}

// What a dialog says of a protected file: a hook by when git runs it,
// any other by its entry's words.
func TestRuns(t *testing.T) {
	t.Parallel()
	for rel, want := range map[string]string{
		".git/hooks/pre-commit":        "git runs this file before every commit",
		"sub/.git/hooks/post-checkout": "git runs this file after every checkout",
		".git/hooks/pre-commit.sample": "git runs the files in this folder",
		".git/config":                  "core.fsmonitor",
		".envrc":                       "direnv runs this file",
		"notes.txt":                    "",
	} {
		got, ok := sandbox.Runs(rel)
		if ok != (want != "") || !strings.Contains(got, want) {
			t.Errorf("Runs(%q) = %q, %v; want %q", rel, got, ok, want)
		}
	}
}
