package permissions

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// keySize is the length of the HMAC key in the key file.
const keySize = 32

// sigDomain opens every signed message, so a grant's signature can never be
// mistaken for a signature over anything else made with the same key.
const sigDomain = "bulkhead/permissions grant v1"

// ErrKeyMode is matched by the error NewBroker returns when the key file is
// readable or writable by anyone but its owner.
var ErrKeyMode = errors.New("grant key file is open to other users")

// canonical encodes every field of g that the signature covers, each as a
// uvarint length followed by its bytes, in a fixed order. Covered: ID, Kind,
// Subject, Object, Function, Deny, Note, Permanent, Origin, Created and all
// caveats (Expires, UsesLeft, Args sorted by name). Not covered: Sig itself,
// LastUsed and Uses (bookkeeping that changes on every use and grants
// nothing). UsesLeft is covered, so each use re-signs the grant.
func canonical(g Grant) []byte {
	var b []byte
	put := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	stamp := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.UTC().Format(time.RFC3339Nano)
	}
	put(sigDomain)
	put(g.ID)
	put(string(g.Kind))
	put(g.Subject)
	put(g.Object)
	put(g.Function)
	put(strconv.FormatBool(g.Deny))
	put(g.Note)
	put(strconv.FormatBool(g.Permanent))
	put(g.Origin)
	put(stamp(g.Created))
	put(stamp(g.Caveats.Expires))
	put(strconv.Itoa(g.Caveats.UsesLeft))
	names := make([]string, 0, len(g.Caveats.Args))
	for n := range g.Caveats.Args {
		names = append(names, n)
	}
	slices.Sort(names)
	put(strconv.Itoa(len(names)))
	for _, n := range names {
		put(n)
		put(g.Caveats.Args[n])
	}
	// Labels came later: a grant without them encodes as it always did,
	// so grants signed before still verify; one with them covers them.
	if len(g.Labels) > 0 {
		put("labels")
		put(strconv.Itoa(len(g.Labels)))
		for _, l := range g.Labels {
			put(l)
		}
	}
	// So did the generation (the ledger's, against replays).
	if g.Gen > 0 {
		put("gen")
		put(strconv.FormatUint(g.Gen, 10))
	}
	return b
}

// sign returns the hex HMAC-SHA256 of g's canonical encoding under key.
func sign(key []byte, g Grant) string {
	m := hmac.New(sha256.New, key)
	m.Write(canonical(g))
	return hex.EncodeToString(m.Sum(nil))
}

// verify reports whether g.Sig is g's signature under key.
func verify(key []byte, g Grant) bool {
	got, err := hex.DecodeString(g.Sig)
	if err != nil {
		return false
	}
	want, _ := hex.DecodeString(sign(key, g))
	return hmac.Equal(got, want)
}

// loadKey reads the HMAC key at path, creating it (32 random bytes, mode
// 0600, in a 0700 directory) if it does not exist. A key file that others
// may read or write is refused.
func loadKey(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return createKey(path)
	}
	if err != nil {
		return nil, fmt.Errorf("open grant key: %w", err)
	}
	defer f.Close()
	return readKey(f, path)
}

func readKey(f *os.File, path string) ([]byte, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat grant key: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("grant key %s is not a regular file", path)
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o, want 0600; permanent grants signed with it cannot be trusted (fix: chmod 600 %s, and revoke grants you did not make)",
			ErrKeyMode, path, perm, path)
	}
	key, err := io.ReadAll(io.LimitReader(f, keySize+1))
	if err != nil {
		return nil, fmt.Errorf("read grant key %s: %w", path, err)
	}
	if len(key) != keySize {
		return nil, fmt.Errorf("grant key %s holds %d bytes, want %d: it is damaged (remove it to make a new one; stored grants will then be reported invalid)",
			path, len(key), keySize)
	}
	return key, nil
}

// createKey writes a new key to a temporary file and links it into place,
// so a crash never leaves a short key and two processes starting at once
// end up with the same key.
func createKey(path string) ([]byte, error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create grant key directory: %w", err)
	}
	key := make([]byte, keySize)
	_, _ = rand.Read(key) // crypto/rand.Read never fails
	tmp, err := os.CreateTemp(dir, ".grant-key-*")
	if err != nil {
		return nil, fmt.Errorf("create grant key: %w", err)
	}
	defer os.Remove(tmp.Name())
	err = tmp.Chmod(0o600)
	if err == nil {
		_, err = tmp.Write(key)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write grant key: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return loadKey(path) // another process made it first
		}
		return nil, fmt.Errorf("install grant key %s: %w", path, err)
	}
	return key, nil
}
