package shell

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/appstest"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.Launch() // commands run through this binary as their launcher
	testenv.Main(m, true)
}

// staged is the app over dir whose commands write it through layers of a
// store of the test's own (their sets wait there, as in bulkhead's data
// directory).
func staged(t *testing.T, dir string, opts Options) *App {
	t.Helper()
	s, err := changes.Open(filepath.Join(t.TempDir(), "changes"), changes.Options{})
	if err != nil {
		t.Fatal(err)
	}
	opts.Changes = s
	return New(dir, opts)
}

func run(t *testing.T, a *App, ctx context.Context, command string) (result, error) {
	t.Helper()
	args, _ := json.Marshal(map[string]string{"command": command})
	out, err := a.Call(ctx, apps.Call{Function: "run", Args: args})
	if err != nil {
		return result{}, err
	}
	appstest.CheckResult(t, a, "run", out)
	var r result
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatal(err)
	}
	return r, nil
}

// groupGone waits up to 5s for process group pgid to have no live
// member; zombies waiting for a reaper do not count.
func groupGone(t *testing.T, pgid int) bool {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if !groupAlive(pgid) {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func groupAlive(pgid int) bool {
	stats, err := filepath.Glob("/proc/[0-9]*/stat")
	if err != nil || len(stats) == 0 {
		return syscall.Kill(-pgid, 0) == nil
	}
	for _, p := range stats {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		s := string(b)
		// pid (comm) state ppid pgrp ...
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if len(f) >= 3 && f[0] != "Z" && f[2] == strconv.Itoa(pgid) {
			return true
		}
	}
	return false
}

func TestManifest(t *testing.T) {
	if err := New(t.TempDir(), Options{}).Manifest().Check(apps.Default()); err != nil {
		t.Fatal(err)
	}
}

func TestRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	a := New(dir, Options{})
	tests := []struct {
		command string
		code    int
		output  string
	}{
		{"echo hello", 0, "hello\n"},
		{"echo out; echo err >&2; exit 3", 3, "out\nerr\n"},
		{"pwd -P", 0, real + "\n"},
		{"cat; echo done", 0, "done\n"}, // stdin is empty, not the terminal
		{"false", 1, ""},
		{"no-such-command-xyz 2>/dev/null", 127, ""},
		{"kill -TERM $$", 128 + 15, ""},
		{"printf 'a\\377b'", 0, "a\uFFFDb"},
	}
	for _, tt := range tests {
		r, err := run(t, a, context.Background(), tt.command)
		if err != nil || r.ExitCode != tt.code || r.Output != tt.output || r.Truncated || r.TimedOut {
			t.Errorf("run(%q) = %+v, %v; want code %d output %q", tt.command, r, err, tt.code, tt.output)
		}
	}
}

func TestTruncated(t *testing.T) {
	t.Parallel()
	a := New(t.TempDir(), Options{MaxOutput: 10})
	r, err := run(t, a, context.Background(), "head -c 5000000 /dev/zero | tr '\\0' x; echo tail >&2")
	if err != nil || r.Output != "xxxxxxxxxx" || !r.Truncated || r.ExitCode != 0 {
		t.Errorf("run = %+v, %v", r, err)
	}
}

func TestTimeoutKillsGroup(t *testing.T) {
	t.Parallel()
	// Long enough for the sandbox's launcher to start the shell even
	// under the race detector, far below the sleeps.
	a := New(t.TempDir(), Options{Timeout: 3 * time.Second})
	start := time.Now()
	r, err := run(t, a, context.Background(), "echo $$; sleep 100 & sleep 100; echo never")
	if err != nil {
		t.Fatal(err)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("took %v", time.Since(start))
	}
	if !r.TimedOut || r.ExitCode != 128+9 || strings.Contains(r.Output, "never") {
		t.Errorf("run = %+v", r)
	}
	pgid, err := strconv.Atoi(strings.TrimSpace(r.Output))
	if err != nil {
		t.Fatalf("output %q: %v", r.Output, err)
	}
	if !groupGone(t, pgid) {
		t.Errorf("process group %d still has live processes", pgid)
	}
}

func TestBackgroundLeftoversKilled(t *testing.T) {
	t.Parallel()
	a := New(t.TempDir(), Options{})
	start := time.Now()
	r, err := run(t, a, context.Background(), "sleep 100 & echo $$")
	if err != nil || r.TimedOut || r.ExitCode != 0 {
		t.Fatalf("run = %+v, %v", r, err)
	}
	// The child sleeps 100 s: a call that waited for it takes that long.
	// Half of it tells the two apart under any load (5 s did not, under
	// the race detector beside the whole suite).
	if d := time.Since(start); d > 50*time.Second {
		t.Errorf("a background child held the call for %v", d)
	}
	pgid, _ := strconv.Atoi(strings.TrimSpace(r.Output))
	if pgid == 0 || !groupGone(t, pgid) {
		t.Errorf("background sleep of group %d left running", pgid)
	}
}

func TestContextCancelKillsGroup(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a := staged(t, dir, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	// The command's pid file is in its layer (it writes the workspace
	// through one): read there.
	pidFile := func() string {
		ls, _ := a.opts.Changes.Layers()
		if len(ls) == 0 {
			return ""
		}
		b, _ := os.ReadFile(filepath.Join(ls[0].Overlay().Upper, "pid"))
		return string(b)
	}
	go func() {
		for {
			if b := pidFile(); strings.HasSuffix(b, "\n") {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := run(t, a, ctx, "echo $$ > pid.tmp; mv pid.tmp pid; sleep 100 & sleep 100")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	b := pidFile()
	pgid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	if pgid == 0 || !groupGone(t, pgid) {
		t.Errorf("process group %d still has live processes", pgid)
	}
}

func TestErrors(t *testing.T) {
	t.Parallel()
	a := New(t.TempDir(), Options{})
	tests := []struct{ fn, args, want string }{
		{"exec", `{"command":"true"}`, `no function "exec"`},
		{"run", `{}`, "arguments"},
		{"run", `{"command":["ls"]}`, "arguments"},
		{"run", `{"command":"true","shell":"bash"}`, "arguments"},
		{"run", `{"command":"  "}`, "the command is empty"},
		{"run", `{"command":"a\u0000b"}`, "NUL"},
	}
	for _, tt := range tests {
		_, err := a.Call(context.Background(), apps.Call{Function: tt.fn, Args: json.RawMessage(tt.args)})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s(%s) error = %v, want %q", tt.fn, tt.args, err, tt.want)
		}
	}
	missing := New(filepath.Join(t.TempDir(), "gone"), Options{})
	if _, err := run(t, missing, context.Background(), "true"); err == nil || !strings.Contains(err.Error(), "start the command") || strings.Contains(err.Error(), "gone") {
		t.Errorf("missing workdir: %v", err)
	}
}

// A command runs behind the operating-system bulkhead: it cannot read
// bulkhead's data directory (or anything outside the workspace and the
// system's folders), nor write outside the workspace; unconfined, the
// same command can, so the test can fail.
func TestCommandsAreSandboxed(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	ws, data := t.TempDir(), t.TempDir()
	key := filepath.Join(data, "grants.key")
	if err := os.WriteFile(key, []byte("SECRET-KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	line := "cat " + key + "; echo x > " + filepath.Join(data, "planted") + "; echo inside > in.txt; cat in.txt"
	r, err := run(t, staged(t, ws, Options{}), context.Background(), line)
	if err != nil || strings.Contains(r.Output, "SECRET-KEY") || !strings.Contains(r.Output, "inside") {
		t.Fatalf("sandboxed: %+v %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(data, "planted")); err == nil {
		t.Fatal("a sandboxed command wrote outside the workspace")
	}
	r, _ = run(t, New(ws, Options{Unconfined: true}), context.Background(), line)
	if !strings.Contains(r.Output, "SECRET-KEY") {
		t.Fatalf("unconfined, the same command reads the key (else the test proves nothing): %+v", r)
	}
}

// A command cannot plant what the user's git runs next: in a workspace
// that is a git work tree, a command the user approved makes its commit
// in its layer, and plants a pre-commit hook and a core.fsmonitor there
// too; none of it is in the workspace. The change set shows the commit
// as a commit and the hook and the config apart, warned; accepting the
// commit alone lands it, and the user's own next `git commit` runs no
// code of the command's. Unconfined, the same command plants the hook
// (the test bites).
func TestCommandsCommitButPlantNoHook(t *testing.T) {
	t.Parallel()
	if _, err := sandbox.Status(); err != nil {
		t.Skipf("no Landlock here: %v", err)
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git here")
	}
	for _, unconfined := range []bool{false, true} {
		ws := t.TempDir()
		git := func(args ...string) string {
			cmd := exec.Command("git", append([]string{"-C", ws, "-c", "user.name=u", "-c", "user.email=u@example.com"}, args...)...)
			cmd.Env = append(os.Environ(), "HOME="+ws, "GIT_CONFIG_NOSYSTEM=1")
			out, _ := cmd.CombinedOutput()
			return string(out)
		}
		git("init", "-q", "-b", "main")
		os.WriteFile(filepath.Join(ws, "a.txt"), []byte("a\n"), 0o644)
		line := `printf '#!/bin/sh\necho PLANTED-HOOK-RAN\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
git config core.fsmonitor 'echo PLANTED-FSMONITOR-RAN'
git add a.txt && git -c user.name=u -c user.email=u@example.com commit -q -m 'by the command' && echo committed`
		a := staged(t, ws, Options{Unconfined: unconfined})
		r, err := run(t, a, context.Background(), line)
		if err != nil || !strings.Contains(r.Output, "committed") {
			t.Fatalf("unconfined=%v: the approved commit must go through in its layer: %+v %v", unconfined, r, err)
		}
		if !unconfined {
			if log := git("log", "--oneline"); !strings.Contains(log, "does not have any commits") {
				t.Fatalf("the commit reached the workspace before it was accepted: %q", log)
			}
			store := a.opts.Changes
			ls, _ := store.Layers()
			if len(ls) != 1 {
				t.Fatalf("one change set, not %v", ls)
			}
			set, err := store.Read(context.Background(), ls[0])
			if err != nil {
				t.Fatal(err)
			}
			var commit []int
			seen := map[string]bool{}
			for i, e := range set.View.Entries {
				seen[e.Path] = len(e.Warnings) > 0
				if e.Op == "commits" {
					commit = append(commit, i)
					if !strings.Contains(e.Summary, "on the new main: by the command") {
						t.Errorf("the commit is shown as one: %+v", e)
					}
				}
			}
			if !seen[".git/hooks/pre-commit"] || !seen[".git/config"] || len(commit) != 1 {
				t.Fatalf("the hook and the config are shown apart, warned, beside the commit: %v", seen)
			}
			if _, err := store.Accept(set, commit); err != nil {
				t.Fatal(err)
			}
			if log := git("log", "--format=%s"); strings.TrimSpace(log) != "by the command" {
				t.Errorf("the accepted commit is in the workspace: %q", log)
			}
		}
		os.WriteFile(filepath.Join(ws, "b.txt"), []byte("b\n"), 0o644)
		git("add", "b.txt")
		out := git("commit", "-m", "by the user")
		planted := strings.Contains(out, "PLANTED")
		if planted != unconfined {
			t.Errorf("unconfined=%v: the user's commit ran planted code: %v\n%s", unconfined, planted, out)
		}
	}
}
