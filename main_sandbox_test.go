package main

import (
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
	if os.Getenv(idleEnv) == "" {
		os.Setenv(idleEnv, "5s")
	}
	if os.Getenv(asMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const asMainEnv = "BULKHEAD_TEST_AS_MAIN"
