package mcp

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
)

// specServer is the test server with -spec (tools that require tasks or
// may use them, resources, a resource link, prompts) over stdio.
func specServer() Server { return Server{Command: TestServer, Args: []string{"-spec"}} }

// httpSpecServer starts the test server with -spec over streamable HTTP
// (answering with JSON bodies with asJSON, else with event streams).
func httpSpecServer(t *testing.T, asJSON bool) Server {
	t.Helper()
	args := []string{"-spec", "-http", "127.0.0.1:0"}
	if asJSON {
		args = append(args, "-json")
	}
	srv := exec.Command(TestServer, args...)
	stdout, _ := srv.StdoutPipe()
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Process.Kill(); srv.Wait() })
	url, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	return Server{URL: strings.TrimSpace(url)}
}

func ownNames(a *App) []string {
	var out []string
	for _, f := range a.Own() {
		out = append(out, f.Name)
	}
	return out
}

// A tool whose execution.taskSupport is "required" runs only as a task,
// which bulkhead does not support: it is no function of the app and no
// functionality the planner is offered, and the summary names it as not
// supported. A tool whose tasks are optional is called plainly. Over
// stdio, and over HTTP with event streams and with JSON bodies (the
// field is read off the wire: the SDK drops it).
func TestToolsThatRequireTasksAreNotOffered(t *testing.T) {
	for name, cfg := range map[string]func(*testing.T) Server{
		"stdio":     func(*testing.T) Server { return specServer() },
		"http sse":  func(t *testing.T) Server { return httpSpecServer(t, false) },
		"http json": func(t *testing.T) Server { return httpSpecServer(t, true) },
	} {
		t.Run(name, func(t *testing.T) {
			a := newApp(t, cfg(t), nil)
			m := a.Manifest()
			if _, ok := m.Function("research"); ok {
				t.Error("research requires tasks: it must not be a function")
			}
			if slices.Contains(ownNames(a), "tester.research") {
				t.Error("research requires tasks: the planner must not be offered it")
			}
			if slices.ContainsFunc(a.Tools(), func(ti ToolInfo) bool { return ti.Tool == "research" }) {
				t.Error("research is among the installed tools")
			}
			if _, ok := m.Function("maybe_task"); !ok || !slices.Contains(ownNames(a), "tester.maybe_task") {
				t.Errorf("maybe_task (tasks optional) must be offered: %v", ownNames(a))
			}
			s := a.Summary()
			if !slices.Contains(s.Unsupported, "tool research: requires tasks: not supported (not offered)") || s.Offered != s.Tools-1 {
				t.Errorf("the summary must name research as not supported: %+v", s)
			}
			in := a.NewInstance()
			defer in.(io.Closer).Close()
			if out, err := call(in, "maybe_task", `{"text":"x"}`, 5*time.Second); err != nil || string(out) != `{"content":"done plainly: x"}` {
				t.Fatalf("maybe_task is called plainly: %s %v", out, err)
			}
			if _, err := call(in, "research", `{"text":"x"}`, 5*time.Second); err == nil || !strings.Contains(err.Error(), `no function "research"`) {
				t.Fatalf("research must not be callable: %v", err)
			}
		})
	}
}

