package hub_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/hub/hubtest"
	"github.com/bulkhead-dev/bulkhead/internal/ollamatest"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/permissions/permissionstest"
)

// Model calls per request, bulkhead against the --vanilla baseline, with
// the background calls of the memory upkeep apart (memory.every 4, the
// default: four turns of each kind in one chat, averaged). A step whose
// value is its app's typed result writes no prose when a synthesis
// follows, so comparing two apps costs at most vanilla + 1 calls. The
// table is in the log: go test ./hub -run TestCallsPerRequest -v.
func TestCallsPerRequest(t *testing.T) {
	t.Parallel()
	const turns = 4
	cases := []struct{ name, query string }{
		{"chat", "Tell me something nice"},
		{"one app", "Write a story about a dragon"},
		{"two apps", "Compare the fares from the airport to downtown on metro_hail and quick_ride"},
	}
	run := func(query string, vanilla bool) (calls, background float64) {
		r := hubtest.New(t, hubtest.Config{Script: ollamatest.Gullible(), Prompter: permissionstest.NewPrompter(permissions.AnswerOnce),
			Rules: allowExec, Modify: func(o *hub.Options) {
				o.Vanilla = vanilla
				o.Memory = hub.MemoryOptions{Enabled: true, Every: 4}
			}})
		chat, _ := r.Op.NewChat(false)
		for range turns {
			var usage int
			var bg int
			if _, err := r.Op.Ask(context.Background(), chat.ID, query, func(e hub.Event) {
				if e.Kind == hub.EventAnswer {
					usage, bg = e.Usage.Calls, e.Usage.BackgroundCalls
				}
			}); err != nil {
				t.Fatalf("%q: %v", query, err)
			}
			calls += float64(usage)
			background += float64(bg)
		}
		return calls / turns, background / turns
	}
	var b strings.Builder
	b.WriteString("| request | calls, bulkhead | calls, --vanilla | background calls per turn, bulkhead (memory.every 4) |\n|---|---|---|---|\n")
	for _, c := range cases {
		bc, bg := run(c.query, false)
		vc, _ := run(c.query, true)
		fmt.Fprintf(&b, "| %s | %.0f | %.0f | %.1f |\n", c.name, bc, vc, bg)
		if c.name == "two apps" && bc > vc+1 {
			t.Errorf("two apps cost %.0f calls, vanilla %.0f: want at most vanilla + 1", bc, vc)
		}
	}
	t.Logf("calls per request:\n%s", b.String())
}
