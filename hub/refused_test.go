package hub_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/files"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// denyFunctions denies the requests of the functions (or, for a "Run
// …?" request, the functionalities) it names and allows every other, as
// a rule or a policy would.
type denyFunctions []string

func (d denyFunctions) Prompt(_ context.Context, r permissions.Request) (permissions.Decision, error) {
	for _, fn := range d {
		if r.Function == fn {
			return permissions.Decision{RequestID: r.ID, Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "denied by the test's policy"}, nil
		}
	}
	return permissions.Decision{RequestID: r.ID, Answer: permissions.AnswerOnce, Source: permissions.SourcePolicy}, nil
}

// stepCalls is a model that plans plan and, in a spoke, makes the calls
// its step's words ask for (calls by a word of the step's query), one a round whatever each answered, then says it is
// done; the synthesis just answers.
func stepCalls(plan ollamatest.Reply, calls map[string][]string) ollamatest.Script {
	return func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return plan
		}
		if len(req.Tools) == 0 {
			return ollamatest.Text("Here is what happened.")
		}
		// The step's words are its last user message (a spoke that served
		// an earlier step of the turn holds that one's exchange before it).
		last := lastUser(req)
		var todo []string
		for word, cs := range calls {
			if strings.Contains(req.Messages[last].Content, word) {
				todo = cs
			}
		}
		done := 0
		for _, m := range req.Messages[last:] {
			if m.Role == "tool" {
				done++
			}
		}
		if done >= len(todo) {
			return ollamatest.Text("Done.")
		}
		a := api.NewToolCallFunctionArguments()
		a.Set("path", "notes.txt")
		if todo[done] == "write" {
			a.Set("content", "lunch at noon\n")
		}
		return ollamatest.Reply{ToolCalls: []api.ToolCall{{Function: api.ToolCallFunction{Name: todo[done], Arguments: a}}}}
	}
}

// lastUser is the index of a request's last user message.
func lastUser(req *api.ChatRequest) int {
	for i := len(req.Messages) - 1; i > 0; i-- {
		if req.Messages[i].Role == "user" {
			return i
		}
	}
	return 0
}

// The answer names every step that did not do its work because a request
// it needed was denied — the one step of a plan, or one of several, its
// call denied or its app — and no step whose denial it did without: an
// extra call denied, the step's own call allowed after it.
func TestTheAnswerNamesTheStepsARefusalStopped(t *testing.T) {
	t.Parallel()
	write := bind(step("s1", "files.write", "write the notes"), "path", "notes.txt")
	one := ollamatest.JSON(map[string]any{"steps": []map[string]any{write}})
	listThenWrite := ollamatest.JSON(map[string]any{"steps": []map[string]any{
		step("s1", "files.list", "list the files"), bind(step("s2", "files.write", "write the notes", "s1"), "path", "notes.txt"),
	}})
	listAndRead := ollamatest.JSON(map[string]any{"steps": []map[string]any{
		step("s1", "files.list", "list the files"), bind(step("s2", "files.read", "read the notes", "s1"), "path", "notes.txt"),
	}})
	const why = "denied by the test's policy"
	for _, c := range []struct {
		name    string
		plan    ollamatest.Reply
		calls   map[string][]string
		deny    denyFunctions
		refused string // "" none
	}{
		{"the one step's call denied", one, map[string][]string{"write": {"write"}}, denyFunctions{"write"},
			"files.write did not run — the user did not allow write: " + why},
		{"a step of two denied its call", listThenWrite, map[string][]string{"list": {"list"}, "write": {"write"}}, denyFunctions{"write"},
			"files.write did not run — the user did not allow write: " + why},
		{"a step of two denied its app", listAndRead, map[string][]string{"list": {"list"}, "read": {"read"}}, denyFunctions{"files.list"},
			"files.list did not run — you did not allow files to run: " + why},
		{"an extra call denied, the step's own allowed", one, map[string][]string{"write": {"delete", "write"}}, denyFunctions{"delete"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ws := t.TempDir()
			if err := os.WriteFile(filepath.Join(ws, "notes.txt"), []byte("lunch\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			rig := hubtest.New(t, hubtest.Config{Script: stepCalls(c.plan, c.calls), Apps: []apps.App{files.New(ws, files.Options{})}, Prompter: c.deny})
			chat, _ := rig.Op.NewChat(false)
			var evs []hub.Event
			turn, err := rig.Op.Ask(context.Background(), chat.ID, "write the notes, or list and read them", collect(&evs))
			if err != nil || turn.Status != memory.StatusOK {
				t.Fatalf("the turn should answer: %v (%s)", err, kinds(evs))
			}
			answer := evs[len(evs)-1]
			switch {
			case answer.Kind != hub.EventAnswer:
				t.Fatalf("the last event: %s", answer.Kind)
			case c.refused == "" && len(answer.Refused) > 0:
				t.Fatalf("a denial the step did without is named: %q", answer.Refused)
			case c.refused != "" && (len(answer.Refused) != 1 || answer.Refused[0] != c.refused):
				t.Fatalf("refused %q, want [%q]", answer.Refused, c.refused)
			}
		})
	}
}
