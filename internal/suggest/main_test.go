package suggest_test

import (
	"testing"

	"github.com/bulkhead-dev/bulkhead/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m, false) }
