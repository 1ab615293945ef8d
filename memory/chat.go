package memory

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Chat is one conversation in the hub-owned chat index.
//
// Updated is the later of the record's own time (its creation, or the
// Updated an UpdateChat stored) and when the hub last logged a turn of the
// chat. The record itself is written when a chat is made or renamed, not
// per turn: a turn writes the time to a small key of its own, which Chat
// and Chats read with one lookup each. badger keeps every write of a key
// as a version until a compaction drops it, and a scan steps over them
// all, so a record rewritten every turn made listing the chats (and the
// owners) cost as much as the turns ever written.
type Chat struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Folder is the folder the chat was started in (its session's
	// workspace): "" for a chat older than the field.
	Folder  string    `json:"folder,omitempty"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
}

const (
	chatIDTime = "20060102T150405"
	// deleteBatch is how many keys one write transaction of DeleteChat
	// removes.
	deleteBatch = 1000
)

// newChatID is the creation time (UTC, to the second) and a random suffix,
// so that IDs sort by creation time: "20261129T223245-a1b2c3".
func newChatID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return now.UTC().Format(chatIDTime) + "-" + hex.EncodeToString(b[:])
}

// CreateChat adds a chat with title to the index and returns it.
func (s *Store) CreateChat(title string) (Chat, error) { return s.CreateChatIn(title, "") }

// CreateChatIn is CreateChat for a chat started in folder.
func (s *Store) CreateChatIn(title, folder string) (Chat, error) {
	now := time.Now().UTC()
	c := Chat{Title: title, Folder: folder, Created: now, Updated: now}
	err := s.update(func(txn *badger.Txn) error {
		for {
			c.ID = newChatID(now)
			_, err := txn.Get(chatKey(c.ID))
			if errors.Is(err, badger.ErrKeyNotFound) {
				break
			}
			if err != nil {
				return err
			}
		}
		return putChat(txn, c)
	})
	if err != nil {
		return Chat{}, fmt.Errorf("create chat: %w", err)
	}
	return c, nil
}

// Chat returns the chat with id; the error matches ErrNotFound if none.
func (s *Store) Chat(id string) (Chat, error) {
	c := make([]Chat, 1)
	err := s.view(func(txn *badger.Txn) error {
		var err error
		if c[0], err = getChat(txn, id); err != nil {
			return err
		}
		return withActivity(txn, c)
	})
	if err != nil {
		return Chat{}, fmt.Errorf("chat %q: %w", id, err)
	}
	return c[0], nil
}

// Chats returns every chat, most recently updated first.
func (s *Store) Chats() ([]Chat, error) {
	var out []Chat
	err := s.view(func(txn *badger.Txn) error {
		var err error
		if out, err = chatRecords(txn); err != nil {
			return err
		}
		return withActivity(txn, out)
	})
	if err != nil {
		return nil, fmt.Errorf("list chats: %w", err)
	}
	slices.SortFunc(out, func(a, b Chat) int {
		if c := b.Updated.Compare(a.Updated); c != 0 {
			return c
		}
		return strings.Compare(b.ID, a.ID)
	})
	return out, nil
}

// UpdateChat stores c's Title and Updated (now, if zero) for the chat with
// c.ID; Created is kept (Chat and Chats report the later of this Updated
// and the start of the chat's last turn). The error matches ErrNotFound
// if there is no chat.
func (s *Store) UpdateChat(c Chat) error {
	err := s.update(func(txn *badger.Txn) error {
		old, err := getChat(txn, c.ID)
		if err != nil {
			return err
		}
		old.Title = c.Title
		old.Updated = c.Updated
		if old.Updated.IsZero() {
			old.Updated = time.Now().UTC()
		}
		return putChat(txn, old)
	})
	if err != nil {
		return fmt.Errorf("update chat %q: %w", c.ID, err)
	}
	return nil
}

// DeleteChat removes the chat from the index, its interactions from every
// namespace, hub and spokes alike, and what long-term memory holds of it
// (every owner's summary of it, the hub's records' too, and the entities
// extracted from it), for good: every version of every key, from every
// file (see purge). Deleting a missing chat is not an error. Interactions
// appended while it runs may survive it; callers stop using a chat before
// deleting it.
func (s *Store) DeleteChat(id string) error {
	var prefixes, exact [][]byte
	err := s.view(func(txn *badger.Txn) error {
		eachOwner(txn, func(it *badger.Iterator, op []byte) bool {
			cp := chatLogPrefix(op, id)
			if it.Seek(cp); it.ValidForPrefix(cp) {
				prefixes = append(prefixes, cp)
			}
			return true
		})
		return nil
	})
	if err == nil {
		s.mu.RLock()
		exact, err = s.chatMemoryKeys(id)
		s.mu.RUnlock()
	}
	if err != nil {
		return fmt.Errorf("delete chat %q: %w", id, err)
	}
	// The chat goes last: a delete cut short can be run again.
	exact = append(exact, activeKey(id), chatKey(id))
	if err := s.purge(prefixes, exact); err != nil {
		return fmt.Errorf("delete chat %q: %w", id, err)
	}
	return nil
}

// chatLogKeys returns up to max keys of chat id's interactions, across all
// namespaces. It visits each namespace once: it seeks to the chat's log in
// that namespace, then past the namespace's last key. The caller holds s.mu.
func (s *Store) chatLogKeys(id string, max int) ([][]byte, error) {
	var keys [][]byte
	err := s.db.View(func(txn *badger.Txn) error {
		eachOwner(txn, func(it *badger.Iterator, op []byte) bool {
			cp := chatLogPrefix(op, id)
			for it.Seek(cp); it.ValidForPrefix(cp) && len(keys) < max; it.Next() {
				keys = append(keys, it.Item().KeyCopy(nil))
			}
			return len(keys) < max
		})
		return nil
	})
	return keys, err
}

// eachOwner visits every namespace once, in key order, handing fn the
// namespace's prefix and an iterator fn may seek within it; fn returns
// false to stop. It then seeks past the namespace's last key.
func eachOwner(txn *badger.Txn, fn func(it *badger.Iterator, prefix []byte) bool) {
	all := []byte{kindNamespace}
	it := txn.NewIterator(badger.IteratorOptions{Prefix: all, PrefetchValues: false})
	defer it.Close()
	it.Seek(all)
	for it.ValidForPrefix(all) {
		op := ownerAt(it.Item().Key())
		if op == nil {
			it.Next()
			continue
		}
		op = append([]byte(nil), op...) // the item's key is reused by Seek
		if !fn(it, op) {
			return
		}
		next := afterPrefix(op)
		if next == nil {
			return
		}
		it.Seek(next)
	}
}

// deleteAll is a write that deletes keys.
func deleteAll(keys [][]byte) func(*badger.Txn) error {
	return func(txn *badger.Txn) error {
		for _, k := range keys {
			if err := txn.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}
}

func getChat(txn *badger.Txn, id string) (Chat, error) {
	item, err := txn.Get(chatKey(id))
	if errors.Is(err, badger.ErrKeyNotFound) {
		return Chat{}, ErrNotFound
	}
	if err != nil {
		return Chat{}, err
	}
	var c Chat
	if err := item.Value(func(b []byte) error { return json.Unmarshal(b, &c) }); err != nil {
		return Chat{}, fmt.Errorf("decode chat: %w", err)
	}
	return c, nil
}

func putChat(txn *badger.Txn, c Chat) error {
	val, err := json.Marshal(c)
	if err != nil {
		return err
	}
	return txn.Set(chatKey(c.ID), val)
}

// chatRecords reads the chat index in key order.
func chatRecords(txn *badger.Txn) ([]Chat, error) {
	p := chatIndexPrefix()
	it := txn.NewIterator(badger.IteratorOptions{Prefix: p})
	defer it.Close()
	var out []Chat
	for it.Seek(p); it.ValidForPrefix(p); it.Next() {
		var c Chat
		if err := it.Item().Value(func(b []byte) error { return json.Unmarshal(b, &c) }); err != nil {
			return nil, fmt.Errorf("decode chat: %w", err)
		}
		out = append(out, c)
	}
	return out, nil
}

// withActivity moves each chat's Updated to when the hub last logged a
// turn of it, if that is later: one lookup a chat, which finds the newest
// version of the key without stepping over the older ones.
func withActivity(txn *badger.Txn, chats []Chat) error {
	for i := range chats {
		item, err := txn.Get(activeKey(chats[i].ID))
		if errors.Is(err, badger.ErrKeyNotFound) {
			continue
		}
		if err != nil {
			return err
		}
		var at time.Time
		err = item.Value(func(b []byte) error {
			if len(b) != 8 {
				return fmt.Errorf("chat %q: last activity of %d bytes", chats[i].ID, len(b))
			}
			at = time.Unix(0, int64(binary.BigEndian.Uint64(b))).UTC()
			return nil
		})
		if err != nil {
			return err
		}
		if at.After(chats[i].Updated) {
			chats[i].Updated = at
		}
	}
	return nil
}

// activeValue is what a chat's last-activity key holds: Unix nanoseconds,
// big-endian.
func activeValue(at time.Time) []byte {
	return binary.BigEndian.AppendUint64(nil, uint64(at.UnixNano()))
}
