package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// TestEntries are catalog entries for the test server's tools.
var TestEntries = []CatalogEntry{
	{Name: "test.echo", Description: "Echo a text.", Effect: apps.EffectRead, Request: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`), Response: TextResult},
	{Name: "test.note", Description: "Save a note.", Effect: apps.EffectIrreversible, Request: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"}},"required":["title"]}`), Response: TextResult},
	{Name: "test.news", Description: "Read the news.", Effect: apps.EffectRead, Request: json.RawMessage(`{"type":"object"}`), Response: TextResult},
	{Name: "test.crash", Description: "Crash.", Effect: apps.EffectRead, Request: json.RawMessage(`{"type":"object"}`), Response: TextResult},
	{Name: "test.count", Description: "Count words.", Effect: apps.EffectRead, Request: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`), Response: json.RawMessage(`{"type":"object","properties":{"words":{"type":"integer"}},"required":["words"]}`)},
}

// CatalogForTests is the default catalog plus TestEntries.
func CatalogForTests(t testing.TB) *apps.Catalog {
	extra, err := CatalogEntries(Server{Catalog: TestEntries})
	if err != nil {
		t.Fatal(err)
	}
	cat, err := apps.NewCatalog(append(apps.Default().List(), extra...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

// logBuf collects JSON log lines.
type logBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func newApp(t testing.TB, cfg Server, w io.Writer) *App {
	t.Helper()
	if cfg.Command == "" && cfg.URL == "" {
		cfg.Command = TestServer
	}
	if w == nil {
		w = io.Discard
	}
	a, err := New("tester", cfg, CatalogForTests(t), slog.New(slog.NewJSONHandler(w, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func call(a apps.App, fn, args string, d time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return a.Call(ctx, apps.Call{Function: fn, Args: json.RawMessage(args)})
}

// pid is the instance's child process id (0 if none runs).
func pid(a apps.App) int {
	in := a.(*instance)
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.conn == nil || in.conn.cmd == nil {
		return 0
	}
	return in.conn.cmd.Process.Pid
}

// byArgs is the pid of the process whose command line is args (0: none).
func byArgs(args ...string) int {
	want := strings.Join(args, "\x00") + "\x00"
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if b, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline"); string(b) == want {
			return pid
		}
	}
	return 0
}

// procState is a process's state letter from /proc ("" if there is none).
func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2 : i+3]
	}
	return "?"
}

func TestManifestFromTools(t *testing.T) {
	a := newApp(t, Server{Tools: map[string]ToolConfig{"echo": {Functionality: "test.echo"}, "count-words": {Functionality: "test.count"}}}, nil)
	m := a.Manifest()
	if m.Name != "tester" || !strings.Contains(m.Description, "testserver") || !strings.Contains(m.Description, "app-authored") {
		t.Fatalf("manifest %q: %q", m.Name, m.Description)
	}
	want := map[string]apps.Effect{"echo": apps.EffectRead, "write_note": apps.EffectIrreversible, "append_log": apps.EffectWrite,
		"fetch_url": apps.EffectIrreversible, "leak": apps.EffectRead, "count_words": apps.EffectRead}
	for fn, e := range want {
		f, ok := m.Function(fn)
		if !ok || f.Effect != e {
			t.Errorf("%s: %+v, want effect %s", fn, f, e)
		}
	}
	if f, _ := m.Function("count_words"); !strings.Contains(string(f.Result), `"words"`) {
		t.Errorf("a tool with an output schema keeps it as its result schema: %s", f.Result)
	}
	if f, _ := m.Function("echo"); string(f.Result) != string(TextResult) || !strings.Contains(string(f.Params), `"text"`) {
		t.Errorf("echo schemas: %s %s", f.Params, f.Result)
	}
	if m.Provides["test.echo"] != "echo" || m.Provides["test.count"] != "count_words" {
		t.Errorf("provides %v", m.Provides)
	}
	// An open-world tool reaches nothing its sandbox does not grant:
	// the app's hosts are the endpoints of its config, none here.
	if len(m.Hosts) != 0 {
		t.Errorf("hosts %v without mcp.<name>.net", m.Hosts)
	}
	if withNet := newApp(t, Server{Net: []sandbox.Endpoint{{Host: "api.example.com", Port: 443}}}, nil).Manifest(); !slices.Equal(withNet.Hosts, []string{"api.example.com:443"}) {
		t.Errorf("hosts with a net endpoint: %v", withNet.Hosts)
	}
	for _, ti := range a.Tools() {
		if ti.Tool == "fetch_url" && !ti.OpenWorld || ti.Tool == "echo" && ti.OpenWorld {
			t.Errorf("open world: %+v", ti)
		}
	}
	out, err := call(a, "count_words", `{"text":"one two three"}`, 5*time.Second)
	if err != nil || string(out) != `{"words":3}` {
		t.Fatalf("structured call: %s %v", out, err)
	}
}

func TestConfigMayOnlyTighten(t *testing.T) {
	a := newApp(t, Server{Tools: map[string]ToolConfig{"echo": {Effect: apps.EffectIrreversible}, "append_log": {Effect: apps.EffectIrreversible}}}, nil)
	for _, fn := range []string{"echo", "append_log"} {
		if f, _ := a.Manifest().Function(fn); f.Effect != apps.EffectIrreversible {
			t.Errorf("%s was not tightened: %s", fn, f.Effect)
		}
	}
	for tool, e := range map[string]apps.Effect{"write_note": apps.EffectRead, "fetch_url": apps.EffectWrite, "append_log": apps.EffectRead} {
		_, err := New("tester", Server{Command: TestServer, Tools: map[string]ToolConfig{tool: {Effect: e}}}, CatalogForTests(t), nil)
		if err == nil || !strings.Contains(err.Error(), "loosen") || !strings.Contains(err.Error(), tool) {
			t.Errorf("%s configured %s must be refused, got %v", tool, e, err)
		}
	}
	_, err := New("tester", Server{Command: TestServer, Tools: map[string]ToolConfig{"ehco": {Functionality: "test.echo"}}}, CatalogForTests(t), nil)
	if err == nil || !strings.Contains(err.Error(), "ehco") || !strings.Contains(err.Error(), "no such tool") {
		t.Errorf("an unknown tool in config: %v", err)
	}
	_, err = New("tester", Server{Command: TestServer, Tools: map[string]ToolConfig{"echo": {Functionality: "test.nothing"}}}, CatalogForTests(t), nil)
	if err == nil || !strings.Contains(err.Error(), "not in the catalog") {
		t.Errorf("an unknown functionality: %v", err)
	}
}

// Each fault fails only its own call, with a message that says what
// happened; the next call works, on a fresh process where the old one is
// in doubt.
func TestFaultsFailOnlyTheirCall(t *testing.T) {
	a := newApp(t, Server{}, nil)
	in := a.NewInstance()
	defer in.(io.Closer).Close()
	cases := []struct {
		fn, want string
		restart  bool
	}{
		{"crash", "exited during the call (exit status 3)", true},
		{"hang", "did not answer in time", true},
		{"garbage", "malformed JSON-RPC", true},
		{"huge", "too large", true},
		{"big", "too large", false},
		{"fail", "the service is down", false},
		{"no_such_function", "no function", false},
	}
	for _, c := range cases {
		if _, err := call(in, "echo", `{"text":"before"}`, 10*time.Second); err != nil {
			t.Fatalf("before %s: %v", c.fn, err)
		}
		before := pid(in)
		start := time.Now()
		_, err := call(in, c.fn, `{}`, 2*time.Second)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s: want an error saying %q, got %v", c.fn, c.want, err)
		}
		if took := time.Since(start); took > 4*time.Second {
			t.Errorf("%s took %s", c.fn, took)
		}
		out, err := call(in, "echo", `{"text":"after"}`, 10*time.Second)
		if err != nil || string(out) != `{"content":"echo: after"}` {
			t.Fatalf("after %s the next call must work: %s %v", c.fn, out, err)
		}
		if after := pid(in); (after != before) != c.restart {
			t.Errorf("%s: process %d then %d; restart expected: %v", c.fn, before, after, c.restart)
		}
		if c.restart && procState(before) != "" {
			t.Errorf("%s: the old process %d is still there (%s)", c.fn, before, procState(before))
		}
	}
}

func TestStartFailures(t *testing.T) {
	cat := CatalogForTests(t)
	// A command that is not there is the config's to change: it is named,
	// and the server is not left "unlisted" as though a start had failed.
	missing := filepath.Join(t.TempDir(), "no-such-server")
	if _, err := New("missing", Server{Command: missing}, cat, nil); err == nil || !strings.Contains(err.Error(), missing) || errors.Is(err, ErrUnlisted) {
		t.Errorf("missing: %v", err)
	}
	for name, cfg := range map[string]Server{
		"exits":    {Command: "sh", Args: []string{"-c", "echo oops >&2; exit 7"}},
		"silent":   {Command: "sleep", Args: []string{"60"}, StartTimeout: 300 * time.Millisecond},
		"garbage":  {Command: "sh", Args: []string{"-c", "echo hello; sleep 60"}},
		"no route": {URL: "http://127.0.0.1:1/mcp", StartTimeout: 2 * time.Second},
	} {
		start := time.Now()
		_, err := New(name, cfg, cat, nil)
		if err == nil || !strings.Contains(err.Error(), "could not start") {
			t.Errorf("%s: %v", name, err)
		}
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: took %s", name, time.Since(start))
		}
	}
	// A server that was there at install and is gone later fails its call,
	// and works again once it is back.
	bin := filepath.Join(t.TempDir(), "server")
	copyFile(t, TestServer, bin)
	a := newApp(t, Server{Command: bin}, nil)
	in := a.NewInstance()
	defer in.(io.Closer).Close()
	os.Rename(bin, bin+".away")
	if _, err := call(in, "echo", `{"text":"x"}`, 5*time.Second); err == nil || !strings.Contains(err.Error(), "could not start") {
		t.Fatalf("want a start failure, got %v", err)
	}
	os.Rename(bin+".away", bin)
	if _, err := call(in, "echo", `{"text":"x"}`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}

func copyFile(t *testing.T, from, to string) {
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o755); err != nil {
		t.Fatal(err)
	}
}

// The server's stderr goes to the log, never to bulkhead's own stderr:
// a child copy of this test runs a server that writes to stderr, and its
// stderr must stay empty.
func TestStderrGoesToTheLog(t *testing.T) {
	if os.Getenv("BULKHEAD_MCP_STDERR_CHILD") == "1" {
		a, err := New("tester", Server{Command: TestServer}, CatalogForTests(t), slog.New(slog.NewJSONHandler(os.Stdout, nil)))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if _, err := call(a, "echo", `{"text":"MARK-1234"}`, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := call(a, "crash", `{}`, 5*time.Second); err == nil {
			t.Fatal("crash did not fail")
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestStderrGoesToTheLog$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BULKHEAD_MCP_STDERR_CHILD=1", "BULKHEAD_MCP_TESTSERVER="+TestServer)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), `"msg":"server stderr"`) || !strings.Contains(stdout.String(), `MARK-1234`) || !strings.Contains(stdout.String(), "crashing now") {
		t.Fatalf("the server's stderr is not in the log:\n%s", stdout.String())
	}
	if strings.Contains(stderr.String(), "MARK-1234") || strings.Contains(stderr.String(), "crashing") {
		t.Fatalf("the server's stderr reached the terminal:\n%s", stderr.String())
	}
}

// Close stops the child and everything it started, and reaps the child.
func TestNoZombiesAfterClose(t *testing.T) {
	var log logBuf
	a := newApp(t, Server{}, &log)
	in := a.NewInstance()
	if pid(in) != 0 {
		t.Fatal("an instance must not start before its first call")
	}
	out, err := call(in, "spawn", `{}`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var res struct{ Content string }
	_ = json.Unmarshal(out, &res)
	grandchild := byArgs("sleep", res.Content)
	child := pid(in)
	if child == 0 || grandchild == 0 || procState(grandchild) == "" {
		t.Fatalf("child %d, grandchild %d (%q)", child, grandchild, procState(grandchild))
	}
	if err := in.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}
	if s := procState(child); s != "" {
		t.Fatalf("the server process %d is left behind in state %s", child, s)
	}
	deadline := time.Now().Add(5 * time.Second)
	for s := procState(grandchild); s != "" && s != "Z"; s = procState(grandchild) {
		if time.Now().After(deadline) {
			t.Fatalf("the server's own child %d still runs (%s)", grandchild, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := call(in, "echo", `{"text":"x"}`, time.Second); err == nil {
		t.Fatal("a closed instance must refuse calls")
	}
}

func TestInstancesHaveTheirOwnProcess(t *testing.T) {
	a := newApp(t, Server{}, nil)
	one, two := a.NewInstance(), a.NewInstance()
	defer two.(io.Closer).Close()
	p1, err1 := call(one, "whoami", `{}`, 5*time.Second)
	p2, err2 := call(two, "whoami", `{}`, 5*time.Second)
	if err1 != nil || err2 != nil || string(p1) == string(p2) || pid(one) == pid(two) {
		t.Fatalf("%s %v / %s %v", p1, err1, p2, err2)
	}
	one.(io.Closer).Close()
	if _, err := call(two, "echo", `{"text":"still here"}`, 5*time.Second); err != nil {
		t.Fatalf("closing one instance stopped the other: %v", err)
	}
	// The App's own shared instance (the --vanilla baseline) is a third.
	p3, err := call(a, "whoami", `{}`, 5*time.Second)
	if err != nil || string(p3) == string(p2) {
		t.Fatalf("shared instance: %s %v", p3, err)
	}
}

func TestStreamableHTTP(t *testing.T) {
	srv := exec.Command(TestServer, "-http", "127.0.0.1:0")
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	a := newApp(t, Server{URL: strings.TrimSpace(url)}, nil)
	in := a.NewInstance()
	defer in.(io.Closer).Close()
	out, err := call(in, "echo", `{"text":"over http"}`, 5*time.Second)
	if err != nil || string(out) != `{"content":"echo: over http"}` {
		t.Fatalf("%s %v", out, err)
	}
	if _, err := call(in, "huge", `{}`, 10*time.Second); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("huge over http: %v", err)
	}
	if _, err := call(in, "hang", `{}`, 500*time.Millisecond); err == nil || !strings.Contains(err.Error(), "in time") {
		t.Fatalf("hang over http: %v", err)
	}
	if _, err := call(in, "echo", `{"text":"again"}`, 5*time.Second); err != nil {
		t.Fatal(err)
	}
}
