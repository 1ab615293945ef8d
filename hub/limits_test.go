package hub_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// A turn's app calls are bounded (limits.tool_calls_per_turn): past the
// budget every call is refused with a clear error, the refusal is noted
// in the action log, and the turn still ends.
func TestAppCallsPerTurnAreBounded(t *testing.T) {
	t.Parallel()
	notes := fakeNotes("notes", "x")
	script := func(req *api.ChatRequest) ollamatest.Reply {
		if len(req.Format) > 0 {
			return ollamatest.JSON(map[string]any{"steps": []map[string]any{step("s1", "notes.search", "find")}})
		}
		// Three searches per answer, for as long as it is asked.
		var calls []api.ToolCall
		for range 3 {
			a := api.NewToolCallFunctionArguments()
			a.Set("query", "x")
			calls = append(calls, api.ToolCall{Function: api.ToolCallFunction{Name: "search", Arguments: a}})
		}
		return ollamatest.Reply{ToolCalls: calls}
	}
	rig := hubtest.New(t, hubtest.Config{Script: script, Apps: []apps.App{notes}, Catalog: attackCatalog(t),
		Prompter: permissionstest.NewPrompter(permissions.AnswerOnce), Rules: allowExec,
		Modify: func(o *hub.Options) { o.CallsPerTurn = 5 }})
	chat, _ := rig.Op.NewChat(false)
	_, evs := askWithin(t, rig.Op, chat.ID, "find my notes", 20*time.Second)
	if n := len(notes.ran("search")); n != 5 {
		t.Fatalf("the app ran %d calls, want the budget of 5", n)
	}
	refused := false
	for _, e := range evs {
		if e.Kind == hub.EventAppResult && e.Err != nil && strings.Contains(e.Err.Error(), "limits.tool_calls_per_turn") {
			refused = true
		}
	}
	if !refused {
		t.Fatal("a call past the budget must be refused with an error naming the limit")
	}
	acts, _ := rig.Broker.Actions()
	noted := false
	for _, a := range acts {
		noted = noted || a.Note != nil && a.Note.Kind == "limit"
	}
	if !noted {
		t.Fatal("reaching the budget must be in the action log")
	}
}

// A turn refused before it starts (a disk below its floor) writes nothing
// and says why.
func TestBeforeTurnRefusesCleanly(t *testing.T) {
	t.Parallel()
	full := errors.New("the disk holding bulkhead's data is nearly full")
	rig := hubtest.New(t, hubtest.Config{Script: ollamatest.Gullible(), Modify: func(o *hub.Options) { o.BeforeTurn = func() error { return full } }})
	chat, _ := rig.Op.NewChat(false)
	if _, err := rig.Op.Ask(context.Background(), chat.ID, "hello", nil); !errors.Is(err, full) {
		t.Fatalf("want the refusal, got %v", err)
	}
	if turns, _ := rig.Op.Turns(chat.ID); len(turns) != 0 {
		t.Fatalf("a refused turn was logged: %+v", turns)
	}
	if n := len(rig.Srv.Requests()); n != 0 {
		t.Fatalf("a refused turn called the model %d times", n)
	}
}
