package main

import (
	"os"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// TestMain lets this test binary serve as the launcher of the shell app's
// commands (package sandbox), as the bulkhead binary does.
func TestMain(m *testing.M) {
	sandbox.Launch()
	os.Exit(m.Run())
}
