package apps

import (
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
)

// No test reads the user's config, data or Ollama (testenv).
func TestMain(m *testing.M) { testenv.Main(m, false) }
