package main

import (
	"bytes"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/accessible"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// typed is one line a person types in the line-mode chat: once what is on
// screen n times (at the chat's prompt "request: ", or a question's
// "Enter a number between"), and, for an answer, once Grace has passed.
type typed struct {
	after  string
	n      int
	answer bool
	line   string
}

// lineChat runs `bulkhead --accessible` with args, typing each line as a
// person does; the input ends after the last once the chat prompts again
// (or at once with end set).
func lineChat(t *testing.T, lines []typed, args ...string) (string, string, int) {
	t.Helper()
	return runTyped(t, func(out *screen, in io.Writer) {
		for _, l := range lines {
			if !out.until(l.after, l.n) {
				return
			}
			if l.answer {
				time.Sleep(accessible.Grace + 200*time.Millisecond)
			}
			io.WriteString(in, l.line+"\n")
		}
		out.until("request: ", strings.Count(out.String(), "request: ")+1)
	}, append([]string{"--accessible"}, args...)...)
}

// asked reports whether any request to the model carried s.
func asked(srv *ollamatest.Scripted, s string) bool {
	for _, r := range srv.Requests() {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, s) {
				return true
			}
		}
	}
	return false
}

// TestAccessibleModeIsTheSameProduct: in line mode every slash command
// works and none reaches a model — /help, a mistyped command (named,
// with the closest), /private (one private request: nothing of it on
// disk), /model (the installed models, chosen by number; the next
// request goes to it), /chats, /permissions, /log, /quit.
func TestAccessibleModeIsTheSameProduct(t *testing.T) {
	g := newGate()
	g.open()
	srv := ollamatest.NewScripted(t, servingScript(g), "m", "m2")
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir, "--apps", "clock"}
	const secret = "my locker code is 90417"
	out, errOut, code := lineChat(t, []typed{
		{"request: ", 1, false, "/help"},
		{"request: ", 2, false, "/modle"},
		{"request: ", 3, false, "hello there, what does the timepiece say"},
		{"request: ", 4, false, "/private " + secret},
		{"request: ", 5, false, "/model"},
		{"Enter a number between", 1, true, "2"},
		{"request: ", 6, false, "which model answers"},
		{"request: ", 7, false, "/chats"},
		{"Enter a number between", 2, true, ""},
		{"request: ", 8, false, "/permissions"},
		{"Enter a number between", 3, true, ""},
		{"request: ", 9, false, "/log"},
		{"request: ", 10, false, "/quit"},
	}, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{
		"/private [REQUEST]", "/model [NAME]", "/permissions", "/chats", "/quit", // /help
		"There is no command /modle; did you mean /model? Nothing was sent.",
		"1. m (now)", "2. m2", "The hub and the spokes now use m2",
		"Which chat should be opened?", "hello there",
		"Which grant should be revoked?", "allow exec: hub to clock", // the default grant
		"exec hub to clock clock.now: allowed", // /log
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the chat lacks %q:\n%s", want, out)
		}
	}
	for _, cmd := range []string{"/help", "/modle", "/model", "/chats", "/permissions", "/log", "/quit", "/private"} {
		if asked(srv, cmd) {
			t.Errorf("%s reached the model", cmd)
		}
	}
	if !asked(srv, secret) {
		t.Fatal("the private request was never asked")
	}
	var models []string
	for _, r := range srv.Requests() {
		if lastUser(&r) == "which model answers" {
			models = append(models, r.Model)
		}
	}
	if len(models) == 0 || models[len(models)-1] != "m2" {
		t.Errorf("after /model 2 the request went to %v", models)
	}
	// Nothing of the private request reached the disk.
	if err := serve.Stop(dir, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	scanned := false
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte("90417")) {
			t.Errorf("%s holds the private request", path)
		}
		if bytes.Contains(b, []byte("hello there")) {
			scanned = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !scanned {
		t.Fatal("the scan found not even the chat's own request: it proves nothing")
	}
}

