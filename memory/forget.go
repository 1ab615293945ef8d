package memory

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Owners lists the owners that hold at least one key, in byte order of
// their prefixes ("hub" and "spoke/<app>"). It looks at one key of each
// owner (or, past deleted ones, a few), never at a key's older versions,
// so its cost does not grow with how often keys were rewritten.
func (s *Store) Owners() ([]string, error) {
	var out []string
	err := s.view(func(txn *badger.Txn) error {
		all := []byte{kindNamespace}
		// Every version is an item of its own, newest first: the first
		// item of a key says whether it is live, and a Seek skips the
		// key's older versions without stepping over them one by one.
		it := txn.NewIterator(badger.IteratorOptions{Prefix: all, AllVersions: true})
		defer it.Close()
		it.Seek(all)
		for it.ValidForPrefix(all) {
			item := it.Item()
			op := ownerAt(item.Key())
			if op == nil || item.IsDeletedOrExpired() {
				it.Seek(append(item.KeyCopy(nil), 0))
				continue
			}
			out = append(out, string(op[2:]))
			next := afterPrefix(op)
			if next == nil {
				break
			}
			it.Seek(next)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list memory owners: %w", err)
	}
	return out, nil
}

// DeleteOwner deletes a spoke's namespace entirely — its interaction logs,
// its long-term memory and its app's own data — in batches of writes.
// The hub's namespace cannot be deleted this way (it holds the chat index,
// the grants and the action log): clear its LongTerm instead. Callers stop
// the owner's spokes first; writes made while it runs may survive it.
func (s *Store) DeleteOwner(owner string) error {
	if err := validOwner(owner); err != nil {
		return err
	}
	if owner == hubOwner {
		return errors.New("the hub's namespace cannot be deleted: clear its long-term memory instead")
	}
	if err := s.deletePrefix(ownerPrefix(owner)); err != nil {
		return fmt.Errorf("delete %s: %w", owner, err)
	}
	return nil
}

// deletePrefix removes every key with prefix p for good (see purge).
func (s *Store) deletePrefix(p []byte) error { return s.purge([][]byte{p}, nil) }

// Remove deletes one interaction of chat; a missing one is not an error.
func (n *Namespace) Remove(chat string, seq uint64) error {
	key := logKey(chatLogPrefix(n.prefix, chat), seq)
	if err := n.s.update(func(txn *badger.Txn) error { return txn.Delete(key) }); err != nil {
		return fmt.Errorf("remove interaction %d of chat %q in %s: %w", seq, chat, n.owner, err)
	}
	return nil
}

// chatMemoryKeys returns the long-term keys that belong to chat id in every
// namespace: its summaries (own and the hub's records) and the entities
// extracted from it. The caller holds s.mu.
func (s *Store) chatMemoryKeys(id string) ([][]byte, error) {
	var keys [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		eachOwner(txn, func(it *badger.Iterator, op []byte) bool {
			mp := sub(op, subMem, 0)
			for it.Seek(mp); it.ValidForPrefix(mp); it.Next() {
				if chatOfMemoryKey(it.Item(), len(mp)) == id {
					keys = append(keys, it.Item().KeyCopy(nil))
				}
			}
			return true
		})
		return nil
	})
	return keys, err
}

// chatOfMemoryKey is the chat a long-term item belongs to ("" if none):
// a summary's key names it, an entity's value does.
func chatOfMemoryKey(item *badger.Item, at int) string {
	k := item.Key()
	if len(k) <= at {
		return ""
	}
	if k[at] == memRecord {
		l, w := binary.Uvarint(k[at+1:])
		at += 1 + w + int(l)
		if w <= 0 || len(k) <= at {
			return ""
		}
	}
	switch k[at] {
	case memSummary:
		return string(k[at+1:])
	case memEntity:
		var e struct {
			Chat string `json:"chat"`
		}
		_ = item.Value(func(b []byte) error { return json.Unmarshal(b, &e) })
		return e.Chat
	}
	return ""
}
