// Package testenv makes a test binary hermetic: HOME and every XDG
// folder point into a temporary folder of its own, and OLLAMA_HOST and
// the variables that set a config key (BULKHEAD_ENABLE,
// BULKHEAD_HUB_MODEL, …: config.EnvNames) are unset. So no test reads the user's config, data,
// state or cache, or talks to the user's Ollama, whatever the user has
// set up; a child process a test starts inherits the same. Call Main
// from TestMain.
//
// It changes the process environment, so it must run before any test
// does (TestMain), never in parallel with one.
package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/adrg/xdg"
	"go.uber.org/goleak"

	"github.com/bulkhead-dev/bulkhead/config"
)

// rig are the variables of bulkhead's test rig, which stay (some share a
// prefix with a config key's).
var rig = []string{"BULKHEAD_OLLAMA_BIN", "BULKHEAD_INTEGRATION", "BULKHEAD_MCP_NPM", "BULKHEAD_MCP_TESTSERVER", "BULKHEAD_BENCH_BIN",
	"BULKHEAD_BENCH_PARALLEL", "BULKHEAD_BENCH_DRAFT", "BULKHEAD_TEST_AS_MAIN", "BULKHEAD_MCP_STDERR_CHILD", "BULKHEAD_FAKE_OLLAMA_SERVE",
	"BULKHEAD_CRASH_CHILD", "BULKHEAD_CRASH_DIR", "BULKHEAD_CRASH_HOST"}

// Folders are the environment variables Setup points into its folder.
var Folders = []string{"HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_RUNTIME_DIR"}

// Setup makes the process hermetic under a new temporary folder and
// returns it with a function that removes it.
func Setup() (string, func(), error) {
	root, err := os.MkdirTemp("", "bulkhead-test-home-")
	if err != nil {
		return "", nil, err
	}
	for _, k := range Folders {
		dir := filepath.Join(root, strings.ToLower(strings.TrimPrefix(k, "XDG_")))
		if k == "HOME" {
			dir = filepath.Join(root, "home")
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", nil, err
		}
		os.Setenv(k, dir)
	}
	for _, k := range config.EnvNames() {
		if !slices.Contains(rig, k) {
			os.Unsetenv(k)
		}
	}
	xdg.Reload()
	return root, func() { os.RemoveAll(root) }, nil
}

// Main is TestMain's body: it makes the process hermetic, runs the
// tests, checks with goleak (given options) that no goroutine outlived
// them when leaks is set, and exits with their status.
func Main(m *testing.M, leaks bool, opts ...goleak.Option) {
	_, cleanup, err := Setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, "testenv:", err)
		os.Exit(2)
	}
	code := m.Run()
	if code == 0 && leaks {
		if err := goleak.Find(opts...); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	cleanup()
	os.Exit(code)
}
