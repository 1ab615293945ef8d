package chat

import (
	"strings"
	"testing"
	"time"

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
