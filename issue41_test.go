package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/ptytest"
	"github.com/bulkhead-dev/bulkhead/memory"
)

// Issue 41's items that no other test drove end to end: keys typed while
// an MCP server starts, a declined network question in `mcp add`, the
// exit status of every command the README's table names, /model's scope
// in `ask`, and what `mcp rm` offers to remove.

// TestKeysTypedWhileAServerStartsReachTheChat: the TUI, a real process
// in its own terminal, is started while an enabled server that is not
// cached is held at its start by a gate. Keys typed at once — before
// the chat has drawn — are not lost: they show in the input while the
// status line says the server is starting, and enter sends them. The
// turn waits for the server, saying so, and runs once the gate opens.
// The gate, not a time, is the proof: nothing here can list the server
// before the test writes the file it waits for.
func TestKeysTypedWhileAServerStartsReachTheChat(t *testing.T) {
	cfgPath, data, gate := unlistedConfig(t)
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	args := []string{"--config", cfgPath, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", data}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "TERM=xterm-256color")
	stopServingAfter(t, args)
	tm := ptytest.Start(t, cmd, 120, 30)
	t.Cleanup(func() { tm.Stop(10 * time.Second) })

	const typed = "kestrel-typed-early"
	tm.Type(typed) // at once: the chat may not be drawn yet
	screen, ok := tm.Wait(func(s string) bool {
		return strings.Contains(s, typed) && strings.Contains(s, "⟳ starting tester")
	}, time.Minute)
	if !ok {
		t.Fatalf("the keys typed while tester starts, and the status line saying so, are not on the screen:\n%s", screen)
	}
	if strings.Count(screen, typed) != 1 {
		t.Fatalf("the keys typed are shown %d times:\n%s", strings.Count(screen, typed), screen)
	}
	tm.Enter()
	tm.WaitFor(t, "starting the MCP server tester", time.Minute)
	for _, r := range srv.Requests() {
		if strings.Contains(lastUser(&r), typed) {
			t.Fatalf("a model call ran before tester was listed: %q", lastUser(&r))
		}
	}
	if err := os.WriteFile(gate, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	screen, ok = tm.Wait(func(s string) bool {
		return slices.ContainsFunc(srv.Requests(), func(r api.ChatRequest) bool { return strings.Contains(lastUser(&r), typed) }) &&
			!strings.Contains(s, "⟳ starting tester") && !strings.Contains(s, "starting the MCP server tester")
	}, time.Minute)
	if !ok {
		t.Fatalf("once tester is listed, the request typed early reached no model call, or the screen still says it starts:\n%s", screen)
	}
}

// TestDecliningTheNetworkInMCPAddSaysWhatStays: on a terminal, n to the
// network question of `bulkhead mcp add` for a server that needs its
// network to start fails the listing (exit 1) and says that the server
// stays in the config enabled, not listed, and how to list it — the
// fix it names, run as written with its own flag, lists it.
func TestDecliningTheNetworkInMCPAddSaysWhatStays(t *testing.T) {
	cfgPath, data := netConfig(t)
	cmd := exec.Command(os.Args[0], "mcp", "add", "--config", cfgPath, "--data-dir", data, "netty")
	stopServingAfter(t, cmd.Args)
	cmd.Env = append(os.Environ(), asMainEnv+"=1", "TERM=xterm-256color")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr // pipes: the question goes to the terminal
	tm := ptytest.Start(t, cmd, 200, 30)
	tm.WaitFor(t, "Allow it, for this listing? [y/N]", time.Minute)
	tm.Type("n" + ptytest.KeyEnter)
	select {
	case <-tm.Done():
	case <-time.After(2 * time.Minute):
		t.Fatalf("mcp add did not end; the screen:\n%s", tm.Screen())
	}
	code := tm.Cmd().ProcessState.ExitCode()
	msg := stderr.String()
	if code != 1 || !strings.Contains(msg, "mcp.netty stays in "+cfgPath+", enabled but not listed") || !strings.Contains(msg, "bulkhead starts without it") {
		t.Fatalf("declined: exit %d, want 1 and what stays said\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), msg)
	}
	fixes := hints(msg)
	i := slices.IndexFunc(fixes, func(f []string) bool { return slices.Contains(f, "--allow-net") })
	if i < 0 {
		t.Fatalf("no fix names --allow-net: %v\n%s", fixes, msg)
	}
	out, errOut, code := runIn(t, strings.NewReader(""), append(fixes[i], "--config", cfgPath, "--data-dir", data)...)
	if code != 0 || !strings.Contains(out, "netty lists 1 tools") {
		t.Fatalf("the fix `bulkhead %s`: exit %d\n%s%s", strings.Join(fixes[i], " "), code, out, errOut)
	}
}

// TestEveryCommandExitsAsTheTableSays: the statuses of README's "Exit
// status" table for the commands and outcomes TestExitStatusesAreOneTable
// and the tests beside it leave out — 0 for every listing, 2 for a name
// that is not there whichever command names it (an MCP server, a change
// set, a chat to export) and for a data directory in use under another
// configuration (a busy serving process, --vanilla fixed at its start),
// 1 for an Ollama that does not answer (ask, accessible mode, doctor).
func TestEveryCommandExitsAsTheTableSays(t *testing.T) {
	g := newGate()
	defer g.open()
	common := servingArgs(t, g)
	run := func(env []string, args ...string) (string, string, int) {
		t.Helper()
		out, errOut, code, _, _ := asBulkhead(t, env, append(args, common...)...)
		return out, errOut, code
	}
	if _, errOut, code := run(nil, "ask", "hello"); code != 0 {
		t.Fatalf("ask: exit %d %s", code, errOut)
	}
	for _, c := range []struct {
		args []string
		want int
	}{
		{[]string{"version"}, 0},
		{[]string{"chats", "list"}, 0},
		{[]string{"chats", "list", "--json"}, 0},
		{[]string{"permissions", "list"}, 0},
		{[]string{"permissions", "log"}, 0},
		{[]string{"memory", "show"}, 0},
		{[]string{"memory", "export"}, 0},
		{[]string{"changes"}, 0},
		{[]string{"changes", "list"}, 0},
		{[]string{"mcp", "list"}, 0},
		{[]string{"chats", "export", "nope"}, 2},
		{[]string{"changes", "show", "nope"}, 2},
		{[]string{"changes", "accept", "nope"}, 2},
		{[]string{"changes", "discard", "nope"}, 2},
		{[]string{"mcp", "rm", "nosuch"}, 2},
		{[]string{"mcp", "add", "nosuch"}, 2},
		{[]string{"mcp", "add"}, 2},
		{[]string{"mcp", "add", "fs", "--folder", "/tmp"}, 2},
		{[]string{"mcp", "rm", "fs", "--purge", "--keep"}, 2},
		{[]string{"permissions", "revoke"}, 2},
		{[]string{"version", "extra"}, 2},
		{[]string{"doctor", "--bogus"}, 2},
	} {
		if out, errOut, code := run(nil, c.args...); code != c.want {
			t.Errorf("%v: exit %d, want %d\n%s%s", c.args, code, c.want, out, errOut)
		}
	}

	// A turn held at the model: the serving process is busy, and
	// --vanilla is fixed at its start.
	held := startBulkhead(t, append([]string{"ask"}, append(common, "a slow question")...)...)
	select {
	case <-g.entered:
	case <-held.done:
		t.Fatalf("the held ask ended: %s", held.errb.String())
	}
	if out, errOut, code := run(nil, "ask", "--vanilla", "hi"); code != 2 || !strings.Contains(errOut, "in use") {
		t.Errorf("ask --vanilla beside a busy serving process: exit %d, want 2\n%s%s", code, out, errOut)
	}
	g.open()
	<-held.done
	if code := held.cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("the held ask: exit %d\n%s", code, held.errb.String())
	}

	// An Ollama that does not answer: 1, for every command that needs it.
	down := []string{"PATH=/nonexistent"} // no `ollama serve` to start
	for _, args := range [][]string{{"ask", "hi"}, {"doctor"}} {
		// The session's own host, after the common flags: the last one given counts.
		out, errOut, code, _, _ := asBulkhead(t, down, append(append(args, common...), "--ollama-host", "http://127.0.0.1:1")...)
		if code != 1 {
			t.Errorf("%v on a host that does not answer: exit %d, want 1\n%s%s", args, code, out, errOut)
		}
	}
}

// TestAModelChoiceHoldsInAsk: /model's words say its choice holds in the
// bulkheads started later on the data directory, ask among them, until
// --model names another — and so it does: ask's calls go to the model
// /model chose, and with --model to that one.
func TestAModelChoiceHoldsInAsk(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m", "m2")
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("hub:\n  model: m\nspokes:\n  model: m\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfg, "--ollama-host", srv.Host(), "--data-dir", dir}
	if out, errOut, code := lineChat(t, []typed{{"request: ", 1, false, "/model m2"}}, args...); code != 0 || !strings.Contains(out, "now use m2") {
		t.Fatalf("/model m2: exit %d\n%s%s", code, out, errOut)
	}
	models := func(extra ...string) []string {
		t.Helper()
		before := len(srv.Requests())
		out, errOut, code := run(t, append(append([]string{"ask"}, args...), append(extra, "hello there")...)...)
		if code != 0 {
			t.Fatalf("ask %v: exit %d\n%s%s", extra, code, out, errOut)
		}
		var got []string
		for _, r := range srv.Requests()[before:] {
			if !slices.Contains(got, r.Model) {
				got = append(got, r.Model)
			}
		}
		slices.Sort(got)
		return got
	}
	if got := models(); !slices.Equal(got, []string{"m2"}) {
		t.Errorf("ask after /model m2 called %v, want only m2", got)
	}
	if got := models("--model", "m"); !slices.Equal(got, []string{"m"}) {
		t.Errorf("ask --model m after /model m2 called %v, want only m", got)
	}
}

// TestMCPRmOffersWhatTheServerLeft: `bulkhead mcp rm` takes the server
// out of the config and names what it leaves behind — its data folder,
// its cached tool list, what it remembers — keeping it all off a
// terminal (naming --purge) and, once the server is out of the config,
// `mcp rm --purge` removes each, says what it keeps, and leaves no owner
// of that name behind (memory show of it is a name that is not there).
func TestMCPRmOffersWhatTheServerLeft(t *testing.T) {
	dir := t.TempDir()
	server := filepath.Join(dir, "testserver")
	goBuild(t, server, "./apps/mcp/internal/testserver")
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	cfg, data := filepath.Join(dir, "config.yaml"), filepath.Join(dir, "data")
	if err := os.WriteFile(cfg, []byte("enable: [clock]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	common := []string{"--config", cfg, "--data-dir", data, "--ollama-host", srv.Host(), "--model", "m"}
	if out, errOut, code := run(t, append(append([]string{"mcp", "add"}, common...), "tester", "--", server)...); code != 0 || !strings.Contains(out, "tester lists") {
		t.Fatalf("mcp add: exit %d\n%s%s", code, out, errOut)
	}
	cached := filepath.Join(data, "mcp-cache", "tester.json")
	own := mcp.DataFolder(data, "tester")
	if err := os.MkdirAll(own, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(own, "graph.json"), []byte(`{"entities":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	eng := openCore(t, data)
	ns, err := eng.Store.Namespace("spoke/tester")
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.LongTerm().SetSummary(memory.Summary{Chat: "c1", Text: "echoed twice", Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := ns.LongTerm().PutEntities(memory.Entity{Key: "echo.last", Value: "kestrel", Source: "tester"}); err != nil {
		t.Fatal(err)
	}
	eng.Close()

	// Off a terminal, nothing is asked: all is kept, each named.
	out, errOut, code := runIn(t, strings.NewReader(""), append([]string{"mcp", "rm", "tester"}, common...)...)
	if code != 0 || !strings.Contains(out, "removed mcp.tester from "+cfg) || !strings.Contains(out, "its data: ") || !strings.Contains(out, "its cached tool list: ") ||
		!strings.Contains(out, "bulkhead mcp rm tester --purge") || !strings.Contains(out, "bulkhead memory forget tester") {
		t.Fatalf("mcp rm off a terminal: exit %d\n%s%s", code, out, errOut)
	}
	if b, _ := os.ReadFile(cfg); strings.Contains(string(b), "tester") {
		t.Fatalf("tester is still in the config:\n%s", b)
	}
	for _, p := range []string{own, cached} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s went, though nothing was asked: %v", p, err)
		}
	}

	// Run again with --purge: what is left goes, memory too.
	out, errOut, code = runIn(t, strings.NewReader(""), append([]string{"mcp", "rm", "tester", "--purge"}, common...)...)
	for _, want := range []string{"removed its data", "removed its cached tool list", "removed its memory", "kept: its grants (bulkhead permissions revoke --app tester)"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Fatalf("mcp rm --purge: exit %d, want %q\n%s%s", code, want, out, errOut)
		}
	}
	for _, p := range []string{own, cached} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after --purge", p)
		}
	}
	if out, errOut, code := run(t, append([]string{"memory", "show", "tester"}, common...)...); code != 2 {
		t.Errorf("memory show tester after --purge: exit %d, want 2 (no such owner)\n%s%s", code, out, errOut)
	}
	if out, errOut, code := run(t, append([]string{"mcp", "rm", "tester"}, common...)...); code != 2 || !strings.Contains(errOut, "nothing of one left behind") {
		t.Errorf("mcp rm of what is gone: exit %d, want 2\n%s%s", code, out, errOut)
	}
}
