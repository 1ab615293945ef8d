package hub

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/memory"
)

// Chat is a conversation the hub holds. A private chat lives in memory
// only: nothing of it reaches the data directory, and it is gone when the
// process ends.
type Chat struct {
	ID      string
	Title   string
	Private bool
	// Folder is the folder it was started in ("" for a chat older than
	// the field): --continue resumes the last chat of the folder it runs
	// in, and a dialog of a chat resumed in another folder names both.
	Folder  string
	Created time.Time
	Updated time.Time
}

// ErrNoChat is returned for an unknown chat id.
var ErrNoChat = errors.New("no such chat")

func chatOf(c memory.Chat, private bool) Chat {
	return Chat{ID: c.ID, Title: c.Title, Private: private, Folder: c.Folder, Created: c.Created, Updated: c.Updated}
}

// NewChat starts a conversation, private or kept on disk.
func (o *Operator) NewChat(private bool) (Chat, error) {
	st := o.store
	if private {
		var err error
		if st, err = o.ephemeralStore(); err != nil {
			return Chat{}, err
		}
	}
	c, err := st.CreateChatIn("", o.opts.Workspace)
	if err != nil {
		return Chat{}, fmt.Errorf("new chat: %w", err)
	}
	if private {
		o.mu.Lock()
		o.private[c.ID] = true
		o.mu.Unlock()
	}
	return chatOf(c, private), nil
}

// Chats lists every chat, most recently used first, private ones included.
func (o *Operator) Chats() ([]Chat, error) {
	disk, err := o.store.Chats()
	if err != nil {
		return nil, fmt.Errorf("list chats: %w", err)
	}
	var out []Chat
	if eph := o.ephemeralIfOpen(); eph != nil {
		priv, err := eph.Chats()
		if err != nil {
			return nil, fmt.Errorf("list private chats: %w", err)
		}
		for _, c := range priv {
			out = append(out, chatOf(c, true))
		}
	}
	for _, c := range disk {
		out = append(out, chatOf(c, false))
	}
	// Both lists are newest first; merge by Updated.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Updated.After(out[j-1].Updated); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out, nil
}

// Chat returns one chat.
func (o *Operator) Chat(id string) (Chat, error) {
	st, private := o.storeFor(id)
	c, err := st.Chat(id)
	if errors.Is(err, memory.ErrNotFound) {
		return Chat{}, fmt.Errorf("%w: %s", ErrNoChat, id)
	}
	if err != nil {
		return Chat{}, err
	}
	return chatOf(c, private), nil
}

// DeleteChat removes a chat, what every owner logged of it and what
// long-term memory holds of it (summaries, entities extracted from it),
// and stops its spokes; pending memory updates of it are dropped.
// A chat with a turn running is not deleted (ErrBusy): cancel it first.
func (o *Operator) DeleteChat(id string) error {
	if err := o.claim(id); err != nil {
		return err
	}
	defer o.release(id)
	o.stopSpokes(id)
	st, private := o.storeFor(id)
	del := func() error { return st.DeleteChat(id) }
	var err error
	if o.mem != nil && !private {
		// No memory update of the chat may write after it is gone.
		err = o.mem.drop(func(j memJob) bool { return j.chat == id }, del)
	} else {
		err = del()
	}
	if err != nil {
		return fmt.Errorf("delete chat %s: %w", id, err)
	}
	// Its words go from the action log too: what was asked and decided
	// stays, the arguments and the text do not.
	if !private && o.opts.Broker != nil {
		if err := o.opts.Broker.ForgetChat(id); err != nil {
			return fmt.Errorf("delete chat %s: the action log: %w", id, err)
		}
	}
	if private {
		o.mu.Lock()
		delete(o.private, id)
		delete(o.privBrokers, id)
		o.mu.Unlock()
	}
	return nil
}

// Turns returns a chat's turns, oldest first, as the hub logged them.
func (o *Operator) Turns(id string) ([]Turn, error) {
	st, _ := o.storeFor(id)
	ns, err := st.Namespace(hubOwner)
	if err != nil {
		return nil, err
	}
	its, err := ns.Interactions(id)
	if err != nil {
		return nil, fmt.Errorf("turns of %s: %w", id, err)
	}
	out := make([]Turn, len(its))
	for i, it := range its {
		out[i] = turnOf(it)
	}
	return out, nil
}

// TurnsBefore returns up to n turns of a chat with Seq below before
// (before 0: the newest), oldest first, and whether older turns remain: a
// long chat is read a page at a time, newest first, at a cost that does
// not grow with it.
func (o *Operator) TurnsBefore(id string, before uint64, n int) ([]Turn, bool, error) {
	st, _ := o.storeFor(id)
	ns, err := st.Namespace(hubOwner)
	if err != nil {
		return nil, false, err
	}
	its, more, err := ns.Before(id, before, n)
	if err != nil {
		return nil, false, fmt.Errorf("turns of %s: %w", id, err)
	}
	out := make([]Turn, len(its))
	for i, it := range its {
		out[i] = turnOf(it)
	}
	return out, more, nil
}

// titleFrom makes a chat title from its first request.
func titleFrom(query string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(query), "\n")
	r := []rune(line)
	if len(r) > 48 {
		return strings.TrimSpace(string(r[:47])) + "…"
	}
	return line
}
