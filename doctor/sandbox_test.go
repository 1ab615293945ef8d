package doctor

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// doctor says whether Landlock holds, and what still holds without it.
func TestSandboxCheck(t *testing.T) {
	c := sandboxCheck(func() (int, error) { return 5, nil })
	if !c.OK || !strings.Contains(c.Detail, "Landlock ABI 5") || !strings.Contains(c.Detail, "confined") {
		t.Fatalf("with Landlock: %+v", c)
	}
	c = sandboxCheck(func() (int, error) { return 0, sandbox.ErrNoLandlock })
	if c.OK || !strings.Contains(c.Detail, "degraded") || !strings.Contains(c.Detail, "minimal environment") || c.Fix == "" {
		t.Fatalf("without Landlock: %+v", c)
	}
}
