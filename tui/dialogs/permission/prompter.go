package permission

import (
	"context"
	"slices"
	"sync"

	tea "charm.land/bubbletea/v2"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
)

// Prompter is the permission dialog's side of the broker: a
// perm.Prompter whose Prompt hands the request to the running UI and
// blocks until the user answers it or ctx ends. Requests wait in arrival
// order; the UI shows the first as a dialog and counts the rest in the
// status bar. Build one with NewPrompter, give it to the engine (the
// broker) and to the UI (Options.Prompter). It is safe for concurrent use.
//
// Prompt does no IO: it queues the request and pokes a channel. A Cmd the
// root model keeps armed (Wait) takes a snapshot of the queue whenever it
// changes and hands it to Update; Update answers through Answer, which
// only fills the request's one-slot reply.
type Prompter struct {
	mu     sync.Mutex
	nextID uint64
	ver    uint64 // bumped on every change to asks
	asks   []*ask // in arrival order; the first is the one showing
	wake   chan struct{}
	parked int // wait Cmds blocked with nothing new to hand over (tests)
}

// ask is one pending Prompt.
type ask struct {
	id    uint64
	req   perm.Request
	reply chan perm.Decision // one slot: the first answer wins
}

// Ask is a request as the UI sees it: its place in the queue and what
// it asks.
type Ask struct {
	ID  uint64
	Req perm.Request
}

// Queue hands the root model the Prompter's queue as of version Ver
// (Wait's answer).
type Queue struct {
	Ver  uint64
	Asks []Ask
}

var _ perm.Prompter = (*Prompter)(nil)

// NewPrompter returns a Prompter with nothing pending.
func NewPrompter() *Prompter {
	return &Prompter{wake: make(chan struct{}, 1)}
}

// Prompt puts r to the user and waits for the answer. When ctx ends first
// the request leaves the queue (its dialog closes) and Prompt returns
// ctx.Err(). The Decision carries Answer and, with a deny, Note; the
// broker sets Source.
func (p *Prompter) Prompt(ctx context.Context, r perm.Request) (perm.Decision, error) {
	if err := ctx.Err(); err != nil {
		return perm.Decision{}, err
	}
	a := &ask{req: r, reply: make(chan perm.Decision, 1)}
	p.mu.Lock()
	p.nextID++
	a.id = p.nextID
	p.asks = append(p.asks, a)
	p.changed()
	p.mu.Unlock()
	select {
	case d := <-a.reply:
		return d, nil
	case <-ctx.Done():
		p.mu.Lock()
		if i := slices.Index(p.asks, a); i >= 0 {
			p.asks = slices.Delete(p.asks, i, i+1)
			p.changed()
		}
		p.mu.Unlock()
		return perm.Decision{}, ctx.Err()
	}
}

// Pending is the number of requests waiting for an answer, the one
// showing included.
func (p *Prompter) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.asks)
}

// changed records a change and wakes the UI's wait; p.mu is held.
func (p *Prompter) changed() {
	p.ver++
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// Answer delivers d to request id and takes it off the queue; false when
// it is gone already (answered, or its ctx ended). It never blocks.
func (p *Prompter) Answer(id uint64, d perm.Decision) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := slices.IndexFunc(p.asks, func(a *ask) bool { return a.id == id })
	if i < 0 {
		return false
	}
	a := p.asks[i]
	p.asks = slices.Delete(p.asks, i, i+1)
	a.reply <- d // the slot is free: only the remover sends
	p.changed()
	return true
}

// Wait is the Cmd that hands Update the queue once its version is past
// seen. It returns nil when quit closes (the UI is shutting down).
func (p *Prompter) Wait(seen uint64, quit <-chan struct{}) tea.Cmd {
	return func() tea.Msg {
		p.mu.Lock()
		for p.ver == seen {
			p.parked++
			p.mu.Unlock()
			select {
			case <-p.wake:
			case <-quit:
				p.mu.Lock()
				p.parked--
				p.mu.Unlock()
				return nil
			}
			p.mu.Lock()
			p.parked--
		}
		msg := Queue{Ver: p.ver, Asks: make([]Ask, len(p.asks))}
		for i, a := range p.asks {
			msg.Asks[i] = Ask{ID: a.id, Req: a.req}
		}
		p.mu.Unlock()
		return msg
	}
}

// IdleAt reports whether a wait Cmd is blocked and nothing past seen is
// waiting to be handed over: the test driver's notion of idle.
func (p *Prompter) IdleAt(seen uint64) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.parked > 0 && p.ver == seen
}
