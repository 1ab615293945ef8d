package hub

import (
	"strings"
	"testing"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// What a change set's dialog says of the plan is true of how the set
// came to be: an expected call's writes are expected; otherwise the
// warning names the actual reason — the call was not the step's, the
// function declared it only reads, the app wrote between its calls, the
// set is from an earlier turn — never a claim about the plan's steps
// that the plan contradicts.
func TestAChangeSetSaysWhyItIsNotExpected(t *testing.T) {
	set := &changes.Set{View: permissions.ChangeSet{ID: "s1", Folder: "/w", Entries: []permissions.ChangeEntry{{Path: "notes.txt"}}}}
	write := apps.Function{Name: "writer.sh", Effect: apps.EffectWrite}
	read := apps.Function{Name: "writer.look", Effect: apps.EffectRead}
	for _, c := range []struct {
		name     string
		expect   writeExpect
		expected bool
		says     string
	}{
		{"the step's call", callExpect(write, spokes.Verdict{Allowed: true, Expected: true}), true, "expected by the plan: the app's step writes here"},
		{"another call", callExpect(write, spokes.Verdict{Allowed: true}), false, "the call of writer.sh that wrote it is not the one the plan's step expects"},
		{"a read", callExpect(read, spokes.Verdict{Allowed: true, Expected: true}), false, "writer.look declares that it only reads"},
		{"between calls", betweenCalls, false, "between its calls"},
		{"an earlier turn", resumedWrites, false, "left from an earlier turn"},
		{"outside its turn", outsideTurn, false, "outside its turn"},
	} {
		r := changesRequest("writer", set, c.expect)
		if r.Expected != c.expected || !strings.Contains(r.Warning, c.says) {
			t.Errorf("%s: expected %v, warning %q; want %v and it to say %q", c.name, r.Expected, r.Warning, c.expected, c.says)
		}
		if !c.expected && !strings.HasPrefix(r.Warning, "NOT expected by the plan: ") {
			t.Errorf("%s: the warning must lead with NOT expected: %q", c.name, r.Warning)
		}
	}
}
