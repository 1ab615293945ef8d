package tui

import (
	"context"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// turnRun is one Ask or Retry in flight. The worker goroutine touches only
// events, result and err; everything else belongs to the UI loop.
type turnRun struct {
	id    int
	vid   int    // the chat view it was started from
	chat  string // empty until the chat of a first send exists
	query string
	seq   uint64 // the turn retried, or the new turn's once an event names it
	retry bool
	// fallback says why the plan fell back to the plain model ("": it did not).
	fallback string
	// drafting: the answer so far is the plain model's draft, made while
	// the hub plans (hub.EventDraft); it goes if the plan uses an app.
	drafting bool
	// private: a /private query (AskOptions.Private); its events carry
	// turn 0 and the hub keeps nothing of it. after is the last logged
	// turn of the chat when it was asked: the view keeps it there.
	private bool
	after   uint64

	events *queue[hub.Event]
	result hub.Turn // set by the worker before events closes
	err    error

	// Live state, built from events on the UI loop.
	extras     turnExtras // app calls, permissions, the results card
	answer     strings.Builder
	thinking   strings.Builder
	app        string
	status     memory.Status // pending while running
	errText    string
	cancelling bool
	started    time.Time // when it was sent
	tokens     int       // streamed answer chunks (one token each, from Ollama)
}

// turnMsg hands a batch of a run's events to Update; done says the run
// has ended and its result and err are set.
type turnMsg struct {
	id     int
	events []hub.Event
	done   bool
}

func newTurnRun(id int, chat, query string, seq uint64, retry bool) *turnRun {
	return &turnRun{id: id, chat: chat, query: query, seq: seq, retry: retry, events: newQueue[hub.Event](), status: memory.StatusPending, started: time.Now()}
}

// work is the worker's body: it asks the hub and closes the queue. emit
// only queues, so the hub's turn never waits on the UI.
func (r *turnRun) work(b Backend) func(context.Context) {
	return func(ctx context.Context) {
		defer r.events.close()
		if r.retry {
			r.result, r.err = b.Retry(ctx, r.chat, r.seq, r.events.push)
		} else {
			r.result, r.err = b.AskWith(ctx, r.chat, r.query, hub.AskOptions{Private: r.private}, r.events.push)
		}
	}
}

// wait is the Cmd that reads the next batch of events.
func (r *turnRun) wait() tea.Msg {
	evs, done := r.events.take()
	return turnMsg{id: r.id, events: evs, done: done}
}

// apply folds events into the live state and the status bar's set of
// working spokes. The started event names the turn, so the chat finds
// the hub's pending record of it by number.
func (r *turnRun) apply(evs []hub.Event, working map[string]bool) {
	for _, e := range evs {
		if e.Turn != 0 && !r.private {
			r.seq = e.Turn
		}
		if r.extras.add(e) {
			continue
		}
		switch e.Kind {
		case hub.EventPlan:
			r.drafting = false
			if e.Plan != nil {
				if apps := e.Plan.Apps(); len(apps) > 0 {
					r.app = strings.Join(apps, ", ")
				}
				if e.Plan.Fallback {
					r.fallback = fallbackWords(e.Plan.Reason)
				}
			}
		case hub.EventDraft:
			r.drafting = true
			r.answer.WriteString(e.Text)
			r.tokens++
		case hub.EventDraftWithdrawn:
			r.drafting = false
			r.answer.Reset()
			r.tokens = 0
		case hub.EventToken:
			r.drafting = false
			r.answer.WriteString(e.Text)
			r.tokens++
			if r.extras.results == nil { // the synthesis keeps the plan's apps
				r.app = e.App
			}
		case hub.EventThinking:
			r.thinking.WriteString(e.Text)
			r.app = e.App
		case hub.EventSpoke:
			working[e.App] = e.Working
			if e.Working {
				r.app = e.App
			}
		case hub.EventAnswer:
			r.status = memory.StatusOK
			r.answer.Reset()
			r.answer.WriteString(e.Text)
		case hub.EventError:
			r.status = e.Status
			if e.Err != nil {
				r.errText = e.Err.Error()
			}
			if r.answer.Len() == 0 && e.Text != "" {
				r.answer.WriteString(e.Text) // the partial answer
			}
		}
	}
}

// view is the run as the chat draws it.
func (r *turnRun) view() turnView {
	return turnView{
		Query: r.query, Answer: r.answer.String(), Thinking: r.thinking.String(),
		Status: r.status, Error: r.errText, App: r.app, Live: true, Cancelling: r.cancelling,
		Extras: &r.extras, Private: r.private, Started: r.started, Tokens: r.tokens, Fallback: r.fallback, Drafting: r.drafting,
	}
}

// fallbackWords is what a turn says when the planner's output was
// unusable and the plain model answered instead.
func fallbackWords(reason string) string {
	s := "the planner's output was unusable twice, so the plain model answered, with no app"
	if reason = widget.OneLine(reason); reason != "" {
		s += " (" + reason + ")"
	}
	return s
}
