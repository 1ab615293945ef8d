package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/ptytest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// listsFolder is a model that plans files.list for any request, lists
// the workspace in the files spoke, and answers with what the listing
// said (serve's listsFiles, for real processes).
func listsFolder(req *api.ChatRequest) ollamatest.Reply {
	switch {
	case len(req.Format) > 0:
		return ollamatest.JSON(map[string]any{"steps": []map[string]any{
			{"id": "s1", "functionality": "files.list", "query": "list the workspace", "depends_on": []string{}}}})
	case len(req.Tools) > 0:
		last := req.Messages[len(req.Messages)-1]
		if last.Role == "tool" {
			return ollamatest.Text("listing: " + last.Content)
		}
		var args api.ToolCallFunctionArguments
		args.Set("path", "")
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "list", Arguments: args}}}}
	}
	last := req.Messages[len(req.Messages)-1]
	return ollamatest.Text("answer: " + last.Content)
}

// startTUI opens the chat (this test binary as bulkhead, no command) in
// a 100×40 terminal, in folder, and waits for its input. It is stopped
// at cleanup (SIGTERM, then SIGKILL).
func startTUI(t *testing.T, folder string, args ...string) *ptytest.Term {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = folder
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "XDG_CONFIG_HOME="+t.TempDir(), "TERM=xterm-256color")
	tm := ptytest.Start(t, cmd, 100, 40)
	tm.WaitFor(t, "Ask anything", 60*time.Second)
	return tm
}

