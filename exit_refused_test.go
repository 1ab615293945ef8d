package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// mailArgs starts the gullible model and returns the flags of a fresh
// data directory with the demo pack, its apps let run by a rule (what
// the tests below are about is the requests of their work).
func mailArgs(t *testing.T) []string {
	t.Helper()
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("enable: [demo]\npermissions:\n  rules:\n    - {effect: allow, kind: exec, subject: hub}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", filepath.Join(dir, "data")}
}

// sendMail is a request whose one step is an irreversible call.
const sendMail = "send an email to bob@example.com saying hi"

// TestAPolicyDenialTheTurnNeededExits1: a turn that answered, but whose
// step did not run because a policy denied the request it needed, exits
// 1 (README, "Exit status"): its answer says what did not run, and with
// --json the answer event names it (refused). A run whose denials the
// turn did without — an injected instruction's calls denied, the user's
// own request done — exits 0.
func TestAPolicyDenialTheTurnNeededExits1(t *testing.T) {
	common := mailArgs(t)
	for _, policy := range []string{"deny", "expected"} {
		out, errOut, code := run(t, append([]string{"ask", "--on-prompt=" + policy}, append(common, sendMail)...)...)
		if code != 1 || !strings.Contains(out, "mail.send did not run") {
			t.Errorf("--on-prompt=%s denied the send: exit %d, want 1\n%s\n%s", policy, code, out, errOut)
		}
	}
	out, errOut, code := run(t, append([]string{"ask", "--json", "--on-prompt=deny"}, append(common, sendMail)...)...)
	evs := events(t, out)
	refused, _ := evs[len(evs)-1]["refused"].([]any)
	if code != 1 || evs[len(evs)-1]["type"] != "answer" || len(refused) != 1 || !strings.HasPrefix(refused[0].(string), "mail.send did not run — ") {
		t.Errorf("--json: exit %d, the answer event names no refusal\n%s\n%s", code, out, errOut)
	}
	if errOut != "" {
		t.Errorf("--json writes nothing but events: %q", errOut)
	}

	// The attack's calls denied, the inbox summarized: the denials did
	// not matter to what was asked.
	out, errOut, code = run(t, append([]string{"ask", "--json", "--on-prompt=deny"}, append(common, "Summarize the emails in my inbox")...)...)
	evs = events(t, out)
	denied := 0
	for _, e := range evs {
		if e["type"] == "decision" && e["allowed"] == false {
			denied++
		}
	}
	if code != 0 || denied == 0 || len(succeeded(evs)["mail.read"]) == 0 {
		t.Errorf("denials the turn did without: exit %d with %d denied, want 0\n%s\n%s", code, denied, out, errOut)
	}
}

// TestTheExit3HintNamesARetryThatWorks: the message of a run that met a
// dialog no one could answer names the retry with a policy that allows
// that dialog — an irreversible send needs judged (or once), which
// expected never allows — and that retry, run as written, does what was
// asked and exits 0; it never answers "nothing to retry".
func TestTheExit3HintNamesARetryThatWorks(t *testing.T) {
	common := mailArgs(t)
	out, errOut, code := run(t, append([]string{"ask"}, append(common, sendMail)...)...)
	if code != 3 {
		t.Fatalf("a dialog no one answered: exit %d\n%s\n%s", code, out, errOut)
	}
	m := regexp.MustCompile(`bulkhead ask --retry --chat (\S+) --on-prompt=(\w+)`).FindStringSubmatch(errOut)
	if m == nil {
		t.Fatalf("the message names no retry:\n%s", errOut)
	}
	if m[2] != "judged" || !strings.Contains(errOut, "no rule can allow an irreversible action") {
		t.Errorf("an irreversible send: the hint names --on-prompt=%s\n%s", m[2], errOut)
	}
	out, errOut, code = run(t, append([]string{"ask", "--json", "--retry", "--chat", m[1], "--on-prompt=" + m[2]}, common...)...)
	if code != 0 || strings.Contains(errOut, "nothing to retry") {
		t.Fatalf("the retry the hint names: exit %d\n%s\n%s", code, out, errOut)
	}
	if sent := succeeded(events(t, out))["mail.send"]; len(sent) != 1 || sent[0]["to"] != "bob@example.com" {
		t.Fatalf("the retry did not send the email: %v\n%s", sent, out)
	}
}

// TestNamesThatAreNotThereExit2: a model that is not installed, in plain
// and JSON output, and a memory owner that is not there are names that
// are not there: exit 2, as a chat or a grant that is not there. An
// installed app that remembers nothing yet is there.
func TestNamesThatAreNotThereExit2(t *testing.T) {
	common := servingArgs(t, newGate())
	for _, mode := range [][]string{{"ask"}, {"ask", "--json"}} {
		args := append(append(mode, common...), "--model", "absent:1b", "hello")
		if out, errOut, code := run(t, args...); code != 2 || !strings.Contains(out+errOut, "ollama pull absent:1b") {
			t.Errorf("%v with a missing model: exit %d, want 2\n%s\n%s", mode, code, out, errOut)
		}
	}
	if out, errOut, code := run(t, append([]string{"memory", "show", "nosuch"}, common...)...); code != 2 || !strings.Contains(errOut, `no memory owner "nosuch"`) {
		t.Errorf("memory show nosuch: exit %d, want 2\n%s\n%s", code, out, errOut)
	}
	if out, errOut, code := run(t, append([]string{"memory", "show", "clock"}, common...)...); code != 0 || !strings.Contains(out, "(nothing remembered)") {
		t.Errorf("memory show of an installed app: exit %d\n%s\n%s", code, out, errOut)
	}
}
