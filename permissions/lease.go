package permissions

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"
)

// # Leases (invariant 11)
//
// Some access is decided once and used for a while: a `network`
// permission is asked when an app's process starts, and the process
// keeps its connections open to the endpoint while it runs. A Lease ties
// that access to what allowed it, so that it ends when that ends:
//
//   - a grant (session or stored): when it is revoked, or expires;
//   - the session that answered — an "allow once", or a session grant:
//     when the session ends (EndSession);
//   - an allow rule: when the rules no longer allow what it allowed —
//     the rule removed from the config, or a deny or ask rule now
//     covering it (SetRules); a private turn's broker's, by the main
//     broker's rules;
//   - a policy or the --vanilla baseline: never by itself.
//
// Whoever uses the access holds the lease with a stop function (the MCP
// instance, which kills the process): ending the lease calls every
// holder's stop, synchronously, so when RevokeIn or EndSession returns,
// no process still holds what was revoked, and RevokeIn says which apps
// were stopped. A lease bound to a session serves that session only
// (For): another session's call starts the process afresh, and is asked.
// A private turn's broker keeps its leases with the main broker's, since
// the grants it decides by are the main broker's.

// Lease is the access one decision gave. Its methods are safe for
// concurrent use.
type Lease struct {
	set     *leaseSet
	grant   string   // the grant that allowed it ("" for none)
	session string   // the session it is bound to ("" for none)
	ruled   *Request // what an allow rule allowed (nil for none): it lasts while the rules allow it

	mu      sync.Mutex
	ended   bool
	next    int
	holders map[int]holder
	timer   *time.Timer
}

type holder struct {
	name string
	stop func()
}

// Ended reports whether the access has ended: whatever holds it must
// not use it again.
func (l *Lease) Ended() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ended
}

// For reports whether a call made with ctx may use what the lease
// opened: a lease bound to a session serves that session's calls only.
func (l *Lease) For(ctx context.Context) bool {
	return l.session == "" || SessionOf(ctx) == l.session
}

// Hold registers who uses the access (name: the app, for what the
// permission manager says) and how to stop it. When the lease ends, stop
// is called once; if it has ended already, stop is called at once.
// release unregisters (the process stopped by itself).
func (l *Lease) Hold(name string, stop func()) (release func()) {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		stop()
		return func() {}
	}
	id := l.next
	l.next++
	if l.holders == nil {
		l.holders = map[int]holder{}
	}
	l.holders[id] = holder{name: name, stop: stop}
	l.mu.Unlock()
	return func() {
		l.mu.Lock()
		delete(l.holders, id)
		l.mu.Unlock()
	}
}

// end ends the lease and stops its holders; it returns their names.
func (l *Lease) end() []string {
	l.mu.Lock()
	if l.ended {
		l.mu.Unlock()
		return nil
	}
	l.ended = true
	if l.timer != nil {
		l.timer.Stop()
	}
	hs := l.holders
	l.holders = nil
	l.mu.Unlock()
	var names []string
	for _, h := range hs {
		h.stop()
		names = append(names, h.name)
	}
	return names
}

// leaseSet is every lease a broker (and its private brokers) gave.
type leaseSet struct {
	mu  sync.Mutex
	all map[*Lease]struct{}
}

func newLeaseSet() *leaseSet { return &leaseSet{all: map[*Lease]struct{}{}} }

func (s *leaseSet) add(l *Lease) {
	s.mu.Lock()
	s.all[l] = struct{}{}
	s.mu.Unlock()
}

// endWhere ends the leases that match and returns the names of their
// holders, sorted and without repeats.
func (s *leaseSet) endWhere(match func(*Lease) bool) []string {
	s.mu.Lock()
	var ending []*Lease
	for l := range s.all {
		if match(l) {
			ending = append(ending, l)
			delete(s.all, l)
		}
	}
	s.mu.Unlock()
	var names []string
	for _, l := range ending {
		names = append(names, l.end()...)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// Lease is the access decision d gave a process started for session's
// call (see Leases above). d must allow.
func (b *Broker) Lease(session string, d Decision) *Lease {
	l := &Lease{set: b.leases}
	var expires time.Time
	switch {
	case d.GrantID != "":
		l.grant = d.GrantID
		if g, ok := b.grantByID(d.GrantID); ok {
			l.session = g.Session
			expires = g.Caveats.Expires
		} else if d.Answer == AnswerSession {
			l.session = session
		}
	case d.Answer == AnswerOnce && (d.Source == SourceUser || d.Source == SourceGrant):
		l.session = session
	}
	if l.grant == "" && l.session == "" && d.Source == SourceUser {
		// An answer given for no session (a process of its own) lasts
		// as long as that process.
		l.session = session
	}
	if d.Source == SourceRule {
		// A rule's allow lasts while the rules allow it: a change of
		// them since the decision ends it at once.
		l.ruled = d.ruled
		if !b.addRuled(l) {
			l.ended = true
		}
		return l
	}
	b.leases.add(l)
	if !expires.IsZero() {
		wait := time.Until(expires)
		l.mu.Lock()
		l.timer = time.AfterFunc(max(wait, 0), func() {
			b.leases.endWhere(func(x *Lease) bool { return x == l })
		})
		l.mu.Unlock()
	}
	return l
}

// addRuled adds a lease an allow rule gave, if the rules (the main
// broker's, which SetRules changes) still allow what it allowed; the
// check and the add are one step under the rules' lock, so a SetRules
// either sees the lease or is seen by it. A rule's decision that does
// not say what it allowed (not made by a broker) is not added.
func (b *Broker) addRuled(l *Lease) bool {
	rb := b
	if b.parent != nil {
		rb = b.parent
	}
	rb.mu.Lock()
	defer rb.mu.Unlock()
	if l.ruled == nil || !rulesAllow(rb.rules, *l.ruled) {
		return false
	}
	b.leases.add(l)
	return true
}

// endRuled ends the leases of allow rules that rules no longer allow,
// and returns their holders' names.
func (b *Broker) endRuled(rules []Rule) []string {
	return b.leases.endWhere(func(l *Lease) bool { return l.ruled != nil && !rulesAllow(rules, *l.ruled) })
}

// grantByID finds a valid grant this broker (or its parent) holds.
func (b *Broker) grantByID(id string) (Grant, bool) {
	for x := b; x != nil; x = x.parent {
		x.mu.Lock()
		for _, h := range x.grants {
			if h.g.ID == id {
				x.mu.Unlock()
				return h.g, true
			}
		}
		x.mu.Unlock()
	}
	return Grant{}, false
}

// endGrants ends the leases of the grants with ids.
func (b *Broker) endGrants(ids []string) []string {
	if len(ids) == 0 {
		return nil
	}
	return b.leases.endWhere(func(l *Lease) bool { return l.grant != "" && slices.Contains(ids, l.grant) })
}

// StoppedWords is what a revoke says of the processes it stopped, for
// the permission manager and `bulkhead permissions revoke`:
// " — sock restarted" ("" for none). The app restarts on its next call,
// which asks again.
func StoppedWords(stopped []string) string {
	if len(stopped) == 0 {
		return ""
	}
	return " — " + strings.Join(stopped, ", ") + " restarted"
}
