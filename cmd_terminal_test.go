package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// hostile is model- or app-authored text that would act on a terminal
// printed raw: an OSC 52 clipboard write, a title change, a clear screen,
// an 8-bit CSI, a CR that overwrites the line, an RLO and a zero-width
// space. visible is each of them as the user must see it instead.
const hostile = "copy\x1b]52;c;ZXZpbA==\a title\x1b]0;pwned\x07 clear\x1b[2J\x1b[H csi\u009b31m safe\rEVIL rlo\u202efdp.exe zw\u200bsp"

var visible = []string{`\x1b]52;c;ZXZpbA==\a`, `\x1b]0;pwned\a`, `\x1b[2J\x1b[H`, `\u009b31m`, `safe\rEVIL`, `\u202efdp.exe`, `zw\u200bsp`}

// checkVisible fails unless out holds nothing a terminal would act on and
// shows every escape of hostile.
func checkVisible(t *testing.T, what, out string) {
	t.Helper()
	checkInert(t, what, out)
	for _, v := range visible {
		if !strings.Contains(out, v) {
			t.Errorf("%s: want %s shown as a visible escape in\n%s", what, v, out)
		}
	}
}

// checkInert fails if out holds a control character other than newline
// and tab, a C1 control, or an invisible format character (bidi, zero
// width).
func checkInert(t *testing.T, what, out string) {
	t.Helper()
	for _, r := range out {
		if r == '\n' || r == '\t' {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || r == '\u2028' || r == '\u2029' {
			t.Fatalf("%s: %U reaches the terminal raw in\n%q", what, r, out)
		}
	}
}

func TestAskShowsEscapeSequencesAsVisibleEscapes(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Text(hostile)
	}), "m")
	dir := t.TempDir()
	for _, mode := range [][]string{nil, {"--stream"}} {
		args := append([]string{"ask", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}, mode...)
		out, errOut, code := run(t, append(args, "hello")...)
		if code != 0 {
			t.Fatalf("ask %v: exit %d: %s", mode, code, errOut)
		}
		checkVisible(t, strings.Join(append([]string{"ask"}, mode...), " "), out)
	}
}

func TestAskJSONCarriesNoRawControls(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Text(hostile)
	}), "m")
	dir := t.TempDir()
	for _, mode := range [][]string{nil, {"--stream"}} {
		args := append([]string{"ask", "--json", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}, mode...)
		out, errOut, code := run(t, append(args, "hello")...)
		if code != 0 {
			t.Fatalf("ask --json %v: exit %d: %s", mode, code, errOut)
		}
		checkInert(t, "ask --json", out)
		// What a consumer decodes holds no control: the model's escape
		// sequences arrive as visible text (\x1b), never as ESC.
		if got := answerOf(events(t, out)); got != termtext.Sanitize(hostile) {
			t.Fatalf("answer %q, want %q", got, termtext.Sanitize(hostile))
		}
	}
}

func TestAskFailureShowsEscapeSequencesAsVisibleEscapes(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Status: 500, Error: hostile}
	}), "m")
	out, errOut, code := run(t, "ask", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", t.TempDir(), "hello")
	if code != 1 || !strings.Contains(errOut, "bulkhead: ") {
		t.Fatalf("exit %d, out %q, err %q", code, out, errOut)
	}
	checkVisible(t, "the error of ask", errOut)
	checkInert(t, "ask's output", out)

	// The partial answer of a turn that was cut off.
	srv = ollamatest.NewScripted(t, ollamatest.Planned(chatPlan, func(*api.ChatRequest) ollamatest.Reply {
		return ollamatest.Reply{Chunks: []string{hostile, "never"}, CutAfter: 1}
	}), "m")
	for _, mode := range [][]string{nil, {"--stream"}} {
		args := append([]string{"ask", "--ollama-host", srv.Host(), "--model", "m", "--data-dir", t.TempDir()}, mode...)
		out, errOut, code := run(t, append(args, "hello")...)
		if code != 1 {
			t.Fatalf("cut %v: exit %d, out %q, err %q", mode, code, out, errOut)
		}
		checkVisible(t, "a partial answer", out)
		checkInert(t, "the error of a cut turn", errOut)
	}
}

