package permissions

// PutGrant holds g as an answer would: signed and stored when g.Permanent
// and the Broker has a Store. It lets tests set up any mix of grants,
// including ones no answer could make (a signed irreversible grant).
func (b *Broker) PutGrant(g Grant) (Grant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.add(g, g.Permanent && b.store != nil)
}

// PutLegacyGrant stores g signed as a grant was before the ledger (no
// generation, no ledger entry).
func (b *Broker) PutLegacyGrant(g Grant) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	g.Gen = 0
	g.Sig = sign(b.key, g)
	return b.put(&held{g: g, key: grantPrefix + g.ID})
}
