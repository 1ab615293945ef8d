package permission

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

const (
	sentence = "“Write buy milk to notes.txt, not to todo.txt”"
	doubt    = `it holds another path, "notes.txt" — you wrote ` + sentence
)

// writeTo is files' write of todo.txt as the hub asks it when the user's
// words rule the path out: its judge gives the doubt, with the user's
// sentence, in the reason and again in the values not typed.
func writeTo() perm.Request {
	return perm.Request{Kind: perm.KindIrreversible, Subject: "files", Object: "files", Function: "write", Irreversible: true,
		Args:   json.RawMessage(`{"path":"todo.txt","content":"- pay rent\n- buy milk\n"}`),
		Detail: "files wants to write",
		Warning: "NOT expected by the plan: path has no binding in the plan (the value came in your words, but not as what you asked for: " + doubt + "); " +
			"cannot be undone; values you did not type: path in your words, but not as what you asked for: " + doubt,
		Concerns:   []perm.Concern{perm.ConcernUnexpected, perm.ConcernIrreversible, perm.ConcernForeign},
		Provenance: []perm.Provenance{{Path: "path", Source: perm.ProvenanceDoubted, Via: doubt, Key: true}, {Path: "content", Source: perm.ProvenanceUnknown}},
		Change: &perm.Change{Path: "todo.txt", Exists: true, Removed: 0, Added: 1, Field: "content", Lines: []perm.ChangeLine{
			{Op: "@", Text: "from line 1"}, {Op: " ", Text: "- pay rent"}, {Op: "+", Text: "- buy milk"}}}}
}

// The hub's warning says a doubted value's reason, with the user's
// sentence, twice, and the value's source line would say it a third
// time: the dialog says it once, in the warning (always on screen), and
// names the source beside the value without it.
func TestTheUsersSentenceIsQuotedOnce(t *testing.T) {
	t.Parallel()
	r := writeTo()
	want := "NOT expected by the plan: path has no binding in the plan (the value came in your words, but not as what you asked for: " + doubt + "); " +
		"cannot be undone; values you did not type: path in your words, but not as what you asked for"
	if got := judgement(r); got != want {
		t.Errorf("judgement:\n got %q\nwant %q", got, want)
	}
	th := style.New(true)
	for _, size := range [][2]int{{80, 24}, {80, 19}, {120, 40}} {
		p, _ := New(Ask{ID: 1, Req: r}, Config{Theme: th})
		out := ansi.Strip(p.View(th, size[0], size[1]))
		flat := strings.Join(strings.Fields(strings.ReplaceAll(out, "│", " ")), " ")
		if n := strings.Count(flat, "you wrote “"); n != 1 || !strings.Contains(flat, "you wrote "+sentence) {
			t.Errorf("at %v the user's sentence is quoted %d times:\n%s", size, n, out)
		}
		if !strings.Contains(flat, "todo.txt ← in your words, but not as what you asked for") {
			t.Errorf("at %v the value does not say where it came from:\n%s", size, out)
		}
		// The diff, above the fold.
		for _, w := range []string{"change · todo.txt: 0 lines removed, 1 added", "  - pay rent", "+ - buy milk"} {
			if !strings.Contains(out, w) {
				t.Errorf("at %v the first screen lacks %q:\n%s", size, w, out)
			}
		}
	}
	// A reason the warning does not give stays beside its value, whole.
	r.Warning = "NOT expected by the plan; cannot be undone"
	p, _ := New(Ask{ID: 1, Req: r}, Config{Theme: th})
	flat := strings.Join(strings.Fields(strings.ReplaceAll(ansi.Strip(p.View(th, 120, 40)), "│", " ")), " ")
	if !strings.Contains(flat, "← in your words, but not as what you asked for: "+doubt) {
		t.Errorf("a reason only the value has must stay beside it:\n%s", flat)
	}
}

// Distinct sentences are each said once; a short via (a word) is never
// taken out of the warning.
func TestJudgementSaysEachQuoteOnce(t *testing.T) {
	t.Parallel()
	r := perm.Request{Warning: "a — you wrote “one”; b — you wrote “two”; c — you wrote “one”; from mail.read; to from mail.read",
		Provenance: []perm.Provenance{{Path: "to", Source: "mail.read", Via: "mail.read"}}}
	if got, want := judgement(r), "a — you wrote “one”; b — you wrote “two”; c; from mail.read; to from mail.read"; got != want {
		t.Errorf("judgement:\n got %q\nwant %q", got, want)
	}
}

// The plan's reason is drawn calm and whole, whatever it quotes: a
// semicolon in the user's words neither ends it nor is changed, and the
// concern after it has its own mark.
func TestTheReasonIsDrawnWhole(t *testing.T) {
	t.Parallel()
	reason := `expected by the plan: step s1, one call of run (command bound by the plan from your words: "run: echo a; echo b")`
	r := perm.Request{Kind: perm.KindIrreversible, Subject: "shell", Object: "shell", Function: "run", Irreversible: true, Expected: true,
		Args: json.RawMessage(`{"command":"echo a; echo b"}`), Detail: "shell wants to run",
		Warning: reason + "; cannot be undone", Reason: reason, Concerns: []perm.Concern{perm.ConcernIrreversible}}
	th := style.New(true)
	p, _ := New(Ask{ID: 1, Req: r}, Config{Theme: th})
	out := ansi.Strip(p.View(th, 120, 40))
	flat := strings.Join(strings.Fields(strings.ReplaceAll(out, "│", " ")), " ")
	if !strings.Contains(flat, "✓ "+reason) || strings.Contains(flat, "⚠ echo b") {
		t.Errorf("the reason, calm and whole:\n%s", out)
	}
}