// TestAccessibleTypeAheadIsShownFirst: a line typed while a request runs
// is not sent by itself when the chat comes back: it is shown, and sent
// only if the person says so.
func TestAccessibleTypeAheadIsShownFirst(t *testing.T) {
	g := newGate()
	defer g.open()
	srv := ollamatest.NewScripted(t, servingScript(g), "m")
	dir := filepath.Join(t.TempDir(), "data")
	args := []string{"--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}
	go func() {
		<-g.entered // the slow request runs
		time.Sleep(100 * time.Millisecond)
		g.open()
	}()
	out, errOut, code := lineChat(t, []typed{
		{"request: ", 1, false, "a slow question"},
		{"working…", 1, false, "delete the todo file"}, // typed while it runs
		{"Send it as a request?", 1, true, "n"},
		{"request: ", 3, false, "and now something typed at the prompt"},
	}, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	if !strings.Contains(out, `You typed "delete the todo file" while the last request was running.`) || !strings.Contains(out, "Not sent.") {
		t.Fatalf("the line typed ahead was not shown first:\n%s", out)
	}
	if asked(srv, "delete the todo file") {
		t.Fatal("the line typed ahead reached the model")
	}
	if !asked(srv, "and now something typed at the prompt") {
		t.Fatalf("a line typed at the prompt was not sent:\n%s", out)
	}
}

// TestAccessibleOffersAPull: a model that is not installed is said at the
// start, with a pull offered as a numbered question; once pulled, the
// chat uses it.
func TestAccessibleOffersAPull(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	dir := filepath.Join(t.TempDir(), "data")
	out, errOut, code := lineChat(t, []typed{
		{"Enter a number between", 1, true, "1"},
		{"request: ", 1, false, "hello"},
	}, "--ollama-host", srv.Host(), "--model", "fresh", "--data-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	for _, want := range []string{"The model fresh is not installed", "1. pull fresh now", "Pulled fresh."} {
		if !strings.Contains(out, want) {
			t.Errorf("the chat lacks %q:\n%s", want, out)
		}
	}
	var got string
	for _, r := range srv.Requests() {
		if lastUser(&r) == "hello" {
			got = r.Model
		}
	}
	if got != "fresh" {
		t.Fatalf("the request went to %q", got)
	}
}

// TestAModelChoiceIsRemembered: /model's choice holds for the bulkheads
// started later on the data directory — while the config still names
// the models it was chosen over, and no flag names one.
func TestAModelChoiceIsRemembered(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m", "m2", "m3")
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	write := func(model string) {
		if err := os.WriteFile(cfg, []byte("hub:\n  model: "+model+"\nspokes:\n  model: "+model+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("m")
	args := []string{"--config", cfg, "--ollama-host", srv.Host(), "--data-dir", dir}
	out, errOut, code := lineChat(t, []typed{
		{"request: ", 1, false, "/model"},
		{"Enter a number between", 1, true, "2"},
	}, args...)
	if code != 0 || !strings.Contains(out, "The hub and the spokes now use m2, here and in the bulkheads started later") {
		t.Fatalf("exit %d: %s\n%s", code, errOut, out)
	}
	modelOf := func(q string, extra ...string) string {
		t.Helper()
		if _, errOut, code, _, _ := asBulkhead(t, nil, append(append([]string{"ask"}, append(extra, args...)...), q)...); code != 0 {
			t.Fatalf("ask: exit %d %s", code, errOut)
		}
		for _, r := range srv.Requests() {
			if lastUser(&r) == q {
				return r.Model
			}
		}
		return ""
	}
	if got := modelOf("later one"); got != "m2" {
		t.Fatalf("a later bulkhead asked %q, want the chosen m2", got)
	}
	if got := modelOf("with a flag", "--model", "m3"); got != "m3" {
		t.Fatalf("--model m3 asked %q", got)
	}
	write("m3")
	if got := modelOf("after an edit"); got != "m3" {
		t.Fatalf("after the config named m3, asked %q", got)
	}
}
