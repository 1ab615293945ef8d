package mcp_test

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
)

// engine.Install installs a configured server when enable names it or
// holds the pack "mcp", over the catalog extended by its entries.
func TestInstallMCPServers(t *testing.T) {
	servers := map[string]config.MCPServer{
		"alpha": {Command: mcp.TestServer, Tools: map[string]config.MCPTool{"echo": {Functionality: "test.shout"}, "write_note": {Effect: "irreversible"}},
			Catalog: []config.MCPCatalogEntry{{Name: "test.shout", Description: "Shout.", Effect: "read",
				Request:  map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}},
				Response: map[string]any{"type": "object", "properties": map[string]any{"content": map[string]any{"type": "string"}}}}}},
		"beta": {Command: mcp.TestServer},
	}
	names := func(enable ...string) string {
		reg, err := engine.Install(enable, t.TempDir(), servers, nil)
		if err != nil {
			t.Fatalf("%v: %v", enable, err)
		}
		return strings.Join(reg.Names(), ",")
	}
	if got := names("calc"); got != "calc" {
		t.Fatalf("configured but not enabled: %s", got)
	}
	if got := names("calc", "alpha"); got != "alpha,calc" {
		t.Fatalf("enabled by name: %s", got)
	}
	if got := names("mcp"); got != "alpha,beta" {
		t.Fatalf("the mcp pack: %s", got)
	}
	reg, _ := engine.Install([]string{"alpha"}, t.TempDir(), servers, nil)
	if f, ok := reg.Catalog().Get("test.shout"); !ok || f.Description != "Shout." || reg.Providers("test.shout")[0] != "alpha" {
		t.Fatalf("catalog entry: %+v %v", f, reg.Providers("test.shout"))
	}
	for name, s := range map[string]config.MCPServer{
		"files": {Command: mcp.TestServer},
		"gamma": {Command: "/nonexistent/server"},
		"delta": {Command: mcp.TestServer, Tools: map[string]config.MCPTool{"write_note": {Effect: "read"}}},
	} {
		_, err := engine.Install([]string{name}, t.TempDir(), map[string]config.MCPServer{name: s}, nil)
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: want an error naming it, got %v", name, err)
		}
	}
}
