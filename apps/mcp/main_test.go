package mcp

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// TestServer is the path of the suite's MCP server (internal/testserver),
// built once per test binary; $BULKHEAD_MCP_TESTSERVER names a built one.
var TestServer string

func TestMain(m *testing.M) {
	sandbox.Launch() // servers run through this binary as their launcher
	if _, _, err := testenv.Setup(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if TestServer = os.Getenv("BULKHEAD_MCP_TESTSERVER"); TestServer == "" {
		dir, err := os.MkdirTemp("", "mcp-testserver")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer os.RemoveAll(dir)
		TestServer = filepath.Join(dir, "testserver")
		if out, err := exec.Command("go", "build", "-o", TestServer, "./internal/testserver").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building the test server: %v\n%s", err, out)
			return 1
		}
	}
	code := m.Run()
	if code == 0 {
		// An engine's log (lumberjack) keeps a goroutine that its Close
		// does not end (TestAConfigThatDoesNotLoadStopsTheNetwork opens
		// an engine).
		if err := goleak.Find(goleak.IgnoreTopFunction("gopkg.in/natefinch/lumberjack%2ev2.(*Logger).millRun")); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: %v\n", err)
			return 1
		}
	}
	return code
}
