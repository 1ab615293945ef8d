package ollamatest

import (
	"os"
	"testing"
	"time"
)

func TestWalkServer(t *testing.T) {
	if os.Getenv("WALK") == "" {
		t.Skip()
	}
	s := NewScripted(t, Gullible(), "m", "m2")
	os.WriteFile("/tmp/walk_host", []byte(s.Host()), 0o644)
	time.Sleep(25 * time.Minute)
}
