package permissions

import "fmt"

// defaultsKey marks that a store has had its default grants: they are
// added once, so that one the user revokes stays revoked.
const defaultsKey = "defaults/v1"

// OriginDefault is the Origin of a grant bulkhead gives by default (the
// permission manager shows it, and revokes it like any other).
const OriginDefault = "default"

// SeedDefaults adds gs as permanent stored grants of Origin
// OriginDefault, the first time a store is seeded, and reports how many
// it added (0 every later time). None may be of an irreversible kind.
func (b *Broker) SeedDefaults(gs []Grant) (int, error) {
	if b.store == nil {
		return 0, nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, err := b.store.Get(defaultsKey); !b.isNotFound(err) {
		return 0, err
	}
	n := 0
	for _, g := range gs {
		if g.Kind == KindIrreversible || !g.Kind.known() || g.Subject == "" {
			return n, fmt.Errorf("a default grant must be of a known, reversible kind with a subject: %+v", g)
		}
		g.ID, g.Permanent, g.Origin, g.Sig, g.Uses = "", true, OriginDefault, "", 0
		if _, err := b.add(g, true); err != nil {
			return n, err
		}
		n++
	}
	return n, b.store.Set(defaultsKey, []byte("1"))
}
