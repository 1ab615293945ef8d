package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

func newClient(t *testing.T, host, model string) *llm.Client {
	t.Helper()
	c, err := llm.New(llm.Config{Host: host, Model: model, NumCtx: 4096, KeepAlive: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestChatStreamsAndRecordsUsage(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, ollamatest.Reply{
		Thinking: []string{"hmm "}, Chunks: []string{"Hello", ", ", "world"}, PromptTokens: 17, EvalTokens: 3,
	}), "m")
	c := newClient(t, srv.Host(), "m")
	var got []llm.Chunk
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "hi"}}}, func(ch llm.Chunk) { got = append(got, ch) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Message.Content != "Hello, world" || resp.Message.Thinking != "hmm " {
		t.Fatalf("content %q thinking %q", resp.Message.Content, resp.Message.Thinking)
	}
	if len(got) != 4 {
		t.Fatalf("want 4 chunks streamed, got %d", len(got))
	}
	if resp.Usage.Calls != 1 || resp.Usage.PromptTokens != 17 || resp.Usage.EvalTokens != 3 || resp.Usage.Duration <= 0 {
		t.Fatalf("usage %+v", resp.Usage)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || reqs[0].Options["num_ctx"] != float64(4096) || reqs[0].KeepAlive == nil {
		t.Fatalf("request options not passed: %+v", reqs)
	}
}

func TestChatPassesFormatToolsAndThink(t *testing.T) {
	t.Parallel()
	call := api.ToolCall{Function: api.ToolCallFunction{Name: "now", Arguments: api.NewToolCallFunctionArguments()}}
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, ollamatest.Reply{Chunks: []string{`{"a":1}`}, ToolCalls: []api.ToolCall{call}}), "m")
	c := newClient(t, srv.Host(), "m")
	schema := json.RawMessage(`{"type":"object","properties":{"a":{"type":"integer"}}}`)
	think := true
	tools := api.Tools{{Type: "function", Function: api.ToolFunction{Name: "now"}}}
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "x"}}, Format: schema, Tools: tools, Think: &think}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Message.ToolCalls) != 1 || resp.Message.ToolCalls[0].Function.Name != "now" {
		t.Fatalf("tool calls %+v", resp.Message.ToolCalls)
	}
	r := srv.Requests()[0]
	if string(r.Format) != string(schema) || len(r.Tools) != 1 || r.Think == nil || r.Think.Value != true {
		t.Fatalf("request lost format/tools/think: format=%s tools=%d think=%v", r.Format, len(r.Tools), r.Think)
	}
}

func TestChatModelMissing(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t), "other")
	c := newClient(t, srv.Host(), "absent:1b")
	_, err := c.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "x"}}}, nil)
	model, ok := llm.IsModelMissing(err)
	if !ok || model != "absent:1b" {
		t.Fatalf("want ModelMissingError, got %v", err)
	}
	if !strings.Contains(err.Error(), "ollama pull absent:1b") {
		t.Fatalf("message does not say how to fix it: %v", err)
	}
	has, err := c.HasModel(context.Background(), "absent:1b")
	if err != nil || has {
		t.Fatalf("HasModel = %v, %v", has, err)
	}
	if err := c.Pull(context.Background(), "absent:1b", nil); err != nil {
		t.Fatal(err)
	}
	if has, _ := c.HasModel(context.Background(), "absent:1b"); !has {
		t.Fatal("model still missing after pull")
	}
}

func TestChatStreamCutKeepsPartial(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, ollamatest.Reply{Chunks: []string{"one ", "two ", "three"}, CutAfter: 2}), "m")
	c := newClient(t, srv.Host(), "m")
	resp, err := c.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "x"}}}, nil)
	var cut *llm.StreamCutError
	if !errors.As(err, &cut) {
		t.Fatalf("want StreamCutError, got %v", err)
	}
	if cut.Partial.Message.Content != "one two " || resp.Message.Content != "one two " {
		t.Fatalf("partial lost: %q / %q", cut.Partial.Message.Content, resp.Message.Content)
	}
}

func TestChatMalformedLineIsACut(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, ollamatest.Reply{Chunks: []string{"kept ", "lost"}, GarbageAfter: 1}), "m")
	c := newClient(t, srv.Host(), "m")
	_, err := c.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "x"}}}, nil)
	var cut *llm.StreamCutError
	if !errors.As(err, &cut) || cut.Partial.Message.Content != "kept " {
		t.Fatalf("want a cut keeping %q, got %v", "kept ", err)
	}
}

func TestChatServerError(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, ollamatest.Reply{Status: 500, Error: "runner crashed"}), "m")
	c := newClient(t, srv.Host(), "m")
	_, err := c.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "x"}}}, nil)
	if err == nil || !strings.Contains(err.Error(), "runner crashed") {
		t.Fatalf("want the server's error, got %v", err)
	}
}

func TestChatCancelReturnsPartial(t *testing.T) {
	t.Parallel()
	srv := ollamatest.NewScripted(t, ollamatest.Queue(t, ollamatest.Reply{Chunks: []string{"partial"}, Hang: true}), "m")
	c := newClient(t, srv.Host(), "m")
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.Chat(ctx, llm.Request{Messages: []api.Message{{Role: "user", Content: "x"}}}, func(llm.Chunk) { cancel() })
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if resp.Message.Content != "partial" {
		t.Fatalf("partial lost: %q", resp.Message.Content)
	}
}

func TestUnreachable(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c := newClient(t, addr, "m")
	_, err = c.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "x"}}}, nil)
	var ue *llm.UnreachableError
	if !errors.As(err, &ue) {
		t.Fatalf("want UnreachableError, got %T %v", err, err)
	}
	if _, err := c.Version(context.Background()); !errors.As(err, &ue) {
		t.Fatalf("Version: want UnreachableError, got %v", err)
	}
}

func TestParseHost(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"":                      "http://127.0.0.1:11434",
		"localhost":             "http://localhost:11434",
		"127.0.0.1:9999":        "http://127.0.0.1:9999",
		"http://box:1/":         "http://box:1",
		"https://ollama.lan":    "https://ollama.lan:443",
		"http://[::1]:11434":    "http://[::1]:11434",
		" http://0.0.0.0:8080 ": "http://0.0.0.0:8080",
	} {
		u, err := llm.ParseHost(in)
		if err != nil || u.String() != want {
			t.Errorf("ParseHost(%q) = %v, %v; want %s", in, u, err, want)
		}
	}
	for _, bad := range []string{"ftp://x", "http://", "::::"} {
		if _, err := llm.ParseHost(bad); err == nil {
			t.Errorf("ParseHost(%q) accepted", bad)
		}
	}
}
