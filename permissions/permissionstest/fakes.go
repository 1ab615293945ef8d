// Package permissionstest holds hand-written fakes for testing code that uses
// package permissions: an in-memory KV and a scripted Prompter. Both are safe
// for concurrent use.
package permissionstest

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// ErrNotFound is what KV.Get returns for a missing key; pass it as
// permissions.Options.NotFound.
var ErrNotFound = errors.New("permissionstest: key not found")

// KV is an in-memory permissions.KV. Tests may read and rewrite its raw bytes
// with Get and Set, like an attacker with write access to the store.
type KV struct {
	mu   sync.Mutex
	m    map[string][]byte
	fail error // returned by Set and Delete while set
}

var _ permissions.KV = (*KV)(nil)

// NewKV returns an empty KV.
func NewKV() *KV { return &KV{m: map[string][]byte{}} }

// Get returns a copy of the value under key, or ErrNotFound.
func (k *KV) Get(key string) ([]byte, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	v, ok := k.m[key]
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(v), nil
}

// Set stores a copy of val under key.
func (k *KV) Set(key string, val []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.fail != nil {
		return k.fail
	}
	k.m[key] = slices.Clone(val)
	return nil
}

// Delete removes key.
func (k *KV) Delete(key string) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.fail != nil {
		return k.fail
	}
	delete(k.m, key)
	return nil
}

// Keys returns the keys that begin with prefix, in byte order.
func (k *KV) Keys(prefix string) ([]string, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	var out []string
	for key := range maps.Keys(k.m) {
		if strings.HasPrefix(key, prefix) {
			out = append(out, key)
		}
	}
	slices.Sort(out)
	return out, nil
}

// FailWrites makes Set and Delete return err until called with nil.
func (k *KV) FailWrites(err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.fail = err
}

// Prompter is a scripted permissions.Prompter. Each Prompt records its
// request, then answers with the next scripted Decision, or with Answer once
// the script is used up.
//
// With Gate set, each Prompt first waits to receive from Gate (one value per
// answer), or for ctx to end; with IgnoreContext it waits for Gate alone,
// like a faulty dialog that never gives up. With Started set, each Prompt
// sends its request there before waiting.
type Prompter struct {
	Answer        permissions.Answer
	Gate          chan struct{}
	IgnoreContext bool
	Started       chan permissions.Request

	mu        sync.Mutex
	script    []permissions.Decision
	calls     []permissions.Request
	active    int
	maxActive int
}

var _ permissions.Prompter = (*Prompter)(nil)

// NewPrompter returns a Prompter that answers a.
func NewPrompter(a permissions.Answer) *Prompter { return &Prompter{Answer: a} }

// Script queues decisions to answer with, in order, before Answer.
func (p *Prompter) Script(ds ...permissions.Decision) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.script = append(p.script, ds...)
}

// Calls returns the requests prompted so far, in order.
func (p *Prompter) Calls() []permissions.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.calls)
}

// MaxActive is the most Prompt calls that ever ran at once.
func (p *Prompter) MaxActive() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.maxActive
}

// Prompt records r and answers it.
func (p *Prompter) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	p.mu.Lock()
	p.calls = append(p.calls, r)
	p.active++
	p.maxActive = max(p.maxActive, p.active)
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.active--
		p.mu.Unlock()
	}()

	done := ctx.Done()
	if p.IgnoreContext {
		done = nil
	}
	if p.Started != nil {
		select {
		case p.Started <- r:
		case <-done:
			return permissions.Decision{}, ctx.Err()
		}
	}
	if p.Gate != nil {
		select {
		case <-p.Gate:
		case <-done:
			return permissions.Decision{}, ctx.Err()
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d := permissions.Decision{Answer: p.Answer}
	if len(p.script) > 0 {
		d = p.script[0]
		p.script = p.script[1:]
	}
	if d.Choice == "" && len(r.Choices) > 0 && d.Answer != permissions.AnswerDeny {
		d.Choice = r.Choices[0] // a person who takes the first app offered
	}
	return d, nil
}
