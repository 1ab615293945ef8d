package permissions

// PutGrant holds g as an answer would: signed and stored when g.Permanent
// and the Broker has a Store. It lets tests set up any mix of grants,
// including ones no answer could make (a signed irreversible grant).
func (b *Broker) PutGrant(g Grant) (Grant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.add(g, g.Permanent && b.store != nil)
}
