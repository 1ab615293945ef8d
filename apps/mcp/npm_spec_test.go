package mcp_test

import (
	"context"
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// @modelcontextprotocol/server-everything as the spec has it: its
// simulate-research-query requires tasks, so it is neither a function nor
// a functionality, and its summary says so; its prompts are listed, never
// offered; its resources are its own spoke's to read. In a turn, the
// spoke planned for get-resource-links reads a link it returned with
// read_resource, from the same server.
func TestNPMEverythingAsTheSpecHasIt(t *testing.T) {
	bin := npmServer(t, "mcp-server-everything")
	cfg := mcp.Server{Command: bin, Args: []string{"stdio"}}
	cat := catalogWith(t, cfg)
	a, err := mcp.New("everything", cfg, cat, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	m := a.Manifest()
	if _, ok := m.Function("simulate_research_query"); ok {
		t.Error("simulate-research-query requires tasks: it must not be a function")
	}
	for _, f := range a.Own() {
		if f.Name == "everything.simulate_research_query" {
			t.Error("the planner must not be offered simulate-research-query")
		}
	}
	s := a.Summary()
	if !slices.Contains(s.Unsupported, "tool simulate-research-query: requires tasks: not supported (not offered)") {
		t.Errorf("the summary must name simulate-research-query as not supported: %+v", s)
	}
	if !slices.Contains(s.Prompts, "simple-prompt") || s.PromptCount < 2 || !s.Resources {
		t.Errorf("its prompts and resources: %+v", s)
	}
	if !slices.Contains(s.Unsupported, "resource subscriptions: not used") {
		t.Errorf("subscriptions: %+v", s.Unsupported)
	}
	for _, fn := range []string{"read_resource", "list_resources", "get_resource_links", "echo"} {
		if f, ok := m.Function(fn); !ok || (strings.HasSuffix(fn, "_resource") || fn == "list_resources") && f.Effect != apps.EffectRead {
			t.Errorf("%s: %+v", fn, f)
		}
	}
	in := a.NewInstance()
	defer in.(io.Closer).Close()
	callIn := func(fn, args string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		out, err := in.Call(ctx, apps.Call{Function: fn, Args: json.RawMessage(args)})
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		var r struct{ Content string }
		_ = json.Unmarshal(out, &r)
		return r.Content
	}
	if out := callIn("get_resource_links", `{"count":2}`); !strings.Contains(out, "[resource link demo://resource/dynamic/text/2") {
		t.Fatalf("get-resource-links: %q", out)
	}
	if out := callIn("read_resource", `{"uri":"demo://resource/dynamic/text/2"}`); !strings.Contains(out, "Resource 2") {
		t.Fatalf("read_resource: %q", out)
	}
	if out := callIn("list_resources", `{}`); !strings.Contains(out, "demo://resource/static/document/") {
		t.Fatalf("list_resources: %q", out)
	}

	// Through the hub: the spoke planned for get-resource-links reads
	// what it links to, in its own spoke.
	plans := map[string]string{"links": "everything.get_resource_links"}
	calls := map[string][]step{"links": {
		{"get_resource_links", map[string]any{"count": 2}},
		{"read_resource", map[string]any{"uri": "demo://resource/dynamic/text/2"}},
	}}
	p := permissionstest.NewPrompter(permissions.AnswerOnce)
	r := newRig(t, gullibleFor(plans, calls), p, allowExec, cat, map[string]mcp.Server{"everything": cfg})
	chat, _ := r.op.NewChat(false)
	_, evs := r.ask(t, chat.ID, "show me the links")
	if out, ok := ran(evs, "everything", "read_resource"); !ok || !strings.Contains(out, "Resource 2") {
		t.Fatalf("read_resource in the spoke of everything: %q %v", out, ok)
	}
}
