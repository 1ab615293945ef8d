package permissions

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// The ledger keeps a stored grant from coming back. A signature shows a
// grant's bytes were written by bulkhead, but not that they are its
// latest: a copy taken before a use (more uses left), or before the
// grant was spent or revoked, still verifies. So each write of a grant
// carries the next generation (Grant.Gen, signed with it), and the
// ledger records, signed, the current generation of every stored grant
// or that it ended:
//
//	ledger/<id> = "<gen>.<sig>" or "ended.<sig>"
//
// It is written before the grant, so a crash between the two leaves a
// grant the ledger does not vouch for (refused, and asked again), never
// an old one that counts. At load, a grant whose generation is not the
// ledger's, or that the ledger says ended, or that has a generation and
// no entry, is kept as invalid and never consulted. A grant stored
// before the ledger (generation 0) is taken, and written again under it,
// only while the store holds no ledger at all; once it does, such a grant
// is an old copy written back. What signing and the ledger cannot stop: a whole older
// copy of the store put back, ledger and all, by someone who can write
// the data directory (and so read the key).

const ledgerPrefix = "ledger/"

const ledgerEnded = "ended"

// ledgerSig signs one ledger entry.
func ledgerSig(key []byte, id, state string) string {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(sigDomain + " ledger\x00" + id + "\x00" + state))
	return hex.EncodeToString(m.Sum(nil))
}

// ledgerEpoch marks that the store has a ledger: it is written with the
// first entry and never removed, so that removing a grant's entry does
// not make the store look as if it had never had one.
const ledgerEpoch = ledgerPrefix + ".epoch"

// setLedger records state (a generation, or ledgerEnded) for grant id.
func (b *Broker) setLedger(id, state string) error {
	if _, err := b.store.Get(ledgerEpoch); b.isNotFound(err) {
		if err := b.store.Set(ledgerEpoch, []byte(ledgerSig(b.key, ".epoch", "1"))); err != nil {
			return fmt.Errorf("record the grant ledger: %w", err)
		}
	}
	if err := b.store.Set(ledgerPrefix+id, []byte(state+"."+ledgerSig(b.key, id, state))); err != nil {
		return fmt.Errorf("record grant %s in the ledger: %w", id, err)
	}
	return nil
}

// ledgerState is what the ledger says of grant id: "" with no entry, or
// an entry whose signature does not verify ("forged").
func (b *Broker) ledgerState(id string) (string, error) {
	raw, err := b.store.Get(ledgerPrefix + id)
	if b.isNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	state, sig, ok := strings.Cut(string(raw), ".")
	if !ok {
		return "forged", nil
	}
	got, err1 := hex.DecodeString(sig)
	want, _ := hex.DecodeString(ledgerSig(b.key, id, state))
	if err1 != nil || !hmac.Equal(got, want) {
		return "forged", nil
	}
	return state, nil
}

// current checks a stored grant against the ledger: why it is not the
// grant's latest write, or "" when it is. legacy is a grant from before
// the ledger, to be written again under it; hadLedger says whether the
// store held a ledger when the grants were loaded.
func (b *Broker) current(g Grant, hadLedger bool) (why string, legacy bool, err error) {
	state, err := b.ledgerState(g.ID)
	if err != nil {
		return "", false, err
	}
	switch {
	case state == "" && g.Gen == 0:
		// From before the ledger — only while the store holds no ledger
		// at all: once there is one, a grant without a generation is an
		// old copy written back (its entry removed with it).
		if hadLedger {
			return "from before the grant ledger, while the store has one (written back)", false, nil
		}
		return "", true, nil
	case state == "":
		return "not in the grant ledger (written back, or the ledger was removed)", false, nil
	case state == ledgerEnded:
		return "spent or revoked, then written back", false, nil
	case state == "forged":
		return "its ledger entry does not verify", false, nil
	case state != strconv.FormatUint(g.Gen, 10):
		return fmt.Sprintf("an earlier copy (generation %d; the ledger's is %s) written back", g.Gen, state), false, nil
	}
	return "", false, nil
}
