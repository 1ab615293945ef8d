package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// TestConfigEditsLockNobodyOut: with a chat open and its turn running,
// the config file is edited (a rule added, a setting changed); a new
// session is not locked out, and runs under the edit. A session on
// another Ollama host shares the serving process, its calls going to its
// host. What only a new serving process can take is named, key by key,
// with what to do; so is a setting that differs because it came from
// another file.
func TestConfigEditsLockNobodyOut(t *testing.T) {
	g := newGate()
	defer g.open()
	common := servingArgs(t, g)
	cfgFile := common[1]

	tui := startBulkhead(t, append([]string{"test-client"}, append(common, "a slow question")...)...)
	tui.expect(t, "chat ")
	select {
	case <-g.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the TUI's turn never reached the model")
	}

	// The edit: the clock is now denied by a rule, and the history is
	// shorter.
	edited := "enable: [clock]\nhub:\n  history: 3\npermissions:\n  rules:\n    - {effect: deny, kind: exec, object: clock}\n"
	if err := os.WriteFile(cfgFile, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, code, _, _ := asBulkhead(t, nil, append([]string{"ask", "--json"}, append(common, "what does the timepiece say")...)...)
	if code != 0 && code != 1 || strings.Contains(errOut, "differ") {
		t.Fatalf("a session after the edit: exit %d\n%s\n%s", code, clip(out), clip(errOut))
	}
	if !strings.Contains(out, "denied by the user's rules") {
		t.Fatalf("the edit's rule did not apply to the new session:\n%s\n%s", clip(out), clip(errOut))
	}

	// A session on another Ollama host: its calls go there.
	other := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	hostArgs := slicesReplace(common, "--ollama-host", other.Host())
	out, errOut, code, _, _ = asBulkhead(t, nil, append([]string{"ask", "--json"}, append(hostArgs, "hello over there")...)...)
	if code != 0 || answerOf(events(t, out)) == "" {
		t.Fatalf("a session on another host: exit %d\n%s\n%s", code, clip(out), clip(errOut))
	}
	if len(other.Requests()) == 0 {
		t.Fatal("the session's calls did not go to its own Ollama host")
	}

	// Another file that differs in a setting the process applies, and in
	// one it keeps while it runs: both named, with what to do.
	otherFile := filepath.Join(t.TempDir(), "other.yaml")
	if err := os.WriteFile(otherFile, []byte("enable: [clock]\nhub:\n  history: 9\ncache_dir: "+t.TempDir()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fileArgs := slicesReplace(common, "--config", otherFile)
	out, errOut, code, _, _ = asBulkhead(t, nil, append([]string{"ask", "--json"}, append(fileArgs, "hello")...)...)
	t.Logf("refused: %s", errOut)
	for _, want := range []string{"hub.history", "cache_dir", "fixed while it runs", cfgFile, otherFile, "--data-dir"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("a session of another file: want %q in\n%s", want, errOut)
		}
	}
	if code == 0 {
		t.Errorf("a session refused exits 0")
	}

	g.open()
	if got := tui.expect(t, "answer "); got == "" {
		t.Fatal("the open chat's turn: no answer")
	}
}

// slicesReplace is args with the value after flag replaced.
func slicesReplace(args []string, flag, value string) []string {
	out := append([]string(nil), args...)
	for i := range out[:len(out)-1] {
		if out[i] == flag {
			out[i+1] = value
		}
	}
	return out
}
