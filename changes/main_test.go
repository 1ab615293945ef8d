package changes_test

import (
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// The tests write layers as apps do: commands in the sandbox, this test
// binary their launcher.
func TestMain(m *testing.M) {
	sandbox.Launch()
	testenv.Main(m, false)
}
