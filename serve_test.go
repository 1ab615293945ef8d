package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/spf13/cobra"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/serve"
)

// newTestClient is the test model of a TUI: a client of the serving
// process that opens a chat, asks one query and prints what happens —
// "chat ID", "dialog APP FUNCTION" for each dialog (allowed once, or with
// --hold left open until the process is killed), "answer TEXT" or
// "error TEXT".
func newTestClient(g *globals) *cobra.Command {
	var hold bool
	cmd := &cobra.Command{
		Use: "test-client QUERY", Hidden: true, Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := g.load(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			p := promptFunc(func(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
				fmt.Fprintf(out, "dialog %s %s\n", r.Object, r.Function)
				if hold {
					<-ctx.Done()
					return permissions.Decision{}, ctx.Err()
				}
				return permissions.Decision{RequestID: r.ID, Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourceUser}, nil
			})
			cli, err := g.connect(cmd, cfg, "tui", p)
			if err != nil {
				return err
			}
			defer cli.Close()
			chat, err := cli.NewChat(false)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "chat %s\n", chat.ID)
			t, err := cli.Ask(cmd.Context(), chat.ID, args[0], nil)
			if err != nil {
				fmt.Fprintf(out, "error %s\n", oneLineText(err.Error()))
				return nil
			}
			fmt.Fprintf(out, "answer %s\n", oneLineText(t.Answer))
			return nil
		},
	}
	cmd.Flags().BoolVar(&hold, "hold", false, "leave dialogs open")
	return cmd
}

type promptFunc func(context.Context, permissions.Request) (permissions.Decision, error)

func (f promptFunc) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	return f(ctx, r)
}

// proc is a bulkhead process started by a test, its stdout read by line.
type proc struct {
	cmd   *exec.Cmd
	seen  []string // every line expect read
	lines chan string
	done  chan struct{}
	errb  strings.Builder
}

// startBulkhead starts this test binary as bulkhead with args.
func startBulkhead(t *testing.T, args ...string) *proc {
	t.Helper()
	stopServingAfter(t, args)
	p := &proc{cmd: exec.Command(os.Args[0], args...), lines: make(chan string, 100), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), asMainEnv+"=1")
	p.cmd.Stderr = &p.errb
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
		_ = p.cmd.Wait()
		close(p.done)
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}

// expect waits for a line with prefix and returns the rest.
func (p *proc) expect(t *testing.T, prefix string) string {
	t.Helper()
	timeout := time.After(60 * time.Second)
	var seen []string
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("the process ended before %q; stdout %q; stderr: %s", prefix, seen, p.errb.String())
			}
			seen = append(seen, l)
			p.seen = append(p.seen, l)
			if rest, found := strings.CutPrefix(l, prefix); found {
				return strings.TrimSpace(rest)
			}
		case <-timeout:
			t.Fatalf("no %q within 60 s", prefix)
		}
	}
}

// gate holds the model's answers to queries containing "slow" until
// released.
type gate struct {
	once    sync.Once
	release chan struct{}
	entered chan struct{}
}

func newGate() *gate { return &gate{release: make(chan struct{}), entered: make(chan struct{}, 100)} }

func (g *gate) open() { g.once.Do(func() { close(g.release) }) }

