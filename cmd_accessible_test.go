package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/accessible"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
)

// TestAccessibleChatAnswersDialogs: `bulkhead --accessible` is a line-mode
// chat whose permission dialogs are huh prompts in accessible mode: the
// dialog says what the hub says in plain text, a number answers it, an
// empty answer or the end of the input denies, and the chat goes on with
// the next line.
func TestAccessibleChatAnswersDialogs(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	dir := filepath.Join(t.TempDir(), "data")
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	if err := os.WriteFile(cfg, []byte("enable: [builtin, demo]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// chat types the request, then each answer as a person does: once
	// the question is on screen and could be read (accessible.Grace);
	// then the lines after, each at the chat's next prompt.
	chat := func(request string, answers, after []string, args ...string) string {
		t.Helper()
		out, errOut, code := typedChat(t, request, answers, after, append([]string{"--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", dir}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, errOut, out)
		}
		if strings.Contains(out, "\x1b[") || strings.Contains(out, "\x1b]") {
			t.Fatalf("accessible output carries terminal sequences:\n%q", out)
		}
		return out
	}
	const trip = "Day 1: arrive"
	const lisbon = "plan a trip to Lisbon\n"
	out := chat(lisbon, []string{"1\n"}, nil, "--accessible")
	for _, want := range []string{"Permission question: exec, from hub to travel_mate, travel.plan_trip.",
		"The hub says: expected by the plan", "query: plan a trip to Lisbon (typed by you)",
		"1. allow once", "4. deny", "5. deny with a note", trip} {
		if !strings.Contains(out, want) {
			t.Errorf("1 (allow once): the output lacks %q:\n%s", want, out)
		}
	}
	// 4 denies: the app does not run; the next line is the next request.
	out = chat(lisbon, []string{"4\n"}, []string{"what rhymes with orange\n"}, "--accessible")
	if strings.Contains(out, trip) || strings.Count(out, "request: ") < 3 {
		t.Errorf("4 (deny) must keep the app from running, and the chat go on:\n%s", out)
	}
	// The end of the input in a dialog denies.
	if out = chat(lisbon, nil, nil, "--accessible"); strings.Contains(out, trip) || !strings.Contains(out, "Your answer (empty denies)") {
		t.Errorf("the end of the input must deny:\n%s", out)
	}
	// An answer typed ahead with the request answers nothing: the dialog
	// says so, the end of the input denies, and the line is the chat's.
	if out = chat(lisbon+"1\n", nil, nil, "--accessible"); strings.Contains(out, trip) || !strings.Contains(out, `"1" came before this question, so it does not answer it`) {
		t.Errorf("an answer typed before the question must not answer it:\n%s", out)
	}
	// The config turns it on as well.
	if err := os.WriteFile(cfg, []byte("enable: [builtin, demo]\nui:\n  accessible: true\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out = chat(lisbon, []string{"\n"}, nil); !strings.Contains(out, "accessible mode") || strings.Contains(out, trip) {
		t.Errorf("ui.accessible: true must run the line-mode chat, and an empty answer deny:\n%s", out)
	}
	log, _, _ := run(t, "permissions", "log", "--config", cfg, "--data-dir", dir)
	if strings.Count(log, "denied") < 4 || !strings.Contains(log, "allowed once") {
		t.Errorf("the action log must hold one allow and four denials:\n%s", log)
	}
}

// screen is standard output as the person at the terminal sees it.
type screen struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *screen) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *screen) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// until waits (at most 30 s) for n occurrences of what on the screen.
func (s *screen) until(what string, n int) bool {
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if strings.Count(s.String(), what) >= n {
			return true
		}
	}
	return false
}

// typedChat runs bulkhead with args as runIn does, its input typed as a
// person types it: request at once, each answer once its question is on
// screen and Grace has passed, each line of after at the chat's next
// prompt; then the input ends.
func typedChat(t *testing.T, request string, answers, after []string, args ...string) (string, string, int) {
	t.Helper()
	return runTyped(t, func(out *screen, in io.Writer) {
		io.WriteString(in, request)
		for i, a := range answers {
			if !out.until("Enter a number between", i+1) {
				return
			}
			time.Sleep(accessible.Grace + 200*time.Millisecond)
			io.WriteString(in, a)
		}
		for i, a := range after {
			if !out.until("request: ", i+2) {
				return
			}
			io.WriteString(in, a)
		}
		if len(answers) == 0 {
			out.until("Enter a number between", 1) // then the input ends, in the dialog
			return
		}
		out.until("request: ", len(after)+2)
	}, args...)
}

// runTyped runs bulkhead with args as runIn does, its input written by
// typeIn as a person types, looking at the screen; the input ends when
// typeIn returns.
func runTyped(t *testing.T, typeIn func(out *screen, in io.Writer), args ...string) (string, string, int) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	stopServingAfter(t, args)
	pr, pw := io.Pipe()
	var out screen
	var errOut bytes.Buffer
	go func() {
		defer pw.Close()
		typeIn(&out, pw)
	}()
	root := newRoot()
	root.SetIn(pr)
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errOut)
	err := root.Execute()
	pr.Close()
	code := 0
	if err != nil {
		code = report(err, &errOut, false)
	}
	return out.String(), errOut.String(), code
}
