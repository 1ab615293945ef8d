package llm_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// Every way a model server can make a call grow or hang ends in a clear,
// typed error within its bound, keeping what arrived (a cut the turn can
// retry).
func TestChatBounds(t *testing.T) {
	t.Parallel()
	manyCalls := make([]api.ToolCall, 500)
	for i := range manyCalls {
		manyCalls[i] = api.ToolCall{Function: api.ToolCallFunction{Name: "now", Arguments: api.NewToolCallFunctionArguments()}}
	}
	bigArgs := api.NewToolCallFunctionArguments()
	bigArgs.Set("text", strings.Repeat("x", 7<<20))
	lim := llm.Limits{AnswerBytes: 64 << 10, ToolCalls: 16, ToolArgBytes: 64 << 10, Stall: 300 * time.Millisecond, Total: 20 * time.Second}
	for _, c := range []struct {
		name   string
		reply  ollamatest.Reply
		check  func(error) bool
		within time.Duration
	}{
		{"endless stream", ollamatest.Reply{Endless: true, Chunks: []string{strings.Repeat("y", 512)}},
			func(err error) bool {
				var l *llm.LimitError
				return errors.As(err, &l) && l.Key == "limits.answer_bytes"
			}, 10 * time.Second},
		{"stall after a few chunks", ollamatest.Reply{Chunks: []string{"a", "b"}, Hang: true},
			func(err error) bool { var s *llm.StalledError; return errors.As(err, &s) }, 5 * time.Second},
		{"headers, then nothing", ollamatest.Reply{Hang: true},
			func(err error) bool { var s *llm.StalledError; return errors.As(err, &s) }, 5 * time.Second},
		{"500 tool calls", ollamatest.Reply{ToolCalls: manyCalls},
			func(err error) bool {
				var l *llm.LimitError
				return errors.As(err, &l) && l.Key == "limits.tool_calls_per_answer"
			}, 10 * time.Second},
		{"7 MB of arguments", ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: "now", Arguments: bigArgs}}}},
			func(err error) bool {
				var l *llm.LimitError
				return errors.As(err, &l) && l.Key == "limits.tool_arg_bytes"
			}, 2 * time.Minute},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := ollamatest.NewScripted(t, func(*api.ChatRequest) ollamatest.Reply { return c.reply }, "m")
			l := lim
			if !c.reply.Hang {
				// Encoding 7 MB is slow under -race on a busy machine: not
				// a stall, and not the call's total either — the bound the
				// case is about must be the one that cuts it.
				l.Stall, l.Total = 30*time.Second, 2*time.Minute
			}
			cl, err := llm.New(llm.Config{Host: srv.Host(), Model: "m", Limits: l}, nil)
			if err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			resp, err := cl.Chat(context.Background(), llm.Request{Messages: []api.Message{{Role: "user", Content: "hi"}}}, nil)
			took := time.Since(start)
			var cut *llm.StreamCutError
			if !errors.As(err, &cut) || !c.check(err) {
				t.Fatalf("want a cut with the bound's error, got %v", err)
			}
			if took > c.within {
				t.Fatalf("took %s, bound %s", took, c.within)
			}
			if len(resp.Message.Content) > lim.AnswerBytes+(1<<10) {
				t.Fatalf("kept %d bytes past the bound", len(resp.Message.Content))
			}
			if !strings.Contains(err.Error(), "limit") && !strings.Contains(err.Error(), "sent nothing") {
				t.Fatalf("the message must say what happened: %v", err)
			}
		})
	}
}
