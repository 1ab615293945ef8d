package memory

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/dgraph-io/badger/v4"
)

// MaxEntities bounds the entities one LongTerm keeps: past it, PutEntities
// drops the oldest.
const MaxEntities = 512

// Summary is an owner's running summary of one chat, which a model
// rewrites after each turn.
type Summary struct {
	Chat string `json:"chat"`
	Text string `json:"text"`
	// Through is the Seq of the last interaction the summary covers.
	Through uint64    `json:"through"`
	Model   string    `json:"model,omitempty"` // the model that wrote it
	Updated time.Time `json:"updated"`
}

// Entity is one fact an owner holds: a short key ("trip.dates") and its
// value, with where and when it came from.
type Entity struct {
	Key    string    `json:"key"`
	Value  string    `json:"value"`
	Source string    `json:"source"` // "user", "travel_mate: travel.plan_trip", a model
	Chat   string    `json:"chat,omitempty"`
	Labels []string  `json:"labels,omitempty"` // data labels, e.g. medical
	Model  string    `json:"model,omitempty"`  // the model that extracted it, if any
	Time   time.Time `json:"time"`
}

// LongTerm is one owner's summaries and entities: its own
// ([Namespace.LongTerm]) or, in the hub's namespace only, the hub's record
// of one spoke ([Namespace.Record]). Its keys lie under its namespace's
// prefix, in a space that the plain Get/Set/Keys cannot reach.
type LongTerm struct {
	n    *Namespace
	head []byte // prefix | 'm', or the record's head
}

// LongTerm is the namespace's own long-term memory.
func (n *Namespace) LongTerm() *LongTerm {
	return &LongTerm{n: n, head: sub(n.prefix, subMem, 0)}
}

// Record is the hub's record of app's spoke: that spoke's summaries and
// entities as the hub keeps them, in the hub's own namespace. Only the
// hub's namespace has records.
func (n *Namespace) Record(app string) (*LongTerm, error) {
	if n.owner != hubOwner {
		return nil, fmt.Errorf("%s keeps no records: only the hub does", n.owner)
	}
	if err := validOwner("spoke/" + app); err != nil {
		return nil, err
	}
	return &LongTerm{n: n, head: recordHead(n.prefix, app)}, nil
}

// Records lists the apps the hub holds a record of, in byte order.
func (n *Namespace) Records() ([]string, error) {
	p := append(sub(n.prefix, subMem, 1), memRecord)
	var apps []string
	err := n.s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: false})
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); {
			rest := it.Item().Key()[len(p):]
			l, w := binary.Uvarint(rest)
			if w <= 0 || uint64(len(rest)-w) < l {
				it.Next()
				continue
			}
			app := string(rest[w : w+int(l)])
			apps = append(apps, app)
			next := afterPrefix(recordHead(n.prefix, app))
			if next == nil {
				break
			}
			it.Seek(next)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list records in %s: %w", n.owner, err)
	}
	return apps, nil
}

func (l *LongTerm) key(kind byte, name string) []byte {
	b := make([]byte, 0, len(l.head)+1+len(name))
	b = append(append(b, l.head...), kind)
	return append(b, name...)
}

// Summary returns the summary of chat; the error matches ErrNotFound if
// there is none.
func (l *LongTerm) Summary(chat string) (Summary, error) {
	var s Summary
	err := l.get(l.key(memSummary, chat), &s)
	if err != nil {
		return Summary{}, fmt.Errorf("summary of chat %q in %s: %w", chat, l.n.owner, err)
	}
	return s, nil
}

// SetSummary stores s as the summary of s.Chat (Updated defaults to now).
func (l *LongTerm) SetSummary(s Summary) error {
	if s.Chat == "" {
		return fmt.Errorf("set summary in %s: empty chat", l.n.owner)
	}
	if s.Updated.IsZero() {
		s.Updated = time.Now().UTC()
	}
	if err := l.put(l.key(memSummary, s.Chat), s); err != nil {
		return fmt.Errorf("set summary of chat %q in %s: %w", s.Chat, l.n.owner, err)
	}
	return nil
}

