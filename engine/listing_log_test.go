package engine_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
)

// `bulkhead mcp add` lists a server in a process of its own
// (engine.ListMCP): a server that exits at its start is reported with
// its exit status, its own last words and where its stderr is — and its
// stderr is there, in the data directory's bulkhead.log, as it is when
// the serving process or doctor lists it; the message blames no
// network, though the config names an endpoint.
func TestMCPAddsListingLogsTheServersStderr(t *testing.T) {
	server := testServer(t)
	notes := filepath.Join(t.TempDir(), "notes") // not made
	const said = "None of the specified directories are accessible"
	cfg := config.Config{DataDir: filepath.Join(t.TempDir(), "d"), Enable: []string{"gone"}, Workspace: t.TempDir(),
		Hub: config.Owner{Model: "m"}, Spokes: config.Owner{Model: "m"}, Ollama: config.Ollama{Host: "http://127.0.0.1:1"},
		MCP: map[string]config.MCPServer{"gone": {Command: server, Net: []string{"registry.npmjs.org:443"},
			Args: []string{"-stderr", "Error accessing directory " + notes + `\n` + said + `\n`, "-exit", "1", notes}}}}
	_, err := engine.ListMCP(context.Background(), cfg, "gone")
	var ee *mcp.ExitError
	if !errors.As(err, &ee) || ee.Code != 1 {
		t.Fatalf("listing gone: %v, want its exit status", err)
	}
	msg := err.Error()
	for _, want := range []string{said, "its stderr is in bulkhead.log"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error lacks %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "network") {
		t.Errorf("the error blames the network: %s", msg)
	}
	b, err := os.ReadFile(filepath.Join(cfg.DataDir, "bulkhead.log"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if strings.Contains(l, `"msg":"server stderr"`) && strings.Contains(l, said) && strings.Contains(l, `"by":"mcp add"`) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("the log holds the server's line %d times from mcp add's listing, want 1:\n%s", n, b)
	}
}
