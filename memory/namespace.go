package memory

import (
	"errors"
	"fmt"

	"github.com/dgraph-io/badger/v4"
)

// Namespace is one owner's confined view of the store: its interaction log
// and its plain key-value space. It cannot reach other owners' keys.
type Namespace struct {
	s      *Store
	owner  string
	prefix []byte // ownerPrefix(owner); never handed out
}

// Namespace returns the handle for owner, which must be "hub" or
// "spoke/<app>" with app matching [a-z0-9][a-z0-9_-]{0,62}.
func (s *Store) Namespace(owner string) (*Namespace, error) {
	if err := validOwner(owner); err != nil {
		return nil, err
	}
	return &Namespace{s: s, owner: owner, prefix: ownerPrefix(owner)}, nil
}

// Owner is the namespace's owner, such as "hub" or "spoke/notes".
func (n *Namespace) Owner() string { return n.owner }

func checkKey(key string) error {
	if key == "" {
		return errors.New("empty key")
	}
	return nil
}

// Get returns the value stored under key, or an error matching ErrNotFound.
func (n *Namespace) Get(key string) ([]byte, error) {
	if err := checkKey(key); err != nil {
		return nil, fmt.Errorf("get in %s: %w", n.owner, err)
	}
	var val []byte
	err := n.s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(kvKey(n.prefix, key))
		if err != nil {
			return err
		}
		val, err = item.ValueCopy(nil)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		err = ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("get %q in %s: %w", key, n.owner, err)
	}
	return val, nil
}

// Set stores val under key, replacing any previous value.
func (n *Namespace) Set(key string, val []byte) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("set in %s: %w", n.owner, err)
	}
	err := n.s.update(func(txn *badger.Txn) error {
		return txn.Set(kvKey(n.prefix, key), val)
	})
	if err != nil {
		return fmt.Errorf("set %q in %s: %w", key, n.owner, err)
	}
	return nil
}

// Delete removes key; deleting a missing key is not an error.
func (n *Namespace) Delete(key string) error {
	if err := checkKey(key); err != nil {
		return fmt.Errorf("delete in %s: %w", n.owner, err)
	}
	err := n.s.update(func(txn *badger.Txn) error {
		return txn.Delete(kvKey(n.prefix, key))
	})
	if err != nil {
		return fmt.Errorf("delete %q in %s: %w", key, n.owner, err)
	}
	return nil
}

// Keys returns the namespace's keys that begin with prefix, in byte order.
func (n *Namespace) Keys(prefix string) ([]string, error) {
	head := sub(n.prefix, subKV, 0)
	scan := kvKey(n.prefix, prefix)
	var keys []string
	err := n.s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: scan})
		defer it.Close()
		for it.Seek(scan); it.ValidForPrefix(scan); it.Next() {
			keys = append(keys, string(it.Item().Key()[len(head):]))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list keys %q in %s: %w", prefix, n.owner, err)
	}
	return keys, nil
}

// Rewrite replaces the values of keys for good: every earlier version of
// each is purged from every file of the database (as a deleted chat's
// are), then the new value is written. A key whose new value is nil is
// removed. It is for records that must lose words — the action log's
// entries of a deleted chat.
func (n *Namespace) Rewrite(vals map[string][]byte) error {
	if len(vals) == 0 {
		return nil
	}
	exact := make([][]byte, 0, len(vals))
	for key := range vals {
		if err := checkKey(key); err != nil {
			return fmt.Errorf("rewrite in %s: %w", n.owner, err)
		}
		exact = append(exact, kvKey(n.prefix, key))
	}
	if err := n.s.purge(nil, exact); err != nil {
		return fmt.Errorf("rewrite in %s: %w", n.owner, err)
	}
	for key, val := range vals {
		if val == nil {
			continue
		}
		if err := n.Set(key, val); err != nil {
			return err
		}
	}
	return nil
}
