package hub

import (
	"context"
	"net/http/httptrace"
	"strings"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// An answerDraft is the plain answer the hub starts while its planner plans
// (Options.Draft): the vanilla spoke's answer to the request, with the
// context a chat step would give it — the user's words and the vanilla
// spoke's own memory, nothing any app wrote. Its pieces are sent as
// EventDraft while the plan is pending. When the plan is plain chat the
// draft is kept: it is the turn's answer, its pieces from then on are
// EventToken, and it is logged in the vanilla spoke's memory as a chat
// step's answer would be. Otherwise it is withdrawn (EventDraftWithdrawn
// when pieces were sent), cancelled, and leaves nothing behind.
//
// The planner's request is sent first and the draft's only once it is
// written, so a server that runs one request at a time plans first and
// drops a withdrawn draft before it starts; with parallel slots
// (OLLAMA_NUM_PARALLEL ≥ 2) the two run side by side and a plain chat
// turn's first words come as fast as the plain model's.
type answerDraft struct {
	tr     *turnRun
	sp     *spokes.Spoke
	task   spokes.Task
	cancel context.CancelFunc
	start  chan struct{} // closed when the answerDraft may start
	once   sync.Once
	done   chan struct{}

	mu       sync.Mutex
	state    draftState
	sent     bool            // a answerDraft piece was emitted
	thinking strings.Builder // thinking before the answerDraft was kept
	res      spokes.Result
	err      error
}

type draftState int

const (
	drafting draftState = iota
	kept
	withdrawn
)

// draftDelay bounds how long a draft waits for the planner's request to
// be written (a model client that is not HTTP never says).
const draftDelay = 30 * time.Millisecond

// startDraft starts the draft of tr's answer, and returns the context the
// planner must plan in (it tells the draft when the planner's request is
// written). nil when there is no vanilla spoke to draft with.
func (o *Operator) startDraft(ctx context.Context, tr *turnRun) (*answerDraft, context.Context) {
	sp, err := o.spokeFor(tr, VanillaApp)
	if err != nil {
		return nil, ctx
	}
	dctx, cancel := context.WithCancel(ctx)
	d := &answerDraft{tr: tr, sp: sp, cancel: cancel, start: make(chan struct{}), done: make(chan struct{})}
	d.task = spokes.Task{Chat: tr.chat, Query: tr.query, Functionality: ChatFunctionality, Fresh: tr.fresh, NoLog: true, OnChunk: d.chunk}
	go func() {
		defer close(d.done)
		t := time.NewTimer(draftDelay)
		defer t.Stop()
		select {
		case <-d.start:
		case <-t.C:
		case <-dctx.Done():
			d.mu.Lock()
			d.err = dctx.Err()
			d.mu.Unlock()
			return
		}
		res, err := sp.Do(dctx, d.task)
		d.mu.Lock()
		d.res, d.err = res, err
		d.mu.Unlock()
	}()
	pctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { d.go_() },
	})
	return d, pctx
}

// go_ lets the draft start (once).
func (d *answerDraft) go_() { d.once.Do(func() { close(d.start) }) }

func (d *answerDraft) chunk(c llm.Chunk) {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch d.state {
	case drafting:
		d.thinking.WriteString(c.Thinking)
		if c.Content != "" {
			d.sent = true
			d.tr.emit(Event{Kind: EventDraft, App: VanillaApp, Text: c.Content})
		}
	case kept:
		if c.Thinking != "" {
			d.tr.emit(Event{Kind: EventThinking, App: VanillaApp, Text: c.Thinking})
		}
		if c.Content != "" {
			d.tr.emit(Event{Kind: EventToken, App: VanillaApp, Text: c.Content})
		}
	}
}

// keeps reports whether plan is one the draft answers: plain chat, with
// no entity it needs shared.
func keeps(plan Plan) bool {
	for _, s := range plan.Steps {
		if s.App != VanillaApp || len(s.Needs) > 0 {
			return false
		}
	}
	return len(plan.Steps) > 0
}

// keep makes the draft the turn's answer: it waits for it, and logs it in
// the vanilla spoke's memory as a chat step's answer.
func (d *answerDraft) keep(ctx context.Context, o *Operator) (spokes.Result, error) {
	d.mu.Lock()
	d.state = kept
	if th := d.thinking.String(); th != "" {
		d.tr.emit(Event{Kind: EventThinking, App: VanillaApp, Text: th})
	}
	d.mu.Unlock()
	d.go_()
	o.setWorking(VanillaApp, +1)
	d.tr.emit(Event{Kind: EventSpoke, App: VanillaApp, Working: true})
	defer func() {
		o.setWorking(VanillaApp, -1)
		d.tr.emit(Event{Kind: EventSpoke, App: VanillaApp, Working: false})
	}()
	<-d.done
	d.mu.Lock()
	res, err := d.res, d.err
	d.mu.Unlock()
	if d.tr.fresh {
		// A private query leaves nothing in the spoke's memory, as its
		// chat step would not (NoLog).
		return res, err
	}
	res, err = d.sp.Record(ctx, d.task, res, err)
	if res.Logged != 0 {
		d.tr.serve(VanillaApp)
	}
	return res, err
}

// withdraw cancels the draft and says so if any of it was sent; it
// returns what the draft cost.
func (d *answerDraft) withdraw() llm.Usage {
	d.mu.Lock()
	d.state = withdrawn
	sent := d.sent
	d.mu.Unlock()
	d.cancel()
	<-d.done
	if sent {
		d.tr.emit(Event{Kind: EventDraftWithdrawn, App: VanillaApp})
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.res.Usage
}
