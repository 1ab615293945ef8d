package permissions

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// actionPrefix is where the action log lives in the Store:
// actions/<seq, 20 digits>, so byte order is log order.
const actionPrefix = "actions/"

// Entry is one line of the action log: a request and its decision, or a
// note the hub added.
type Entry struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Request  Request   `json:"request,omitzero"`
	Decision Decision  `json:"decision,omitzero"`
	Note     *Note     `json:"note,omitempty"` // set on notes, which have no request
}

// Note is something the hub wants on the record that is not a request:
// "plan fallback", "masked instruction-like text", an off-plan read.
type Note struct {
	Kind    string `json:"kind"`
	Subject string `json:"subject,omitempty"`
	Detail  string `json:"detail,omitempty"`
}

func actionKey(seq uint64) string {
	return fmt.Sprintf("%s%020d", actionPrefix, seq)
}

// loadSeq continues the log's numbering after the last stored entry.
func (b *Broker) loadSeq() error {
	keys, err := b.store.Keys(actionPrefix)
	if err != nil {
		return fmt.Errorf("list action log: %w", err)
	}
	if len(keys) == 0 {
		return nil
	}
	last := keys[len(keys)-1]
	seq, err := strconv.ParseUint(strings.TrimPrefix(last, actionPrefix), 10, 64)
	if err != nil {
		return fmt.Errorf("action log key %q: %w", last, err)
	}
	b.seq = seq
	return nil
}

// record numbers e and appends it to the log.
func (b *Broker) record(e Entry) error {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	e.Seq = b.seq + 1
	e.Time = b.now()
	if b.store == nil {
		b.seq = e.Seq
		b.entries = append(b.entries, e)
		return nil
	}
	val, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("encode action log entry: %w", err)
	}
	if err := b.store.Set(actionKey(e.Seq), val); err != nil {
		return fmt.Errorf("write action log: %w", err)
	}
	b.seq = e.Seq
	return nil
}

// Note appends a note to the action log.
func (b *Broker) Note(kind, subject, detail string) error {
	return b.record(Entry{Note: &Note{Kind: kind, Subject: subject, Detail: detail}})
}

// Actions returns the action log, oldest first: from the Store, so earlier
// runs are included, or from memory when there is no Store.
func (b *Broker) Actions() ([]Entry, error) {
	if b.store == nil {
		b.logMu.Lock()
		defer b.logMu.Unlock()
		return slices.Clone(b.entries), nil
	}
	keys, err := b.store.Keys(actionPrefix)
	if err != nil {
		return nil, fmt.Errorf("list action log: %w", err)
	}
	out := make([]Entry, 0, len(keys))
	for _, k := range keys {
		raw, err := b.store.Get(k)
		if b.isNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read action log: %w", err)
		}
		var e Entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("action log entry %s: %w", k, err)
		}
		out = append(out, e)
	}
	return out, nil
}
