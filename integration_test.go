package main

// Integration tests against a real `ollama serve` with the tiny
// random-weight model the tests generate (internal/ollamatest). Its words
// are noise; these tests prove the wire path: structured output, streaming,
// a missing model, and the server dying mid-stream. They skip without an
// ollama binary unless BULKHEAD_INTEGRATION=1, which CI sets.

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

func TestRealOllama(t *testing.T) {
	real := ollamatest.StartReal(t)

	t.Run("structured plan call", func(t *testing.T) {
		c, err := llm.New(llm.Config{Host: real.Host, Model: real.Model}, nil)
		if err != nil {
			t.Fatal(err)
		}
		fns := []hub.Functionality{{Name: "chat", Description: "talk"}, {Name: "notes.search", Description: "find notes"}}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		resp, err := c.Chat(ctx, llm.Request{
			Messages: []api.Message{{Role: "user", Content: "plan: hello"}},
			Format:   hub.PlanSchema(fns),
			// Sampling with a repeat penalty: at temperature 0 the random
			// weights repeat one token until Ollama aborts the stream.
			Options: map[string]any{"num_predict": 1500, "temperature": 1.0, "seed": 7, "repeat_penalty": 1.8, "repeat_last_n": 64},
		}, nil)
		if err != nil {
			t.Fatal(err)
		}
		var draft struct {
			Kind  string `json:"kind"`
			Steps []struct {
				Functionality string `json:"functionality"`
			} `json:"steps"`
		}
		if err := json.Unmarshal([]byte(resp.Message.Content), &draft); err != nil {
			t.Fatalf("format output is not JSON: %v\n%s", err, resp.Message.Content)
		}
		if len(draft.Steps) == 0 {
			t.Fatalf("schema demands ≥1 step: %s", resp.Message.Content)
		}
		// The grammar writes the kind first, and a step's one required
		// property, its functionality, first in the step.
		if draft.Kind != "chat" && draft.Kind != "apps" || !regexp.MustCompile(`^\s*\{\s*"kind"`).MatchString(resp.Message.Content) {
			t.Fatalf("the kind comes first: %s", resp.Message.Content)
		}
		for _, s := range draft.Steps {
			if s.Functionality != "chat" && s.Functionality != "notes.search" {
				t.Fatalf("step breaks the schema: %s", resp.Message.Content)
			}
		}
		if !regexp.MustCompile(`"steps"\s*:\s*\[\s*\{\s*"functionality"`).MatchString(resp.Message.Content) {
			t.Fatalf("a step begins with its functionality: %s", resp.Message.Content)
		}
		if resp.Usage.PromptTokens == 0 || resp.Usage.EvalTokens == 0 {
			t.Fatalf("usage not recorded: %+v", resp.Usage)
		}
		// And the planner, end to end, always yields a runnable plan.
		plan, usage, err := hub.NewPlanner(c, nil).Plan(ctx, hub.PlanInput{Query: "hello", Functionalities: fns[:1]}, func(fn, app string) (string, bool) { return "vanilla", fn == "chat" && app == "" })
		if err != nil || len(plan.Steps) == 0 || plan.Steps[0].App != "vanilla" || usage.Calls == 0 {
			t.Fatalf("planner: %+v %+v %v", plan, usage, err)
		}
	})

	t.Run("ask streams an answer with usage", func(t *testing.T) {
		out, errOut, code := run(t, "ask", "--json", "--stream", "--ollama-host", real.Host, "--model", real.Model, "--data-dir", t.TempDir(), "hello")
		if code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, errOut, real.LogTail(4096))
		}
		evs := events(t, out)
		tokens, plans := 0, 0
		var streamed strings.Builder
		var answer map[string]any
		for _, ev := range evs {
			switch ev["type"] {
			case "plan":
				plans++
			case "draft", "token":
				// The plain answer drafted while the plan was made (kept:
				// the plan is plain chat), then its tokens.
				if plans == 0 && ev["type"] == "token" {
					t.Fatalf("a token before the plan:\n%s", out)
				}
				tokens++
				streamed.WriteString(ev["text"].(string))
			case "draft_withdrawn":
				streamed.Reset()
			case "answer":
				answer = ev
			}
		}
		if plans != 1 || answer == nil || tokens == 0 {
			t.Fatalf("want plan, tokens, answer:\n%s", out)
		}
		if answer["text"] != streamed.String() {
			t.Fatalf("the streamed pieces are the answer: %q vs %q", streamed.String(), answer["text"])
		}
		u := answer["usage"].(map[string]any)
		if u["calls"].(float64) < 2 || u["prompt_tokens"].(float64) <= 0 || u["eval_tokens"].(float64) <= 0 {
			t.Fatalf("usage %v", u)
		}
	})

	t.Run("bench runs end to end", func(t *testing.T) {
		// Two tasks, with the real server and the tiny model (its words are
		// noise: its plans are cut, retried and fall back, which the table
		// reports); isolated and vanilla, one row each.
		out, errOut, code := run(t, "bench", "--ollama-host", real.Host, "--model", real.Model, "--data-dir", t.TempDir(),
			"--task", "chat,calc", "--no-injections", "--json")
		if code != 0 {
			t.Fatalf("exit %d: %s\n%s", code, errOut, real.LogTail(4096))
		}
		var rep struct {
			Models    []struct{ Name, Digest string }
			Summaries []struct {
				Mode     string
				Tasks    int
				Plans    int     `json:"plans"`
				Fallback int     `json:"plans_fallback"`
				Calls    float64 `json:"calls_per_run"`
				Prompt   float64 `json:"prompt_tokens_per_run"`
				Errors   int     `json:"errors"`
			}
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if len(rep.Models) != 1 || rep.Models[0].Digest == "" || len(rep.Summaries) != 2 {
			t.Fatalf("report: %+v", rep)
		}
		for _, s := range rep.Summaries {
			// This tiny model's template takes no tools: the baseline's
			// one context, which offers every app's, is refused by the
			// server — each run an error the table counts.
			if s.Tasks != 2 || s.Calls < 1 || (s.Prompt <= 0 && s.Errors != s.Tasks) {
				t.Fatalf("%s: Ollama's counters must be in the figures: %+v", s.Mode, s)
			}
		}
		if iso := rep.Summaries[0]; iso.Mode != "isolated" || iso.Plans != 2 {
			t.Fatalf("the isolated row counts its plans: %+v", iso)
		}
	})

	t.Run("missing model", func(t *testing.T) {
		_, errOut, code := run(t, "ask", "--ollama-host", real.Host, "--model", "no-such-model:1b", "--data-dir", t.TempDir(), "hello")
		if code != 2 || !strings.Contains(errOut, "ollama pull no-such-model:1b") {
			t.Fatalf("exit %d: %s", code, errOut)
		}
	})

	// Last: it kills the server.
	t.Run("server killed mid-stream keeps the partial answer", func(t *testing.T) {
		if err := real.CreateVariant("tiny-long", map[string]any{"num_predict": 100000, "num_ctx": 2048}); err != nil {
			t.Fatal(err)
		}
		store, err := memory.Open(t.TempDir(), memory.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		hubModel, _ := llm.New(llm.Config{Host: real.Host, Model: real.Model}, nil)
		op, err := hub.New(hub.Options{Store: store, HubModel: hubModel, SpokeModel: func(string) (spokes.Model, error) {
			return llm.New(llm.Config{Host: real.Host, Model: "tiny-long"}, nil)
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		chat, _ := op.NewChat(false)
		tokens := 0
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		turn, err := op.Ask(ctx, chat.ID, "tell me a long story", func(e hub.Event) {
			if e.Kind == hub.EventToken {
				if tokens++; tokens == 3 {
					real.Kill()
				}
			}
		})
		var cut *llm.StreamCutError
		if !errors.As(err, &cut) {
			t.Fatalf("want a cut stream, got %v (after %d tokens)", err, tokens)
		}
		if turn.Status != memory.StatusCut || turn.Answer == "" {
			t.Fatalf("turn %+v", turn)
		}
		turns, _ := op.Turns(chat.ID)
		if len(turns) != 1 || turns[0].Answer != turn.Answer || !turns[0].Retryable() {
			t.Fatalf("the partial answer must be logged, retryable: %+v", turns)
		}
	})
}
