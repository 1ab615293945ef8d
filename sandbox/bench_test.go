package sandbox_test

import (
	"context"
	"testing"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// BenchmarkCommand times one short command (`/bin/sh -c true`) started
// and waited for: unconfined, confined without namespaces, and with every
// layer — what the sandbox costs a shell command or an MCP server's start:
//
//	go test -run XXX -bench Command -count 6 ./sandbox | benchstat -col /mode -
func BenchmarkCommand(b *testing.B) {
	for _, c := range []struct {
		name string
		p    sandbox.Policy
	}{
		{"unconfined", sandbox.Policy{Unconfined: true}},
		{"no-namespaces", sandbox.Policy{Without: []sandbox.Mechanism{sandbox.Namespaces}}},
		{"all-layers", sandbox.Policy{}},
	} {
		b.Run("mode="+c.name, func(b *testing.B) {
			dir := b.TempDir()
			for b.Loop() {
				cmd, cleanup, err := sandbox.Command(context.Background(), c.p, dir, "/bin/sh", "-c", "true")
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
				cleanup()
			}
		})
	}
}