// Summaries returns every chat's summary, most recently updated first.
func (l *LongTerm) Summaries() ([]Summary, error) {
	var out []Summary
	err := l.scan(l.key(memSummary, ""), func(b []byte) error {
		var s Summary
		if err := json.Unmarshal(b, &s); err != nil {
			return fmt.Errorf("decode summary: %w", err)
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("summaries in %s: %w", l.n.owner, err)
	}
	slices.SortStableFunc(out, func(a, b Summary) int { return b.Updated.Compare(a.Updated) })
	return out, nil
}

// Entity returns the entity with key; the error matches ErrNotFound if none.
func (l *LongTerm) Entity(key string) (Entity, error) {
	var e Entity
	if err := l.get(l.key(memEntity, key), &e); err != nil {
		return Entity{}, fmt.Errorf("entity %q in %s: %w", key, l.n.owner, err)
	}
	return e, nil
}

// Entities returns every entity, by key.
func (l *LongTerm) Entities() ([]Entity, error) {
	var out []Entity
	err := l.scan(l.key(memEntity, ""), func(b []byte) error {
		var e Entity
		if err := json.Unmarshal(b, &e); err != nil {
			return fmt.Errorf("decode entity: %w", err)
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("entities in %s: %w", l.n.owner, err)
	}
	return out, nil
}

// PutEntities stores es in one write, each replacing any entity with its
// key (Time defaults to now). Past MaxEntities the oldest are dropped.
func (l *LongTerm) PutEntities(es ...Entity) error {
	if len(es) == 0 {
		return nil
	}
	now := time.Now().UTC()
	err := l.n.s.update(func(txn *badger.Txn) error {
		for _, e := range es {
			if e.Key == "" {
				return errors.New("entity with an empty key")
			}
			if e.Time.IsZero() {
				e.Time = now
			}
			val, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := txn.Set(l.key(memEntity, e.Key), val); err != nil {
				return err
			}
		}
		return l.evict(txn)
	})
	if err != nil {
		return fmt.Errorf("put entities in %s: %w", l.n.owner, err)
	}
	return nil
}

// evict drops the oldest entities past MaxEntities.
func (l *LongTerm) evict(txn *badger.Txn) error {
	p := l.key(memEntity, "")
	type aged struct {
		key []byte
		t   time.Time
	}
	n := 0
	keys := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: false})
	for keys.Seek(p); keys.ValidForPrefix(p); keys.Next() {
		n++
	}
	keys.Close()
	if n <= MaxEntities {
		return nil // counting keys is cheap; decoding them is not
	}
	var all []aged
	it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true})
	for it.Seek(p); it.ValidForPrefix(p); it.Next() {
		var e Entity
		_ = it.Item().Value(func(b []byte) error { return json.Unmarshal(b, &e) })
		all = append(all, aged{it.Item().KeyCopy(nil), e.Time})
	}
	it.Close()
	if len(all) <= MaxEntities {
		return nil
	}
	slices.SortStableFunc(all, func(a, b aged) int { return a.t.Compare(b.t) })
	for _, a := range all[:len(all)-MaxEntities] {
		if err := txn.Delete(a.key); err != nil {
			return err
		}
	}
	return nil
}

// DeleteEntity removes the entity with key; a missing one is not an error.
func (l *LongTerm) DeleteEntity(key string) error {
	err := l.n.s.update(func(txn *badger.Txn) error { return txn.Delete(l.key(memEntity, key)) })
	if err != nil {
		return fmt.Errorf("delete entity %q in %s: %w", key, l.n.owner, err)
	}
	return nil
}

// Search returns up to limit entities whose key or value holds words of
// query (case-insensitive), those matching most words first, then the
// newest. An empty query returns the newest.
func (l *LongTerm) Search(query string, limit int) ([]Entity, error) {
	all, err := l.Entities()
	if err != nil {
		return nil, err
	}
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	type hit struct {
		e     Entity
		score int
	}
	var hits []hit
	for _, e := range all {
		text := strings.ToLower(e.Key + " " + e.Value)
		score := 0
		for _, w := range words {
			if len(w) > 1 && strings.Contains(text, w) {
				score++
			}
		}
		if score > 0 || len(words) == 0 {
			hits = append(hits, hit{e, score})
		}
	}
	slices.SortStableFunc(hits, func(a, b hit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return b.e.Time.Compare(a.e.Time)
	})
	out := make([]Entity, 0, min(limit, len(hits)))
	for _, h := range hits[:min(limit, len(hits))] {
		out = append(out, h.e)
	}
	return out, nil
}

// Clear deletes every summary and entity of this LongTerm (for the
// namespace's own, not the hub's records).
func (l *LongTerm) Clear() error {
	for _, p := range [][]byte{l.key(memSummary, ""), l.key(memEntity, "")} {
		if err := l.n.s.deletePrefix(p); err != nil {
			return fmt.Errorf("clear long-term memory in %s: %w", l.n.owner, err)
		}
	}
	return nil
}

func (l *LongTerm) get(key []byte, v any) error {
	err := l.n.s.view(func(txn *badger.Txn) error {
		item, err := txn.Get(key)
		if err != nil {
			return err
		}
		return item.Value(func(b []byte) error { return json.Unmarshal(b, v) })
	})
	if errors.Is(err, badger.ErrKeyNotFound) {
		return ErrNotFound
	}
	return err
}

func (l *LongTerm) put(key []byte, v any) error {
	val, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return l.n.s.update(func(txn *badger.Txn) error { return txn.Set(key, val) })
}

func (l *LongTerm) scan(p []byte, fn func([]byte) error) error {
	return l.n.s.view(func(txn *badger.Txn) error {
		it := txn.NewIterator(badger.IteratorOptions{Prefix: p, PrefetchValues: true})
		defer it.Close()
		for it.Seek(p); it.ValidForPrefix(p); it.Next() {
			if err := it.Item().Value(fn); err != nil {
				return err
			}
		}
		return nil
	})
}