// lastUser is the last user message of a request.
func lastUser(req *api.ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// servingScript is the gullible model, except that its answers to a
// query with "slow" in it wait at the gate, and a request about the
// timepiece is planned for the clock app.
func servingScript(g *gate) ollamatest.Script {
	base := ollamatest.Gullible()
	clockPlan := ollamatest.JSON(map[string]any{"steps": []map[string]any{{"id": "s1", "functionality": "clock.now", "query": "what time is it", "depends_on": []string{}}}})
	return func(req *api.ChatRequest) ollamatest.Reply {
		if strings.Contains(string(req.Format), `"steps"`) && strings.Contains(lastUser(req), "timepiece") {
			return clockPlan
		}
		if len(req.Format) == 0 && strings.Contains(lastUser(req), "slow") {
			g.entered <- struct{}{}
			<-g.release
		}
		return base(req)
	}
}

// servingArgs starts the serving script behind g and returns the flags
// of a fresh data directory with the clock app enabled.
func servingArgs(t *testing.T, g *gate) []string {
	t.Helper()
	srv := ollamatest.NewScripted(t, servingScript(g), "m")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	// The clock asks to run (the default grant would run it unasked):
	// these tests hold a turn at its dialog.
	if err := os.WriteFile(cfg, []byte("enable: [clock]\npermissions:\n  rules:\n    - {effect: ask, kind: exec, object: clock}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return []string{"--config", cfg, "--ollama-host", srv.Host(), "--model", "m", "--data-dir", filepath.Join(dir, "data")}
}

// TestManySessions: with a TUI (its test model) open and one of its turns
// running, `permissions list`, `memory show` and `doctor` work, and 20
// concurrent `ask` on the same data directory all answer.
func TestManySessions(t *testing.T) {
	g := newGate()
	defer g.open()
	common := servingArgs(t, g)

	tui := startBulkhead(t, append([]string{"test-client"}, append(common, "a slow question")...)...)
	tui.expect(t, "chat ")
	select {
	case <-g.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the TUI's turn never reached the model")
	}

	// While its turn runs, the other commands work.
	for _, args := range [][]string{{"permissions", "list"}, {"memory", "show"}} {
		out, errOut, code, _, _ := asBulkhead(t, nil, append(args, common...)...)
		if code != 0 {
			t.Fatalf("%v during a turn: exit %d\n%s\n%s", args, code, out, errOut)
		}
	}
	out, _, _, _, _ := asBulkhead(t, nil, append([]string{"doctor"}, common...)...)
	if !strings.Contains(out, "served by bulkhead serve") || !strings.Contains(out, "tui (pid") || !strings.Contains(out, "1 turn(s) running") {
		t.Fatalf("doctor should name the serving process, its TUI client and the running turn:\n%s", out)
	}

	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for i := range 20 {
		wg.Go(func() {
			q := fmt.Sprintf("question number %d", i)
			out, errOut, code, _, _ := asBulkhead(t, nil, append([]string{"ask", "--json"}, append(common, q)...)...)
			if code != 0 || answerOf(events(t, out)) == "" {
				errs <- fmt.Sprintf("ask %d: exit %d\n%s\n%s", i, code, clip(out), clip(errOut))
			}
		})
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	g.open()
	if got := tui.expect(t, "answer "); got == "" {
		t.Fatal("the TUI's turn: no answer")
	}
}

// TestServingProcessKilledMidTurn: SIGKILL of the serving process in the
// middle of a turn loses no finished turn; the client says what happened,
// the next command serves the directory again, and the cut turn can be
// retried.
func TestServingProcessKilledMidTurn(t *testing.T) {
	g := newGate()
	defer g.open()
	srv := ollamatest.NewScripted(t, servingScript(g), "m")
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	common := []string{"--ollama-host", srv.Host(), "--model", "m", "--data-dir", data}

	first, errOut, code, _, _ := asBulkhead(t, nil, append([]string{"ask", "--json"}, append(common, "the first question")...)...)
	if code != 0 || answerOf(events(t, first)) == "" {
		t.Fatalf("first ask: exit %d %s", code, errOut)
	}
	var chat string
	for _, ev := range events(t, first) {
		if c, ok := ev["chat"].(string); ok && chat == "" {
			chat = c
		}
	}
	slow := startBulkhead(t, append([]string{"ask", "--chat", chat}, append(common, "a slow question")...)...)
	select {
	case <-g.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the turn never reached the model")
	}
	st, err := serve.Query(data)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(st.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-slow.done
	if code := slow.cmd.ProcessState.ExitCode(); code == 0 || !strings.Contains(slow.errb.String(), "went away") {
		t.Fatalf("the client of a killed serving process: exit %d, stderr %q", code, slow.errb.String())
	}
	g.open()

	out, errOut, code, _, _ := asBulkhead(t, nil, append([]string{"chats", "show", chat}, common...)...)
	if code != 0 || !strings.Contains(out, answerOf(events(t, first))) {
		t.Fatalf("the finished turn must be kept: exit %d\n%s\n%s", code, out, errOut)
	}
	st2, err := serve.Query(data)
	if err != nil || st2.Pid == st.Pid {
		t.Fatalf("a new serving process: %+v %v", st2, err)
	}
	out, errOut, code, _, _ = asBulkhead(t, nil, append([]string{"ask", "--retry", "--chat", chat}, common...)...)
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("the cut turn must be retryable: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestClientKilledWithDialogOpen: a client killed while its turn's dialog
// is open leaves the turn cancelled — the dialog answered by no one else
// — and retryable.
func TestClientKilledWithDialogOpen(t *testing.T) {
	g := newGate()
	defer g.open()
	common := servingArgs(t, g)

	// Another client is connected the whole time: the dialog must not go
	// to it.
	other := startBulkhead(t, append([]string{"test-client"}, append(common, "a slow question")...)...)
	other.expect(t, "chat ")

	held := startBulkhead(t, append([]string{"test-client", "--hold"}, append(common, "what does the timepiece say")...)...)
	chat := held.expect(t, "chat ")
	if d := held.expect(t, "dialog "); !strings.Contains(d, "clock") {
		t.Fatalf("dialog: %q", d)
	}
	if err := held.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-held.done

	var exp struct {
		Turns []struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"turns"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, errOut, code, _, _ := asBulkhead(t, nil, append([]string{"chats", "export", chat, "--format", "json"}, common...)...)
		if code != 0 || json.Unmarshal([]byte(out), &exp) != nil || len(exp.Turns) != 1 {
			t.Fatalf("export: exit %d\n%s\n%s", code, out, errOut)
		}
		if exp.Turns[0].Status != "pending" || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if exp.Turns[0].Status != "cancelled" {
		t.Fatalf("the turn of a killed client: status %q (%s), want cancelled", exp.Turns[0].Status, exp.Turns[0].Error)
	}
	out, errOut, code, _, _ := asBulkhead(t, nil, append([]string{"ask", "--retry", "--chat", chat, "--on-prompt=once"}, common...)...)
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("the cancelled turn must be retryable: exit %d\n%s\n%s", code, out, errOut)
	}
	g.open()
	other.expect(t, "answer ")
	for _, l := range other.seen {
		if strings.HasPrefix(l, "dialog") {
			t.Fatalf("the other client was shown the dialog: %q", other.seen)
		}
	}
}

// TestOllamaStartedLater: a serving process that started while Ollama
// was down serves the next command once Ollama answers — no stale
// "unreachable" from its start.
func TestOllamaStartedLater(t *testing.T) {
	srv := ollamatest.NewScripted(t, ollamatest.Gullible(), "m")
	// A switchable front for the scripted server: down (connections
	// closed at once) until up is set.
	var up atomic.Bool
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	backend := strings.TrimPrefix(srv.Host(), "http://")
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if !up.Load() {
				c.Close()
				continue
			}
			go func() {
				defer c.Close()
				b, err := net.Dial("tcp", backend)
				if err != nil {
					return
				}
				defer b.Close()
				go func() { _, _ = io.Copy(b, c) }()
				_, _ = io.Copy(c, b)
			}()
		}
	}()
	data := filepath.Join(t.TempDir(), "data")
	args := []string{"ask", "--ollama-host", "http://" + ln.Addr().String(), "--model", "m", "--data-dir", data}
	_, errOut, code, _, _ := asBulkhead(t, []string{"PATH=/nonexistent"}, append(args, "hello")...)
	if code == 0 {
		t.Fatalf("with Ollama down the ask must fail: %s", errOut)
	}
	up.Store(true)
	out, errOut, code, _, _ := asBulkhead(t, []string{"PATH=/nonexistent"}, append(args, "hello again")...)
	if code != 0 || strings.TrimSpace(out) == "" {
		t.Fatalf("Ollama is up now: exit %d\n%s\n%s", code, out, errOut)
	}
}
