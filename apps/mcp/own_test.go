package mcp_test

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// An MCP server added with no tool mapped by hand is usable at once:
// each tool is a functionality of its own, <app>.<function>, with the
// effect its annotations give (an unannotated tool: the most dangerous),
// a description in the hub's words (names only, never the server's
// prose), and a request the planner routes to it.
func TestToolsAreFunctionalitiesWithoutMapping(t *testing.T) {
	t.Parallel()
	server := mcp.Server{Command: mcp.TestServer, Tools: map[string]mcp.ToolConfig{
		"crash": {Functionality: "none"},                           // left out of the catalog
		"leak":  {Functionality: "test.news"},                      // mapped to an entry of the catalog
		"echo":  {Effect: apps.EffectWrite, Key: []string{"text"}}, // tightened; still its own
	}}
	plans := map[string]string{"echo": "gamma.echo"}
	calls := map[string][]step{"echo": {{"echo", map[string]any{"text": "hello"}}}}
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	r := newRig(t, gullibleFor(plans, calls), p, allowExec, mcp.CatalogForTests(t), map[string]mcp.Server{"gamma": server})

	got := map[string]apps.Functionality{}
	for _, f := range r.reg.Functionalities() {
		got[f.Name] = f
	}
	for name, effect := range map[string]apps.Effect{
		"gamma.echo":        apps.EffectWrite,        // read-only, tightened to write by the config
		"gamma.write_note":  apps.EffectIrreversible, // destructiveHint
		"gamma.append_log":  apps.EffectWrite,        // destructiveHint false
		"gamma.fetch_url":   apps.EffectIrreversible, // no annotations at all
		"gamma.count_words": apps.EffectRead,         // readOnlyHint (the tool "Count-Words")
	} {
		f, ok := got[name]
		if !ok {
			t.Errorf("%s is not in the catalog", name)
			continue
		}
		if f.Effect != effect {
			t.Errorf("%s: effect %s, want %s", name, f.Effect, effect)
		}
		if !strings.Contains(f.Description, "MCP app gamma") || strings.Contains(f.Description, "Echo the text back") || strings.Contains(f.Description, "Save a note") {
			t.Errorf("%s: description %q: the hub's words, from names alone", name, f.Description)
		}
	}
	if f := got["gamma.echo"]; !strings.Contains(f.Description, "Arguments: text.") || len(f.KeyArgs()) != 1 || f.KeyArgs()[0] != "text" {
		t.Errorf("gamma.echo: %q, key %v", f.Description, f.KeyArgs())
	}
	if _, ok := got["gamma.crash"]; ok {
		t.Error("a tool configured with functionality none is in the catalog")
	}
	if _, ok := got["gamma.leak"]; ok {
		t.Error("a tool mapped to a catalog entry has one of its own too")
	}
	if ps := r.reg.Providers("test.news"); len(ps) != 1 || ps[0] != "gamma" {
		t.Errorf("test.news providers: %v", ps)
	}

	// The planner is offered it, and a request routes to it.
	chat, _ := r.op.NewChat(false)
	turn, evs := r.ask(t, chat.ID, "please echo hello")
	if res, ok := ran(evs, "gamma", "echo"); !ok || !strings.Contains(res, "hello") {
		t.Fatalf("gamma.echo did not run (%q); answer %q", res, turn.Answer)
	}
	var offered bool
	for _, req := range r.srv.Requests() {
		if len(req.Format) > 0 && strings.Contains(string(req.Format), "gamma.echo") {
			offered = true
		}
	}
	if !offered {
		t.Error("the planner's schema never offered gamma.echo")
	}
}
