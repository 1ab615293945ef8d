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
	Chat    string `json:"chat,omitempty"` // the chat it is about (NoteIn)
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
// logEntries is how many entries of a change set the action log keeps.
const logEntries = 200

func (b *Broker) record(e Entry) error {
	b.logMu.Lock()
	defer b.logMu.Unlock()
	e.Seq = b.seq + 1
	e.Time = b.now()
	if e.Request.Changes != nil {
		// a set's every diff line would make the log grow with what an
		// app writes: the log keeps what was decided, in brief
		e.Request.Changes = e.Request.Changes.Brief(logEntries)
	}
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

// NoteIn appends a note about chat to the action log: deleting the chat
// takes its detail out (ForgetChat).
func (b *Broker) NoteIn(chat, kind, subject, detail string) error {
	return b.record(Entry{Note: &Note{Kind: kind, Subject: subject, Detail: detail, Chat: chat}})
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

// Rewriter is a Store that can replace values for good (memory.Namespace):
// no earlier version of them stays anywhere on disk.
type Rewriter interface {
	Rewrite(vals map[string][]byte) error
}

// forgotten is what stands in an entry for the words of a deleted chat.
const forgotten = "(deleted with its chat)"

// ForgetChat takes the words of chat out of the action log: each entry
// of a request made in it, and each note about it, keeps what was asked
// and decided (kind, who, what, when, the answer) and loses its
// arguments, detail, provenance, the app's explanation and the notes —
// the hub's warning (which quotes values), rewritten for good when the
// Store can (Rewriter), else overwritten.
func (b *Broker) ForgetChat(chat string) error {
	if chat == "" {
		return nil
	}
	b.logMu.Lock()
	defer b.logMu.Unlock()
	if b.store == nil {
		for i := range b.entries {
			b.entries[i] = redacted(b.entries[i], chat)
		}
		return nil
	}
	keys, err := b.store.Keys(actionPrefix)
	if err != nil {
		return fmt.Errorf("list action log: %w", err)
	}
	vals := map[string][]byte{}
	for _, k := range keys {
		raw, err := b.store.Get(k)
		if b.isNotFound(err) {
			continue
		}
		if err != nil {
			return fmt.Errorf("read action log: %w", err)
		}
		var e Entry
		if json.Unmarshal(raw, &e) != nil || !e.about(chat) {
			continue
		}
		val, err := json.Marshal(redacted(e, chat))
		if err != nil {
			return err
		}
		vals[k] = val
	}
	if len(vals) == 0 {
		return nil
	}
	if rw, ok := b.store.(Rewriter); ok {
		return rw.Rewrite(vals)
	}
	for k, v := range vals {
		if err := b.store.Set(k, v); err != nil {
			return err
		}
	}
	return nil
}

// about says whether e records a request of chat, or a note about it.
func (e Entry) about(chat string) bool {
	return e.Request.Chat == chat || e.Note != nil && e.Note.Chat == chat
}

// redacted is e without the words of chat.
func redacted(e Entry, chat string) Entry {
	if !e.about(chat) {
		return e
	}
	if e.Note != nil {
		n := *e.Note
		n.Detail = forgotten
		e.Note = &n
	}
	if e.Request.Chat == chat {
		r := &e.Request
		r.Args, r.Provenance, r.Explain = nil, nil, ""
		r.Detail, r.Warning = forgotten, forgotten
		e.Decision.Note = ""
		e.Decision.Caveats.Args = nil
	}
	return e
}