// A server's resources are its own spoke's to read: read_resource and
// list_resources are read-only functions of that app alone, called on
// the spoke's own instance — the same process that serves its tools.
// A resource link a tool returns is named in its text and read by its
// URI; a binary resource is described, never returned; a resource over
// MaxOutput fails that call only; a URI the server does not serve is the
// server's refusal, and the process keeps running.
func TestResourcesAreReadByTheirOwnSpoke(t *testing.T) {
	cfg := specServer()
	cfg.MaxOutput = 64 << 10
	a := newApp(t, cfg, nil)
	m := a.Manifest()
	for _, fn := range []string{"read_resource", "list_resources"} {
		f, ok := m.Function(fn)
		if !ok || f.Effect != apps.EffectRead || string(f.Result) != string(TextResult) {
			t.Fatalf("%s: %+v", fn, f)
		}
		if !slices.Contains(ownNames(a), "tester."+fn) {
			t.Errorf("tester.%s is not a functionality of its own: %v", fn, ownNames(a))
		}
	}
	in := a.NewInstance()
	defer in.(io.Closer).Close()
	out, err := call(in, "link", `{}`, 5*time.Second)
	if err != nil || !strings.Contains(string(out), `[resource link test://notes/hello \"hello note\" text/plain]`) || !strings.Contains(string(out), "embedded note text") {
		t.Fatalf("link: %s %v", out, err)
	}
	out, err = call(in, "read_resource", `{"uri":"test://notes/hello"}`, 5*time.Second)
	if err != nil || string(out) != `{"content":"hello from a resource"}` {
		t.Fatalf("reading the linked resource: %s %v", out, err)
	}
	out, err = call(in, "read_resource", `{"uri":"test://notes/pixel.png"}`, 5*time.Second)
	if err != nil || string(out) != `{"content":"[resource test://notes/pixel.png image/png, 9 bytes]"}` {
		t.Fatalf("a binary resource is described: %s %v", out, err)
	}
	before := pid(in)
	if _, err := call(in, "read_resource", `{"uri":"test://notes/big"}`, 5*time.Second); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Fatalf("a resource over MaxOutput: %v", err)
	}
	if _, err := call(in, "read_resource", `{"uri":"test://nowhere"}`, 5*time.Second); err == nil || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("an unknown resource: %v", err)
	}
	if pid(in) != before || before == 0 {
		t.Errorf("the server must keep running: pid %d, then %d", before, pid(in))
	}
	out, err = call(in, "list_resources", `{}`, 5*time.Second)
	var listed struct{ Content string }
	_ = json.Unmarshal(out, &listed)
	for _, want := range []string{"test://notes/hello\thello note\ttext/plain", "test://notes/pixel.png", "test://secret/{name}\tsecrets"} {
		if err != nil || !strings.Contains(listed.Content, want) {
			t.Errorf("list_resources lacks %q: %s %v", want, out, err)
		}
	}
	out, err = call(in, "read_resource", `{"uri":"test://secret/x"}`, 5*time.Second)
	if err != nil || !strings.Contains(string(out), "a resource only its own server serves (test://secret/x)") {
		t.Fatalf("a template's resource: %s %v", out, err)
	}
	// Through the same process as the spoke's tools: its own server's.
	who, err := call(in, "whoami", `{}`, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	res, err := call(in, "read_resource", `{"uri":"test://whoami"}`, 5*time.Second)
	if err != nil || string(res) != string(who) {
		t.Fatalf("read_resource must reach the spoke's own process: %s, its tools' %s (%v)", res, who, err)
	}
	other := a.NewInstance()
	defer other.(io.Closer).Close()
	if res2, err := call(other, "read_resource", `{"uri":"test://whoami"}`, 5*time.Second); err != nil || string(res2) == string(res) {
		t.Fatalf("another spoke's instance has a process of its own: %s %v", res2, err)
	}

	// A server without resources has no such functions.
	plain := newApp(t, Server{}, nil)
	for _, fn := range []string{"read_resource", "list_resources"} {
		if _, ok := plain.Manifest().Function(fn); ok {
			t.Errorf("a server without resources has %s", fn)
		}
	}
}

