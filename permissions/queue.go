package permissions

import (
	"context"
	"slices"
	"sync"
)

// queue hands out the one prompt turn in arrival order. A waiter that gives
// up leaves the queue; a turn handed to a waiter that has just given up is
// passed on to the next.
type queue struct {
	mu      sync.Mutex
	busy    bool            // a turn is out
	waiting []chan struct{} // FIFO; each receives the turn by a send
	pending int             // waiting + the one holding the turn
}

// acquire returns when the caller holds the turn, or with ctx's error.
func (q *queue) acquire(ctx context.Context) error {
	q.mu.Lock()
	q.pending++
	if !q.busy {
		q.busy = true
		q.mu.Unlock()
		return nil
	}
	turn := make(chan struct{}, 1)
	q.waiting = append(q.waiting, turn)
	q.mu.Unlock()

	select {
	case <-turn:
		return nil
	case <-ctx.Done():
	}
	q.mu.Lock()
	if i := slices.Index(q.waiting, turn); i >= 0 {
		q.waiting = slices.Delete(q.waiting, i, i+1)
		q.pending--
		q.mu.Unlock()
		return ctx.Err()
	}
	q.mu.Unlock()
	q.release() // the turn reached us as we gave up
	return ctx.Err()
}

// release gives the turn to the longest waiter, or frees it.
func (q *queue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending--
	if len(q.waiting) == 0 {
		q.busy = false
		return
	}
	next := q.waiting[0]
	q.waiting = slices.Delete(q.waiting, 0, 1)
	next <- struct{}{}
}

// len is the number of prompts waiting or showing.
func (q *queue) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pending
}
