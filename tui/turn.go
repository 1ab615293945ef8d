package tui

import (
	"context"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/tui/chat"
)

// turnRun is one Ask or Retry in flight. The worker goroutine touches only
// events, result and err; everything else belongs to the UI loop.
type turnRun struct {
	*chat.Live // what the chat draws of it

	vid   int    // the chat view it was started from
	chat  string // empty until the chat of a first send exists
	retry bool
	// after is the last logged turn of the chat when a /private query was
	// asked: the view keeps it there.
	after uint64

	events *queue[hub.Event]
	result hub.Turn // set by the worker before events closes
	err    error
}

// turnMsg hands a batch of a run's events to Update; done says the run
// has ended and its result and err are set.
type turnMsg struct {
	id     int
	events []hub.Event
	done   bool
}

func newTurnRun(id int, chatID, query string, seq uint64, retry bool) *turnRun {
	return &turnRun{Live: chat.NewLive(id, query, seq), chat: chatID, retry: retry, events: newQueue[hub.Event]()}
}

// work is the worker's body: it asks the hub and closes the queue. emit
// only queues, so the hub's turn never waits on the UI.
func (r *turnRun) work(b Backend) func(context.Context) {
	return func(ctx context.Context) {
		defer r.events.close()
		if r.retry {
			r.result, r.err = b.Retry(ctx, r.chat, r.Seq, r.events.push)
		} else {
			r.result, r.err = b.AskWith(ctx, r.chat, r.Query, hub.AskOptions{Private: r.Private}, r.events.push)
		}
	}
}

// wait is the Cmd that reads the next batch of events.
func (r *turnRun) wait() tea.Msg {
	evs, done := r.events.take()
	return turnMsg{id: r.ID, events: evs, done: done}
}
