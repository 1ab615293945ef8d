package hub

// Respawn changes what the spokes are built from: with no turn running in
// any chat it runs change (which switches what Options.SpokeModel and the
// hub's model give from then on) and stops every cached spoke, so that
// each starts again, built anew, on its next use. While a turn runs it
// changes nothing and returns ErrBusy: a running turn is never disturbed.
// A turn that starts once change has run sees the change.
//
// change runs with the operator's lock held: it must only switch a value
// (an atomic pointer), never call back into the operator or block.
func (o *Operator) Respawn(change func()) error {
	o.mu.Lock()
	if len(o.busy) > 0 || len(o.running) > 0 {
		o.mu.Unlock()
		return ErrBusy
	}
	change()
	refs := o.spokes
	o.spokes = map[string]*spokeRef{}
	o.mu.Unlock()
	for _, r := range refs {
		r.spoke.Stop()
	}
	return nil
}