// processGone reports whether pid has exited (a zombie counts).
func processGone(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	// pid (comm) STATE ...: the comm may hold spaces and parentheses.
	s := string(b)
	rest := s[strings.LastIndexByte(s, ')')+1:]
	return strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// TestTwoFoldersOnOneServingProcess: two TUIs, real processes in their
// own pseudo-terminals, opened in two folders with different apps on one
// data directory, are served by one process: each lists its own folder,
// `chats list` answers at once while both are open, and /model in one
// moves only that one's calls to the other model.
func TestTwoFoldersOnOneServingProcess(t *testing.T) {
	srv := ollamatest.NewScripted(t, listsFolder, "m", "m2")
	data := filepath.Join(t.TempDir(), "data")
	folderA, folderB := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(folderA, "only-in-a.txt"), []byte("a"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(folderB, "only-in-b.txt"), []byte("b"), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"--ollama-host", srv.Host(), "--model", "m", "--data-dir", data}

	// Registered first, so run last: once the TUIs are stopped and the
	// data directory's serving process with them, none of them is left.
	var pids []int
	t.Cleanup(func() {
		deadline := time.Now().Add(10 * time.Second)
		for _, pid := range pids {
			for !processGone(pid) && time.Now().Before(deadline) {
				time.Sleep(20 * time.Millisecond)
			}
			if !processGone(pid) {
				t.Errorf("process %d outlived the test", pid)
			}
		}
	})

	// After the TUIs (cleanups run last first): a stop refused while a
	// client is connected would wait for nothing.
	stopServingAfter(t, common)
	one := startTUI(t, folderA, append(common, "--apps", "files")...)
	two := startTUI(t, folderB, append(common, "--apps", "files,calc")...)
	pids = append(pids, one.Cmd().Process.Pid, two.Cmd().Process.Pid)
	st, err := serve.Query(data)
	if err != nil {
		t.Fatal(err)
	}
	pids = append(pids, st.Pid)
	for _, pid := range pids {
		if processGone(pid) {
			t.Fatalf("process %d is not running", pid)
		}
	}

	// ask types q into tm, waits until the screen shows want n times,
	// and returns the models of the requests the turn made.
	ask := func(tm *ptytest.Term, q, want string, n int) []string {
		t.Helper()
		before := len(srv.Requests())
		tm.Type(q)
		tm.Enter()
		if screen, ok := tm.Wait(func(s string) bool { return strings.Count(s, want) >= n }, 30*time.Second); !ok {
			t.Fatalf("%q not shown %d times after %q; screen:\n%s", want, n, q, screen)
		}
		// The turn's last requests may still be finishing: wait until
		// no new one comes for a while.
		for last := -1; ; {
			time.Sleep(200 * time.Millisecond)
			now := len(srv.Requests())
			if now == last {
				break
			}
			last = now
		}
		var models []string
		for _, r := range srv.Requests()[before:] {
			if hub.IsWarm(&r) {
				// A read ahead of the memory worker's, for either chat's
				// next turn on the model its last turn used: background
				// work, not this turn's calls.
				continue
			}
			if !slices.Contains(models, r.Model) {
				models = append(models, r.Model)
			}
		}
		slices.Sort(models)
		t.Logf("%q: %d requests, models %v", q, len(srv.Requests())-before, models)
		return models
	}
	onlyModel := func(who string, got []string, want ...string) {
		t.Helper()
		if len(got) != 1 || !slices.Contains(want, got[0]) {
			t.Errorf("%s's requests went to %v, want only %v", who, got, want)
		}
	}
	ownFolder := func(who string, tm *ptytest.Term, own, other string) {
		t.Helper()
		if s := tm.Screen(); !strings.Contains(s, own) || strings.Contains(s, other) {
			t.Errorf("%s's screen should show %s and not %s:\n%s", who, own, other, s)
		}
	}

	onlyModel("TUI 1", ask(one, "what is in my folder?", "only-in-a.txt", 1), "m")
	onlyModel("TUI 2", ask(two, "what is in my folder?", "only-in-b.txt", 1), "m")
	ownFolder("TUI 1", one, "only-in-a.txt", "only-in-b.txt")
	ownFolder("TUI 2", two, "only-in-b.txt", "only-in-a.txt")

	// While both are open, a command of the data directory answers at
	// once, and sees both chats. (The binary, not run: run's own stop of
	// the serving process would come before the TUIs' at cleanup.)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	list := exec.CommandContext(ctx, os.Args[0], "chats", "list", "--data-dir", data)
	list.Env = append(os.Environ(), asMainEnv+"=1", "XDG_CONFIG_HOME="+t.TempDir())
	var stdout, stderr strings.Builder
	list.Stdout, list.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := list.Run()
	took := time.Since(start)
	out, errOut, code := stdout.String(), stderr.String(), list.ProcessState.ExitCode()
	t.Logf("chats list with both TUIs open: exit %d in %v", code, took)
	var rows []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l != "" {
			rows = append(rows, l)
		}
	}
	if code != 0 || took > 5*time.Second || len(rows) != 2 {
		t.Fatalf("chats list: exit %d (%v) in %v, %d chats\n%s\n%s", code, runErr, took, len(rows), out, errOut)
	}
	if st2, err := serve.Query(data); err != nil || st2.Pid != st.Pid {
		t.Fatalf("one serving process throughout: %d, then %+v %v", st.Pid, st2, err)
	}

	// /model in TUI 1: its calls go to m2 from now on, TUI 2's stay on m.
	one.Type("/model m2")
	one.Enter()
	one.WaitFor(t, "│ m2", 30*time.Second)
	onlyModel("TUI 1 after /model m2", ask(one, "and now?", "only-in-a.txt", 2), "m2", "m2:latest")
	onlyModel("TUI 2 after TUI 1's /model m2", ask(two, "and now?", "only-in-b.txt", 2), "m")
	ownFolder("TUI 1", one, "only-in-a.txt", "only-in-b.txt")
	ownFolder("TUI 2", two, "only-in-b.txt", "only-in-a.txt")

	// ctrl+c quits a TUI by itself, with status 0. (The cleanup's
	// SIGTERM, then SIGKILL, is for a test that failed before this.)
	for i, tm := range []*ptytest.Term{one, two} {
		tm.Type(ptytest.KeyCtrlC)
		select {
		case <-tm.Done():
			if ps := tm.Cmd().ProcessState; !ps.Success() {
				t.Errorf("TUI %d after ctrl+c: %v; screen:\n%s", i+1, ps, tm.Screen())
			}
		case <-time.After(15 * time.Second):
			t.Errorf("TUI %d still runs 15 s after ctrl+c; screen:\n%s", i+1, tm.Screen())
		}
	}
}
