package hub

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/memory"
)

// OwnerMemory is what one owner remembers, for the user to see: its
// summaries (one per chat) and its entities. For a spoke, Record is the
// hub's record of it — the same, masked, as the hub keeps it. Values are
// shown as stored: what came from an app is masked already.
type OwnerMemory struct {
	Owner     string           `json:"owner"` // "hub" or an app name
	Summaries []memory.Summary `json:"summaries"`
	Entities  []memory.Entity  `json:"entities"`
	Record    *OwnerMemory     `json:"record,omitempty"`
}

var appNameRE = lazyRegexp(`^[a-z0-9][a-z0-9_-]{0,62}$`)

// MemoryOwners lists whose memory the data directory holds: "hub" first,
// then every app with a namespace or a record at the hub, sorted.
func (o *Operator) MemoryOwners() ([]string, error) {
	owners, err := o.store.Owners()
	if err != nil {
		return nil, err
	}
	hubNS, err := o.store.Namespace(hubOwner)
	if err != nil {
		return nil, err
	}
	recs, err := hubNS.Records()
	if err != nil {
		return nil, err
	}
	set := map[string]bool{}
	for _, ow := range owners {
		if app, ok := strings.CutPrefix(ow, spokePrefix); ok {
			set[app] = true
		}
	}
	for _, app := range recs {
		set[app] = true
	}
	out := []string{hubOwner}
	for app := range set {
		out = append(out, app)
	}
	slices.Sort(out[1:])
	return out, nil
}

// Memory returns what owner ("hub" or an app name) remembers on disk.
// Private chats are not included: they leave no long-term memory.
func (o *Operator) Memory(owner string) (OwnerMemory, error) {
	ns, app, err := o.ownerNamespace(owner)
	if err != nil {
		return OwnerMemory{}, err
	}
	out, err := view(owner, ns.LongTerm())
	if err != nil || app == "" {
		return out, err
	}
	hubNS, err := o.store.Namespace(hubOwner)
	if err != nil {
		return out, err
	}
	rec, err := hubNS.Record(app)
	if err != nil {
		return out, err
	}
	r, err := view(owner, rec)
	if err != nil {
		return out, err
	}
	out.Record = &r
	return out, nil
}

func view(owner string, lt *memory.LongTerm) (OwnerMemory, error) {
	sums, err := lt.Summaries()
	if err != nil {
		return OwnerMemory{}, err
	}
	es, err := lt.Entities()
	if err != nil {
		return OwnerMemory{}, err
	}
	return OwnerMemory{Owner: owner, Summaries: sums, Entities: es}, nil
}

// ExportMemory returns the memory of every owner, hub first.
func (o *Operator) ExportMemory() ([]OwnerMemory, error) {
	owners, err := o.MemoryOwners()
	if err != nil {
		return nil, err
	}
	out := make([]OwnerMemory, 0, len(owners))
	for _, ow := range owners {
		m, err := o.Memory(ow)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// Forget deletes what owner remembers. For an app: its whole namespace —
// interaction logs, summaries, entities and the app's own data (notes,
// mail) — and the hub's record of it, after stopping its spokes; queued
// memory updates for it are dropped and a running one is cancelled. For
// "hub": the hub's summaries, its entities and its records of every
// spoke; its chats, grants and action log stay (delete chats to forget
// those). An app at work answers ErrBusy.
func (o *Operator) Forget(owner string) error {
	_, app, err := o.ownerNamespace(owner)
	if err != nil {
		return err
	}
	if app != "" {
		o.mu.Lock()
		busy := o.working[app] > 0
		o.mu.Unlock()
		if busy {
			return fmt.Errorf("%w: %s is at work; cancel it first", ErrBusy, app)
		}
		o.stopApp(app)
	}
	if o.mem == nil {
		return o.forget(app)
	}
	target := hubOwner
	if app != "" {
		target = SpokeOwner(app)
	}
	return o.mem.forget(target, func() error { return o.forget(app) })
}

func (o *Operator) forget(app string) error {
	hubNS, err := o.store.Namespace(hubOwner)
	if err != nil {
		return err
	}
	var errs []error
	if app == "" {
		errs = append(errs, hubNS.LongTerm().Clear())
		recs, err := hubNS.Records()
		errs = append(errs, err)
		for _, a := range recs {
			if r, err := hubNS.Record(a); err == nil {
				errs = append(errs, r.Clear())
			}
		}
		return errors.Join(errs...)
	}
	errs = append(errs, o.store.DeleteOwner(SpokeOwner(app)))
	if eph := o.ephemeralIfOpen(); eph != nil {
		errs = append(errs, eph.DeleteOwner(SpokeOwner(app)))
	}
	if r, err := hubNS.Record(app); err == nil {
		errs = append(errs, r.Clear())
	} else {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("forget %s: %w", app, err)
	}
	return nil
}

// ownerNamespace resolves "hub" or an app name to its namespace on disk;
// app is "" for the hub.
func (o *Operator) ownerNamespace(owner string) (*memory.Namespace, string, error) {
	if owner == hubOwner {
		ns, err := o.store.Namespace(hubOwner)
		return ns, "", err
	}
	if !appNameRE().MatchString(owner) {
		return nil, "", fmt.Errorf("%q is neither \"hub\" nor an app name", owner)
	}
	ns, err := o.store.Namespace(SpokeOwner(owner))
	return ns, owner, err
}

// stopApp stops every cached spoke of app, in every chat.
func (o *Operator) stopApp(app string) {
	o.mu.Lock()
	var stop []*spokeRef
	for k, r := range o.spokes {
		if r.spoke.App() == app {
			stop = append(stop, r)
			delete(o.spokes, k)
		}
	}
	o.mu.Unlock()
	for _, r := range stop {
		r.spoke.Stop()
	}
}
