package tui

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
)

// queue carries items from a worker goroutine to the UI loop. push never
// blocks, so a hub emit callback that pushes returns at once however slow
// the UI is; take blocks (in a Cmd, never in Update) until there is
// something to hand over, and hands over everything queued, so a fast
// stream costs one Update per batch rather than one per token.
type queue[T any] struct {
	mu     sync.Mutex
	items  []T
	closed bool
	wake   chan struct{} // one slot: "something changed"
}

func newQueue[T any]() *queue[T] {
	return &queue[T]{wake: make(chan struct{}, 1)}
}

func (q *queue[T]) push(v T) {
	q.mu.Lock()
	q.items = append(q.items, v)
	q.mu.Unlock()
	q.poke()
}

// close says no more items will come. Whatever the worker wrote before
// close is visible to the reader after take reports closed.
func (q *queue[T]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.poke()
}

func (q *queue[T]) poke() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// take waits for items or the end, and returns what is queued and whether
// the queue is closed and drained.
func (q *queue[T]) take() ([]T, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 || q.closed {
			items := q.items
			q.items = nil
			done := q.closed
			q.mu.Unlock()
			return items, done
		}
		q.mu.Unlock()
		<-q.wake
	}
}

// workers owns the goroutines the UI starts for backend work (turns and
// pulls): each has a cancel func, and shutdown cancels them all and waits.
// Update registers work (add) before returning the Cmd that starts it, so
// shutdown never misses work whose Cmd has not run yet; such a Cmd finds
// begin false and does nothing.
type workers struct {
	base context.Context
	quit chan struct{} // closed by shutdown: ends Cmds that wait on no worker

	mu       sync.Mutex
	stopping bool
	cancels  map[int]context.CancelFunc
	wg       sync.WaitGroup
}

func newWorkers(base context.Context) *workers {
	if base == nil {
		base = context.Background()
	}
	return &workers{base: base, quit: make(chan struct{}), cancels: map[int]context.CancelFunc{}}
}

// add registers work id and returns its context.
func (w *workers) add(id int) context.Context {
	ctx, cancel := context.WithCancel(w.base)
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cancels[id] = cancel
	w.wg.Add(1)
	if w.stopping {
		cancel()
	}
	return ctx
}

// begin reports whether work may start; false once shutdown has begun.
func (w *workers) begin() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return !w.stopping
}

// done marks work id finished.
func (w *workers) done(id int) {
	w.mu.Lock()
	if c, ok := w.cancels[id]; ok {
		c()
		delete(w.cancels, id)
	}
	w.mu.Unlock()
	w.wg.Done()
}

// cancel stops work id; it still reports done when its goroutine ends.
func (w *workers) cancel(id int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.cancels[id]; ok {
		c()
	}
}

// shutdown cancels all work and waits up to timeout for it to end,
// reporting whether it did.
func (w *workers) shutdown(timeout time.Duration) bool {
	w.mu.Lock()
	if !w.stopping {
		close(w.quit)
	}
	w.stopping = true
	for _, c := range w.cancels {
		c()
	}
	w.mu.Unlock()
	ended := make(chan struct{})
	go func() {
		w.wg.Wait()
		close(ended)
	}()
	select {
	case <-ended:
		return true
	case <-time.After(timeout):
		return false
	}
}

// start returns a Cmd that runs fn on its own goroutine as work id and
// then returns first(): the first message of a stream, read from fn's
// queue. fn must close its queue when it returns.
func (w *workers) start(ctx context.Context, id int, fn func(context.Context), first func() tea.Msg) tea.Cmd {
	return func() tea.Msg {
		if !w.begin() {
			w.done(id)
			return nil
		}
		go func() {
			defer w.done(id)
			fn(ctx)
		}()
		return first()
	}
}
