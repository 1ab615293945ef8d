package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/tui/style"
)

// A draft shows as the answer while the hub plans, with a line that says
// it is a draft; a withdrawn one goes; a kept one goes on as the answer.
func TestADraftShowsAndGoes(t *testing.T) {
	r := &Live{Status: memory.StatusPending}
	working := map[string]bool{}
	r.Apply([]hub.Event{{Kind: hub.EventStarted}, {Kind: hub.EventDraft, App: hub.VanillaApp, Text: "Once upon "}}, working)
	if v := r.View(); v.Answer != "Once upon " || !v.Drafting {
		t.Fatalf("the draft shows, marked as one: %+v", v)
	}
	got := renderTurn(r.View(), 100, Draw{Theme: style.New(true), Width: 100, Spinner: "·", Now: time.Now()}, false, "Once upon")
	if !strings.Contains(got, "drafting a plain answer while the hub plans") {
		t.Fatalf("the line under a draft says what it is:\n%s", got)
	}
	r.Apply([]hub.Event{{Kind: hub.EventDraftWithdrawn}, {Kind: hub.EventPlan, Plan: &hub.Plan{Steps: []hub.Step{{ID: "s1", Functionality: "writing.story", App: "creative_muse"}}}}}, working)
	if v := r.View(); v.Answer != "" || v.Drafting || v.Tokens != 0 {
		t.Fatalf("a withdrawn draft goes: %+v", v)
	}

	r = &Live{Status: memory.StatusPending}
	r.Apply([]hub.Event{{Kind: hub.EventDraft, Text: "Once upon "}, {Kind: hub.EventPlan, Plan: &hub.Plan{Steps: []hub.Step{{ID: "s1", Functionality: "chat", App: hub.VanillaApp}}}}, {Kind: hub.EventToken, Text: "a time"}}, working)
	if v := r.View(); v.Answer != "Once upon a time" || v.Drafting {
		t.Fatalf("a kept draft is the answer's beginning: %+v", v)
	}
}

// The status line says what the turn waits for: an MCP server starting
// (named), a tool running (named) with the progress its server reports
// and the server's own words, cleaned and attributed — "waiting for the
// model" only when it waits for the model.
func TestTheStatusLineSaysWhatTheTurnWaitsFor(t *testing.T) {
	r := &Live{Status: memory.StatusPending}
	working := map[string]bool{}
	line := func() string {
		t.Helper()
		return renderTurn(r.View(), 200, Draw{Theme: style.New(true), Width: 200, Spinner: "·", Now: time.Now()}, false, "")
	}
	for _, step := range []struct {
		evs  []hub.Event
		want string
	}{
		{[]hub.Event{{Kind: hub.EventProgress, App: "fs", Progress: &apps.Progress{App: "fs", Starting: true}}}, "starting the MCP server fs (listing its tools)…"},
		{[]hub.Event{{Kind: hub.EventProgress, App: "fs", Progress: &apps.Progress{App: "fs"}}, {Kind: hub.EventStarted}}, "waiting for the model…"},
		{[]hub.Event{{Kind: hub.EventSpoke, App: "fs", Working: true}, {Kind: hub.EventAppCall, App: "fs", Function: "copy"}}, "running fs.copy…"},
		{[]hub.Event{{Kind: hub.EventProgress, App: "fs", Function: "copy", Progress: &apps.Progress{App: "fs", Function: "copy", Starting: true}}}, "starting the MCP server fs for fs.copy…"},
		{[]hub.Event{{Kind: hub.EventProgress, App: "fs", Function: "copy", Progress: &apps.Progress{App: "fs", Function: "copy"}}}, "running fs.copy…"},
		{[]hub.Event{{Kind: hub.EventProgress, App: "fs", Function: "copy", Progress: &apps.Progress{App: "fs", Function: "copy", Done: 2, Total: 5, Message: "copying\nb.txt"}}}, "running fs.copy · 2/5 · fs: copying ⏎ b.txt…"},
		{[]hub.Event{{Kind: hub.EventProgress, App: "fs", Function: "copy", Progress: &apps.Progress{App: "fs", Function: "copy", Done: 7.5}}}, "running fs.copy · 7.5…"},
		{[]hub.Event{{Kind: hub.EventAppResult, App: "fs", Function: "copy"}}, "waiting for the model…"},
	} {
		r.Apply(step.evs, working)
		if got := line(); !strings.Contains(got, step.want) {
			t.Errorf("after %v: want %q in\n%s", step.evs[len(step.evs)-1].Kind, step.want, got)
		}
	}
}