// A server tool that has a resource function's name keeps it; the
// resource function takes another, and config of that name is the tool's.
func TestResourceFunctionsNeverTakeAToolsName(t *testing.T) {
	l := listing{Server: "x", Resources: true, Tools: []listedTool{{Name: "read_resource", InputSchema: json.RawMessage(`{"type":"object"}`)}}}
	a, err := prepare("tester", Server{Command: TestServer, Tools: map[string]ToolConfig{"read_resource": {Functionality: "none"}}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.build(l)
	if err != nil {
		t.Fatal(err)
	}
	if b.tools["read_resource"].kind != callTool || b.tools["read_resource_2"].kind != readResource || b.tools["list_resources"].kind != listResources {
		t.Fatalf("%+v", b.tools)
	}
	if _, ok := b.manifest.Provides["tester.read_resource"]; ok {
		t.Error("the tool configured with functionality none provides one")
	}
	if b.manifest.Provides["tester.read_resource_2"] != "read_resource_2" {
		t.Errorf("provides %v", b.manifest.Provides)
	}
}

// Prompts are listed (names and count) and summarised, never offered as
// functions or functionalities. What a server asks of bulkhead
// (sampling here) it does not get, and the call's error says so.
func TestPromptsAreListedAndAsksNamed(t *testing.T) {
	a := newApp(t, specServer(), nil)
	s := a.Summary()
	if !slices.Equal(s.Prompts, []string{"greet", "summarize"}) || s.PromptCount != 2 || !s.Resources {
		t.Fatalf("summary: %+v", s)
	}
	for _, n := range []string{"greet", "summarize"} {
		if _, ok := a.Manifest().Function(n); ok || slices.Contains(ownNames(a), "tester."+n) {
			t.Errorf("prompt %s must not be offered", n)
		}
	}
	if s := newApp(t, Server{}, nil).Summary(); len(s.Prompts) != 0 || s.PromptCount != 0 || s.Resources || len(s.Unsupported) != 0 {
		t.Errorf("a server without prompts or resources: %+v", s)
	}
	in := a.NewInstance()
	defer in.(io.Closer).Close()
	if _, err := call(in, "ask_sampling", `{}`, 5*time.Second); err == nil || !strings.Contains(err.Error(), "the server asked bulkhead for sampling") {
		t.Fatalf("a tool that asks for sampling: %v", err)
	}
	if asked := in.(*instance).conn.askedNames(); !slices.Equal(asked, []string{"sampling"}) {
		t.Errorf("asked %v", asked)
	}
}

// The cache keeps what a listing says beyond tools: an app opened from
// the cache leaves out the tool that requires tasks, offers the
// resources, and its summary (and the cache's, for `bulkhead mcp list`)
// names prompts and what is not supported. A file of the old format,
// which does not say which tools require tasks, is not used.
func TestTheCacheKeepsTasksResourcesAndPrompts(t *testing.T) {
	dir := t.TempDir()
	cache := NewCache(filepath.Join(dir, "cache"))
	cfg := specServer()
	live, err := Open("tester", cfg, CatalogForTests(t), cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	live.Close()
	a, err := OpenCached("tester", cfg, CatalogForTests(t), cache, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := a.Manifest().Function("research"); ok {
		t.Error("from the cache, research is a function")
	}
	if _, ok := a.Manifest().Function("read_resource"); !ok {
		t.Error("from the cache, read_resource is not offered")
	}
	cached, ok := cache.Summary("tester", cfg)
	if !ok || !slices.Equal(cached.Prompts, []string{"greet", "summarize"}) || !slices.Contains(cached.Unsupported, "tool research: requires tasks: not supported (not offered)") {
		t.Fatalf("the cache's summary: %+v %v", cached, ok)
	}
	if _, ok := cache.Summary("tester", Server{Command: TestServer}); ok {
		t.Error("a summary for another configuration")
	}
	if _, err := cache.load("tester", cacheKey(cfg)); err != nil {
		t.Fatal(err)
	}
	// An entry written in format 1 (before taskSupport was kept) is a miss.
	l, _ := cache.load("tester", cacheKey(cfg))
	old := cacheFile{Format: 1, Key: cacheKey(cfg), Listing: l}
	b, _ := json.Marshal(old)
	p, _ := cache.path("tester")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenCached("tester", cfg, CatalogForTests(t), cache, nil); err == nil {
		t.Error("a cache file of format 1 must not be used")
	}
}
