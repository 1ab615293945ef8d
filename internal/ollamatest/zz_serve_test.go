package ollamatest

import (
	"os"
	"testing"
	"time"
)

func TestZZServe(t *testing.T) {
	if os.Getenv("ZZ_SERVE") == "" {
		t.Skip()
	}
	s := NewScripted(t, Gullible(), "m")
	os.WriteFile("/tmp/zz_host", []byte(s.Host()), 0o600)
	time.Sleep(25 * time.Minute)
}
