package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestExitStatusesAreOneTable: every command gives the same status for
// the same kind of outcome (README, "Exit status"): 2 for a name that is
// not there, bad flags or configuration, whichever command; 3 for a
// dialog no one could answer, with the turn kept and the command that
// runs it again; 1 for a request refused (by a policy) or failed.
func TestExitStatusesAreOneTable(t *testing.T) {
	g := newGate()
	g.open()
	common := servingArgs(t, g)
	run := func(args ...string) (string, string, int) {
		t.Helper()
		out, errOut, code, _, _ := asBulkhead(t, nil, append(args, common...)...)
		return out, errOut, code
	}
	// Something to name that is there, first: a chat.
	if _, errOut, code := run("ask", "hello"); code != 0 {
		t.Fatalf("ask: exit %d %s", code, errOut)
	}
	usage := [][]string{
		{"chats", "show", "nope"},
		{"chats", "rm", "nope"},
		{"ask", "--chat", "nope", "hi"},
		{"ask", "--retry", "--chat", "nope"},
		{"ask", "--retry"},
		{"permissions", "revoke", "nope"},
		{"memory", "forget", "nope"},
		{"ask", "--on-prompt=sometimes", "hi"},
		{"ask", "--bogus", "hi"},
		{"nosuchcommand"},
	}
	for _, args := range usage {
		if _, errOut, code := run(args...); code != 2 {
			t.Errorf("%v: exit %d, want 2\n%s", args, code, errOut)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("hub:\n  modle: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code, _, _ := asBulkhead(t, nil, "ask", "--config", bad, "hi"); code != 2 {
		t.Errorf("a config typo: exit %d, want 2\n%s", code, errOut)
	}

	// A dialog with no one to answer it: 3, in both output modes, and the
	// turn kept for the retry the message names.
	for _, mode := range [][]string{{"ask"}, {"ask", "--json"}} {
		out, errOut, code := run(append(mode, "what does the timepiece say")...)
		if code != 3 {
			t.Fatalf("%v: a dialog no one answered: exit %d\n%s\n%s", mode, code, out, errOut)
		}
		m := regexp.MustCompile(`bulkhead ask --retry --chat (\S+) --on-prompt=expected`).FindStringSubmatch(errOut)
		if m == nil {
			t.Fatalf("%v: the message names no retry:\n%s", mode, errOut)
		}
		if strings.Count(errOut, "none could be given") > 1 {
			t.Errorf("%v: the error is said twice:\n%s", mode, errOut)
		}
		out, errOut, code = run("ask", "--retry", "--chat", m[1], "--on-prompt=once")
		if code != 0 || !strings.Contains(out, ":") && out == "" {
			t.Fatalf("the retry: exit %d\n%s\n%s", code, out, errOut)
		}
	}
	// Denied by a policy: answered, with a refusal: 1, not 3.
	if _, errOut, code := run("ask", "--on-prompt=deny", "what does the timepiece say"); code != 1 || !strings.Contains(errOut, "denied by --on-prompt=deny") {
		t.Errorf("denied by --on-prompt=deny: exit %d\n%s", code, errOut)
	}
}

// TestInterruptedIs130: ctrl+c (SIGINT) during a turn exits 130, and the
// turn is kept, cancelled, for a retry.
func TestInterruptedIs130(t *testing.T) {
	g := newGate()
	defer g.open()
	common := servingArgs(t, g)
	out, errOut, code, _, _ := asBulkhead(t, nil, append([]string{"ask", "--json"}, append(common, "hello")...)...)
	if code != 0 {
		t.Fatalf("ask: exit %d %s", code, errOut)
	}
	chat, _ := events(t, out)[0]["chat"].(string)
	p := startBulkhead(t, append([]string{"ask", "--json", "--chat", chat}, append(common, "a slow question")...)...)
	<-g.entered
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if code := p.cmd.ProcessState.ExitCode(); code != 130 {
		t.Fatalf("interrupted: exit %d\n%s", code, p.errb.String())
	}
	g.open()
	out, errOut, _, _, _ = asBulkhead(t, nil, append([]string{"chats", "show", chat}, common...)...)
	if !strings.Contains(out, "cancelled") {
		t.Fatalf("the interrupted turn is not kept as cancelled:\n%s", out)
	}
}
