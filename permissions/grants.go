package permissions

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// grantPrefix is where stored grants live in the Store: grants/<id>.
const grantPrefix = "grants/"

// ErrUnknownGrant is matched by Revoke's error for an id it does not hold.
var ErrUnknownGrant = errors.New("no such grant")

// ErrUnanswerable is a Prompter's answer when no one can answer a dialog
// (a headless run without a policy): the turn that asked ends there,
// unfinished and kept for a retry, rather than go on without what it
// asked for.
var ErrUnanswerable = errors.New("a dialog needed an answer and none could be given")

func (b *Broker) isNotFound(err error) bool {
	return b.notFound != nil && errors.Is(err, b.notFound)
}

// loadGrants reads the stored grants and sorts them into valid and invalid.
func (b *Broker) loadGrants() error {
	keys, err := b.store.Keys(grantPrefix)
	if err != nil {
		return fmt.Errorf("list stored grants: %w", err)
	}
	ledger, err := b.store.Keys(ledgerPrefix)
	if err != nil {
		return fmt.Errorf("list the grant ledger: %w", err)
	}
	hadLedger := len(ledger) > 0
	for _, k := range keys {
		raw, err := b.store.Get(k)
		if b.isNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("load stored grant: %w", err)
		}
		id := strings.TrimPrefix(k, grantPrefix)
		var g Grant
		why := ""
		switch err := json.Unmarshal(raw, &g); {
		case err != nil:
			g, why = Grant{ID: id, Origin: "store", Permanent: true}, "unreadable: "+err.Error()
		case g.ID != id:
			why = "stored under another grant's id"
		case !verify(b.key, g):
			why = "signature does not verify"
		default:
			var legacy bool
			if why, legacy, err = b.current(g, hadLedger); err != nil {
				return fmt.Errorf("load stored grant: %w", err)
			}
			if legacy {
				// Stored before the ledger: from now on under it.
				g.Gen = 1
				g.Sig = sign(b.key, g)
				if err := b.setLedger(g.ID, "1"); err != nil {
					return err
				}
				if err := b.put(&held{g: g, key: k}); err != nil {
					return err
				}
			}
		}
		if why != "" {
			g.Invalid = true
			b.invalid = append(b.invalid, &held{g: g, key: k})
			b.log.Warn("stored permission grant ignored", "grant", id, "why", why,
				"kind", g.Kind, "subject", g.Subject, "object", g.Object)
			continue
		}
		b.grants = append(b.grants, &held{g: g, key: k})
	}
	return nil
}

// add gives g an ID and creation time, signs and stores it when stored, and
// holds it. The caller holds b.mu.
func (b *Broker) add(g Grant, stored bool) (Grant, error) {
	if g.ID == "" {
		g.ID = newID()
	}
	if g.Created.IsZero() {
		g.Created = b.now()
	}
	h := &held{g: g}
	if stored {
		h.key = grantPrefix + g.ID
		h.g.Gen = 1
		h.g.Sig = sign(b.key, h.g)
		if err := b.setLedger(g.ID, "1"); err != nil {
			return Grant{}, err
		}
		if err := b.put(h); err != nil {
			return Grant{}, err
		}
	}
	b.grants = append(b.grants, h)
	return h.g, nil
}

// end removes a stored grant for good: the ledger says it ended (so its
// bytes written back are refused), then it is deleted.
func (b *Broker) end(h *held) error {
	if err := b.setLedger(h.g.ID, ledgerEnded); err != nil {
		return err
	}
	return b.store.Delete(h.key)
}

// put writes h's grant to the Store.
func (b *Broker) put(h *held) error {
	val, err := json.Marshal(h.g)
	if err != nil {
		return fmt.Errorf("encode grant %s: %w", h.g.ID, err)
	}
	if err := b.store.Set(h.key, val); err != nil {
		return fmt.Errorf("store grant %s: %w", h.g.ID, err)
	}
	return nil
}

// useGrant finds the first held grant (allow or deny, as wanted) that
// matches r at now and records its use. A grant whose use cannot be recorded
// is skipped. The caller holds b.mu.
func (b *Broker) useGrant(r Request, now time.Time, wantDeny bool) (Grant, bool) {
	for _, h := range b.grants {
		if h.g.Deny != wantDeny || !h.g.Matches(r, now) {
			continue
		}
		if b.dry {
			return h.g, true
		}
		g, err := b.use(h, now)
		if err != nil {
			b.log.Warn("permission grant skipped: its use could not be recorded", "grant", h.g.ID, "err", err)
			continue
		}
		return g, true
	}
	return Grant{}, false
}

// use counts one use of h: Uses and LastUsed, and UsesLeft down, re-signing
// and rewriting a stored grant. A grant whose last use this is goes away.
func (b *Broker) use(h *held, now time.Time) (Grant, error) {
	g := h.g
	g.LastUsed = now
	g.Uses++
	if g.Caveats.UsesLeft > 0 {
		g.Caveats.UsesLeft--
		if g.Caveats.UsesLeft == 0 { // 0 would read as unlimited: drop it instead
			if h.key != "" {
				if err := b.end(h); err != nil {
					return Grant{}, fmt.Errorf("remove spent grant %s: %w", g.ID, err)
				}
			}
			b.grants = slices.DeleteFunc(b.grants, func(x *held) bool { return x == h })
			return g, nil
		}
	}
	if h.key != "" {
		g.Gen++
		g.Sig = sign(b.key, g)
		if err := b.setLedger(g.ID, strconv.FormatUint(g.Gen, 10)); err != nil {
			return Grant{}, err
		}
		next := &held{g: g, key: h.key}
		if err := b.put(next); err != nil {
			return Grant{}, err
		}
	}
	h.g = g
	return g, nil
}

