package memory

import (
	"bytes"
	"fmt"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// purge removes for good every key that begins with one of prefixes and
// every key of exact — every version of each, from every file of the
// database — so that no scan of the data directory, decoded or not,
// finds them after it returns.
//
// A delete alone only writes tombstones: the old values stay in the table
// files until a compaction happens to merge them away. purge uses badger's
// DropPrefix instead, which flushes the memtable (its write-ahead file is
// then removed) and rewrites every table that holds one of the prefixes
// without them. A key of exact is dropped as a prefix too, so the live
// keys that merely begin with it (an entity "trip" beside "trip.dates")
// are read first and written back after. DropPrefix only drops a prefix
// that still holds a live key: purge runs before any delete of the same
// keys, never after.
//
// purge holds the store's lock for writing: no other read or write runs
// while tables are rewritten (DropPrefix would fail concurrent writes).
// Its cost grows with the size of the tables that hold the keys, not with
// the number of keys; the package doc gives figures. An ephemeral store
// deletes the keys (nothing of it is on disk).
func (s *Store) purge(prefixes, exact [][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if len(prefixes)+len(exact) == 0 {
		return nil
	}
	if s.ephemeral {
		return s.purgeEphemeral(prefixes, exact)
	}
	gone := func(k []byte) bool {
		for _, p := range prefixes {
			if bytes.HasPrefix(k, p) {
				return true
			}
		}
		for _, e := range exact {
			if bytes.Equal(k, e) {
				return true
			}
		}
		return false
	}
	type keptKey struct {
		key, val []byte
		meta     byte
		expires  uint64
	}
	var keep []keptKey
	err := s.db.View(func(txn *badger.Txn) error {
		for _, e := range exact {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: e, PrefetchValues: true})
			for it.Seek(e); it.ValidForPrefix(e); it.Next() {
				item := it.Item()
				if gone(item.Key()) {
					continue
				}
				val, err := item.ValueCopy(nil)
				if err != nil {
					it.Close()
					return err
				}
				keep = append(keep, keptKey{item.KeyCopy(nil), val, item.UserMeta(), item.ExpiresAt()})
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("purge: read the keys to keep: %w", err)
	}
	start := time.Now()
	all := append(append([][]byte{}, prefixes...), exact...)
	if err := s.db.DropPrefix(all...); err != nil {
		return fmt.Errorf("purge: %w", err)
	}
	for len(keep) > 0 {
		batch := keep[:min(len(keep), deleteBatch)]
		keep = keep[len(batch):]
		err := s.db.Update(func(txn *badger.Txn) error {
			for _, k := range batch {
				e := badger.NewEntry(k.key, k.val).WithMeta(k.meta)
				e.ExpiresAt = k.expires
				if err := txn.SetEntry(e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("purge: write back the keys beside it: %w", err)
		}
	}
	s.purges.Add(1)
	s.log.Info("memory: purged", "prefixes", len(prefixes), "keys", len(exact), "took", time.Since(start))
	return nil
}

// purgeEphemeral deletes what purge would drop, in an in-memory store.
func (s *Store) purgeEphemeral(prefixes, exact [][]byte) error {
	keys := append([][]byte{}, exact...)
	err := s.db.View(func(txn *badger.Txn) error {
		for _, p := range prefixes {
			it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: false})
			for it.Seek(p); it.ValidForPrefix(p); it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			it.Close()
		}
		return nil
	})
	if err != nil {
		return err
	}
	for len(keys) > 0 {
		batch := keys[:min(len(keys), deleteBatch)]
		keys = keys[len(batch):]
		if err := s.db.Update(deleteAll(batch)); err != nil {
			return err
		}
	}
	return nil
}
