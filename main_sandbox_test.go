package main

import (
	"fmt"
	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"os"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// TestMain lets this test binary serve as the launcher of the shell app's
// commands (package sandbox), as the bulkhead binary does; and, with
// BULKHEAD_TEST_AS_MAIN=1, as the bulkhead binary itself (asMain), for
// tests that need real processes.
func TestMain(m *testing.M) {
	sandbox.Launch()
	// A serving process this binary starts is this binary, as bulkhead;
	// it exits soon once unused.
	serveEnv = []string{asMainEnv + "=1"}
	extraCommands = append(extraCommands, newTestClient)
	if os.Getenv(asMainEnv) == "1" {
		main() // as the test that started it set it up
		os.Exit(0)
	}
	// No test reads the user's config, data or Ollama (testenv).
	_, cleanup, err := testenv.Setup()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Setenv(idleEnv, "5s")
	code := m.Run()
	cleanup()
	os.Exit(code)
}

const asMainEnv = "BULKHEAD_TEST_AS_MAIN"
