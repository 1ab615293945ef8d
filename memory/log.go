package memory

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Status is where an interaction stands.
type Status string

// The statuses of an interaction.
const (
	StatusPending   Status = "pending"
	StatusOK        Status = "ok"
	StatusCut       Status = "cut"
	StatusCancelled Status = "cancelled"
	StatusError     Status = "error"
)

// Usage is what answering an interaction cost.
type Usage struct {
	Calls        int           `json:"calls"`
	PromptTokens int           `json:"prompt_tokens"`
	EvalTokens   int           `json:"eval_tokens"`
	Duration     time.Duration `json:"duration_ns"`
}

// Interaction is one exchange in a namespace's log for a chat.
type Interaction struct {
	Seq     uint64          `json:"seq"`
	Chat    string          `json:"chat"`
	Input   string          `json:"input"`
	Output  string          `json:"output"`
	Status  Status          `json:"status"`
	Error   string          `json:"error,omitempty"`
	Meta    json.RawMessage `json:"meta,omitempty"` // owner-specific, e.g. the hub's plan
	Usage   Usage           `json:"usage"`
	Started time.Time       `json:"started"`
	Ended   time.Time       `json:"ended,omitzero"`
}

// Append stores it as the next interaction of chat in this namespace: it
// sets Seq (1 for a chat's first) and Chat, defaults an empty Status to
// pending and a zero Started to now, and returns what it stored. In the
// hub's namespace it also records the time as the chat's last activity
// (its Updated, see Chat), in a key of its own, never the chat record;
// spokes' appends write nothing shared, so spokes working on one chat in
// parallel never contend.
func (n *Namespace) Append(chat string, it Interaction) (Interaction, error) {
	if chat == "" {
		return Interaction{}, fmt.Errorf("append in %s: empty chat", n.owner)
	}
	cp := chatLogPrefix(n.prefix, chat)
	mu := n.s.stripe(cp)
	mu.Lock()
	defer mu.Unlock()

	now := time.Now().UTC()
	it.Chat = chat
	if it.Status == "" {
		it.Status = StatusPending
	}
	if it.Started.IsZero() {
		it.Started = now
	}
	err := n.s.update(func(txn *badger.Txn) error {
		it.Seq = lastSeq(txn, cp) + 1
		val, err := json.Marshal(it)
		if err != nil {
			return err
		}
		if err := txn.Set(logKey(cp, it.Seq), val); err != nil {
			return err
		}
		if n.owner != hubOwner {
			return nil
		}
		return txn.Set(activeKey(chat), activeValue(now))
	})
	if err != nil {
		return Interaction{}, fmt.Errorf("append to chat %q in %s: %w", chat, n.owner, err)
	}
	return it, nil
}

// Update overwrites the stored interaction with the same Chat and Seq; the
// error matches ErrNotFound if there is none.
func (n *Namespace) Update(it Interaction) error {
	key := logKey(chatLogPrefix(n.prefix, it.Chat), it.Seq)
	err := n.s.update(func(txn *badger.Txn) error {
		if _, err := txn.Get(key); err != nil {
			return err
		}
		val, err := json.Marshal(it)
		if err != nil {
			return err
		}
		return txn.Set(key, val)
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		err = ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("update interaction %d of chat %q in %s: %w", it.Seq, it.Chat, n.owner, err)
	}
	return nil
}

// Interaction returns chat's interaction seq in this namespace, read by
// its key; the error matches ErrNotFound if there is none.
func (n *Namespace) Interaction(chat string, seq uint64) (Interaction, error) {
	key := logKey(chatLogPrefix(n.prefix, chat), seq)
	var v Interaction
	err := n.s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		v, err = decodeInteraction(item)
		return err
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		err = ErrNotFound
	}
	if err != nil {
		return Interaction{}, fmt.Errorf("read interaction %d of chat %q in %s: %w", seq, chat, n.owner, err)
	}
	return v, nil
}

// Interactions returns all of chat's interactions in this namespace, by
// ascending Seq.
func (n *Namespace) Interactions(chat string) ([]Interaction, error) {
	cp := chatLogPrefix(n.prefix, chat)
	var out []Interaction
	err := n.s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: cp})
		defer it.Close()
		for it.Seek(cp); it.ValidForPrefix(cp); it.Next() {
			v, err := decodeInteraction(it.Item())
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read chat %q in %s: %w", chat, n.owner, err)
	}
	return out, nil
}

// Recent returns chat's last limit interactions by ascending Seq, reading
// the log backwards from its end so that the cost does not grow with it.
func (n *Namespace) Recent(chat string, limit int) ([]Interaction, error) {
	out, _, err := n.Before(chat, 0, limit)
	return out, err
}

// Before returns up to limit interactions of chat with Seq below before
// (before 0: from the end), by ascending Seq, reading the log backwards so
// that the cost does not grow with the chat; more reports whether older
// ones remain.
func (n *Namespace) Before(chat string, before uint64, limit int) (out []Interaction, more bool, err error) {
	if limit <= 0 {
		return nil, false, nil
	}
	cp := chatLogPrefix(n.prefix, chat)
	start := lastKeyOf(cp)
	if before > 0 {
		start = logKey(cp, before-1)
	}
	err = n.s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: cp, Reverse: true})
		defer it.Close()
		for it.Seek(start); it.ValidForPrefix(cp); it.Next() {
			if len(out) == limit {
				more = true
				return nil
			}
			v, err := decodeInteraction(it.Item())
			if err != nil {
				return err
			}
			out = append(out, v)
		}
		return nil
	})
	if err != nil {
		return nil, false, fmt.Errorf("read chat %q in %s: %w", chat, n.owner, err)
	}
	slices.Reverse(out)
	return out, more, nil
}

// lastSeq is the highest sequence number stored under the chat log prefix,
// or 0 if the chat has none.
func lastSeq(txn *badger.Txn, cp []byte) uint64 {
	it := txn.NewIterator(badger.IteratorOptions{Prefix: cp, Reverse: true})
	defer it.Close()
	it.Seek(lastKeyOf(cp))
	if !it.ValidForPrefix(cp) {
		return 0
	}
	return seqOf(it.Item().Key())
}

func decodeInteraction(item *badger.Item) (Interaction, error) {
	var v Interaction
	err := item.Value(func(b []byte) error { return json.Unmarshal(b, &v) })
	if err != nil {
		return Interaction{}, fmt.Errorf("decode interaction: %w", err)
	}
	return v, nil
}

// WindowStart is the Seq of the first of a chat's earlier interactions a
// model's context shows, at most n of them, before the one whose Seq is
// next: the window's first Seq moves in blocks of half of n (n/2+1 to n
// are shown once a chat is longer than n), so that a context which lists
// them, oldest first, is the last one's continued — read from the model
// server's prompt cache — at all but one turn in n/2, not rewritten from
// its first entry at every turn.
func WindowStart(next uint64, n int) uint64 {
	if n <= 0 || next <= uint64(n)+1 {
		return 1
	}
	step := uint64(max(n/2, 1))
	low := next - uint64(n) // the first Seq that keeps n of them
	return 1 + (low-1+step-1)/step*step
}