func TestReportShowsEscapeSequencesAsVisibleEscapes(t *testing.T) {
	var b strings.Builder
	if code := report(&exitError{1, context.Canceled}, &b, false); code != 1 {
		t.Fatalf("exit %d", code)
	}
	b.Reset()
	report(errorString("app said: "+hostile), &b, false)
	checkVisible(t, "report", b.String())
}

type errorString string

func (e errorString) Error() string { return string(e) }

// openCore opens the core on dir without Ollama, as the CLI's memory and
// permissions commands do.
func openCore(t *testing.T, dir string) *engine.Engine {
	t.Helper()
	cfg := config.Config{DataDir: dir, Ollama: config.Ollama{Host: "127.0.0.1:1"}, Hub: config.Owner{Model: "m"}, Spokes: config.Owner{Model: "m"}, Enable: []string{"builtin"}, Workspace: t.TempDir()}
	eng, err := engine.Open(context.Background(), cfg, engine.Options{Prompter: permissionstest.NewPrompter(permissions.AnswerOnce)})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

func TestMemoryShowsEscapeSequencesAsVisibleEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	eng := openCore(t, dir)
	ns, err := eng.Store.Namespace("hub")
	if err != nil {
		t.Fatal(err)
	}
	lt := ns.LongTerm()
	if err := lt.SetSummary(memory.Summary{Chat: "c1", Text: "summary " + hostile, Model: "m"}); err != nil {
		t.Fatal(err)
	}
	if err := lt.PutEntities(memory.Entity{Key: "note", Value: "value " + hostile + "\n  forged.key = forged value", Source: "app " + hostile}); err != nil {
		t.Fatal(err)
	}
	eng.Close()

	out, errOut, code := run(t, "memory", "show", "hub", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("show: exit %d %s", code, errOut)
	}
	checkVisible(t, "memory show", out)
	if strings.Contains(out, "\n  forged.key") || !strings.Contains(out, `\n  forged.key = forged value`) {
		t.Fatalf("a newline in a fact's value must not start a line of its own:\n%s", out)
	}

	for _, args := range [][]string{{"memory", "show", "hub", "--json"}, {"memory", "export"}} {
		out, errOut, code := run(t, append(args, "--data-dir", dir)...)
		if code != 0 {
			t.Fatalf("%v: exit %d %s", args, code, errOut)
		}
		checkInert(t, strings.Join(args, " "), out)
		if !json.Valid([]byte(out)) || !strings.Contains(out, `\u202efdp.exe`) {
			t.Fatalf("%v: want valid JSON with JSON escapes:\n%s", args, out)
		}
	}
}

func TestPermissionsLogShowsEscapeSequencesAsVisibleEscapes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	eng := openCore(t, dir)
	args, err := json.Marshal(map[string]string{"to": hostile})
	if err != nil {
		t.Fatal(err)
	}
	_, err = eng.Broker.Request(context.Background(), permissions.Request{
		Kind: permissions.KindExec, Subject: "hub", Object: "clock", Function: "clock.now",
		Args: args, Detail: "Run clock " + hostile, Warning: "careful " + hostile,
	})
	eng.Close()
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, "permissions", "log", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("log: exit %d %s", code, errOut)
	}
	checkInert(t, "permissions log", out)
	// The arguments are JSON, whose escapes encoding/json wrote; the
	// runes it leaves raw are shown as escapes.
	for _, v := range []string{`\u009b31m`, `\u202efdp.exe`, `zw\u200bsp`, `\u001b]52;c;ZXZpbA==\u0007`} {
		if !strings.Contains(out, v) {
			t.Errorf("want %s in\n%s", v, out)
		}
	}
	checkVisible(t, "the warning in permissions log", out[strings.Index(out, "⚠"):])

	out, errOut, code = run(t, "permissions", "log", "--json", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("log --json: exit %d %s", code, errOut)
	}
	checkInert(t, "permissions log --json", out)
	var e permissions.Entry
	// What a consumer decodes carries the controls as visible escapes,
	// never raw.
	if err := json.Unmarshal([]byte(strings.SplitN(out, "\n", 2)[0]), &e); err != nil || e.Request.Warning != "careful "+termtext.Sanitize(hostile) {
		t.Fatalf("log --json must decode to the logged text, escaped (%v):\n%s", err, out)
	}
}