// Grants lists the grants held: session, stored and config ones, and the
// stored ones that failed their check (Invalid set), oldest first.
func (b *Broker) Grants() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Grant, 0, len(b.grants)+len(b.invalid))
	for _, h := range slices.Concat(b.grants, b.invalid) {
		out = append(out, h.g)
	}
	slices.SortStableFunc(out, func(x, y Grant) int {
		if c := x.Created.Compare(y.Created); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return out
}

// Invalid lists the stored grants that failed their signature check or could
// not be read when the Broker was built. They are never consulted.
func (b *Broker) Invalid() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]Grant, 0, len(b.invalid))
	for _, h := range b.invalid {
		out = append(out, h.g)
	}
	return out
}

// Revoke removes the grant with id, from the Store too if it is stored
// (invalid ones included). A config grant comes back when config is loaded
// again. The access the grant gave ends with it (leases).
func (b *Broker) Revoke(id string) error {
	_, err := b.RevokeIn("", id)
	return err
}

// Revoked is what a revoke did: how many grants went, and the apps
// whose processes held access they gave and were stopped.
type Revoked struct {
	N       int      `json:"n"`
	Stopped []string `json:"stopped,omitempty"`
}

// RevokeReport is Revoke, saying what it did.
func (b *Broker) RevokeReport(id string) (Revoked, error) { return b.RevokeIn("", id) }

// RevokeAllReport is RevokeAll, saying what it did.
func (b *Broker) RevokeAllReport(subject string) (Revoked, error) { return b.RevokeAllIn("", subject) }

// RevokeIn is Revoke asked by client session: another session's
// session grant is not its to revoke, and to it that grant does not
// exist (ErrUnknownGrant). Stored and config grants are the user's, and
// any session revokes them. session "" (a process of its own) revokes
// any grant. It says which apps' processes held access the grant gave,
// and were stopped.
func (b *Broker) RevokeIn(session, id string) (Revoked, error) {
	b.mu.Lock()
	found := false
	for _, list := range []*[]*held{&b.grants, &b.invalid} {
		i := slices.IndexFunc(*list, func(h *held) bool { return h.g.ID == id && b.ownedBy(h, session) })
		if i < 0 {
			continue
		}
		if (*list)[i].key != "" {
			if err := b.end((*list)[i]); err != nil {
				b.mu.Unlock()
				return Revoked{}, fmt.Errorf("revoke grant %s: %w", id, err)
			}
		}
		*list = slices.Delete(*list, i, i+1)
		found = true
		break
	}
	b.mu.Unlock()
	if !found {
		return Revoked{}, fmt.Errorf("revoke grant %q: %w", id, ErrUnknownGrant)
	}
	return Revoked{N: 1, Stopped: b.endGrants([]string{id})}, nil
}

// ownedBy says whether session may see and revoke h: its own session
// grants, and every grant that is no session's.
func (b *Broker) ownedBy(h *held, session string) bool {
	return session == "" || h.g.Session == "" || h.g.Session == session
}

// RevokeAll removes every grant that involves the app named subject — as
// the one asking (Subject) or the one asked for (Object: exec, select and
// data grants name the app there) — or every grant for "", invalid ones
// included. A grant whose stored copy cannot be deleted
// is kept, and the errors are joined.
func (b *Broker) RevokeAll(subject string) error {
	_, err := b.RevokeAllIn("", subject)
	return err
}

// RevokeAllIn is RevokeAll asked by client session: other sessions'
// session grants stay. It says how many grants went, and which apps'
// processes held access they gave, and were stopped.
func (b *Broker) RevokeAllIn(session, subject string) (Revoked, error) {
	b.mu.Lock()
	var errs []error
	var ids []string
	n := 0
	for _, list := range []*[]*held{&b.grants, &b.invalid} {
		var keep []*held
		for _, h := range *list {
			if !b.ownedBy(h, session) || subject != "" && h.g.Subject != subject && h.g.Object != subject {
				keep = append(keep, h)
				continue
			}
			if h.key != "" {
				if err := b.end(h); err != nil {
					errs = append(errs, fmt.Errorf("revoke grant %s: %w", h.g.ID, err))
					keep = append(keep, h)
					continue
				}
			}
			ids = append(ids, h.g.ID)
			n++
		}
		*list = keep
	}
	b.mu.Unlock()
	return Revoked{N: n, Stopped: b.endGrants(ids)}, errors.Join(errs...)
}

// AddConfigGrant holds a permanent grant written in config (Origin
// "config:<file>"). It lives in memory only — config is read again on every
// start — and counts its uses for this process. A grant for an irreversible
// kind is refused (invariant 3), as is one of unknown kind or without a
// subject; the error names the grant's Origin.
func (b *Broker) AddConfigGrant(g Grant) error {
	if g.Origin == "" {
		g.Origin = "config"
	}
	switch {
	case g.Kind == KindIrreversible:
		return fmt.Errorf("%s: grant for %q on %q: irreversible actions ask every time and cannot be granted permanently", g.Origin, g.Subject, g.Object)
	case !g.Kind.known():
		return fmt.Errorf("%s: grant of unknown kind %q", g.Origin, g.Kind)
	case g.Subject == "":
		return fmt.Errorf("%s: grant of kind %q without a subject", g.Origin, g.Kind)
	}
	g.Permanent, g.Sig, g.Invalid, g.Uses, g.LastUsed = true, "", false, 0, time.Time{}
	b.mu.Lock()
	defer b.mu.Unlock()
	_, err := b.add(g, false)
	return err
}
