package hub

import (
	"context"
	"net/http/httptrace"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
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
// Which request goes first is learned, once per model server, and kept
// (ServerOrder, in the data directory). On a server whose order is not
// known the first draftProbes drafts go ahead as probes: a draft piece
// after the planner's first byte — the server runs the two side by side
// (parallel slots, OLLAMA_NUM_PARALLEL ≥ 2) — teaches it, however short
// the plan. Once the probes are spent, and on a server known to run one
// request at a time, the draft's request is sent once the planner's
// answer has begun, and starts only once the plan's first tokens did not
// say apps: an app request costs no draft. Once the order is learned, the
// draft goes first and the planner follows its first piece (or
// draftLead): the plain answer's first words
// come as fast as the plain model's, the plan a moment later. The order
// is given up only on evidence that the server runs one request at a
// time: the planner's first byte came after the whole draft, which had
// gone on after the planner's request for more than twice the time the
// planner takes to its first byte alone. A short draft that ends before
// the planner's first byte is no such evidence.
type answerDraft struct {
	tr        *turnRun
	sp        *spokes.Spoke
	task      spokes.Task
	cancel    context.CancelFunc
	start     chan struct{} // closed when the draft may start
	startOnce sync.Once
	done      chan struct{}
	first     chan struct{} // closed at the draft's first piece, or its end
	firstOnce sync.Once
	// reqSent is closed when the draft's request has been written (a model
	// client that is not HTTP never says: its first piece or end does).
	reqSent chan struct{}
	reqOnce sync.Once
	// follow: the draft went ahead as a probe whose planner follows its
	// request, not its first piece (lead); leadMax: how long the planner
	// waits for it at most (draftLead).
	follow  bool
	leadMax time.Duration
	// noLead: the caller shows no draft before the plan (Undrafted): the
	// planner goes at once (a probe's follows the draft's request).
	noLead bool
	// appsRun: the turn continues a run of app requests (AppsRun).
	appsRun bool
	// ahead: the draft was started before the planner (learned order);
	// wrote: the planner's request was written (its model client is HTTP);
	// host: the model server the planner's request goes to.
	ahead bool
	wrote atomic.Bool
	host  string
	// keepSlot, when set, says how long a withdrawn draft keeps its slot
	// (the turn's seat: turnSeat.holdDraft); planDone is closed when the
	// planner's call has returned.
	keepSlot     func() <-chan struct{}
	planDone     chan struct{}
	planDoneOnce sync.Once
	// serial: the server is known to run one request at a time; the
	// draft then starts only on a chat plan's first tokens (or once the
	// plan keeps it), never between the planner and its retry.
	serial bool

	mu       sync.Mutex
	state    draftState
	sent     bool            // a draft piece was emitted
	text     strings.Builder // the pieces emitted
	thinking strings.Builder // thinking before the draft was kept
	res      spokes.Result
	err      error
	// planWrote and planFirst are when the planner's first request was
	// written and its first byte came, ended when the draft ended;
	// planWrites and planFirsts count its requests written and first
	// bytes (planStreaming); planOver: its call is being ended or has
	// returned.
	planWrote, planFirst, ended time.Time
	planWrites, planFirsts      int
	planOver                    bool
	// earlyPiece: a draft piece came before the planner's first byte.
	earlyPiece bool
}

// planStreaming reports (under mu) whether the planner's current request
// has its first byte back and its call goes on. The transport reports a
// request written and its response's first byte from two goroutines, in
// either order, so each is counted: a retry's request, written, has not
// begun until its own first byte.
func (d *answerDraft) planStreaming() bool {
	return !d.planOver && d.planFirsts > 0 && d.planFirsts >= d.planWrites
}

type draftState int

const (
	drafting draftState = iota
	kept
	withdrawn
)

// draftDelay is how long a draft waits for a sign of the planner's
// request before it starts anyway (a model client that is not HTTP gives
// none); draftLead how long the planner waits for the first piece of a
// draft sent ahead. A draft that ends, or fails, ends the wait at once:
// the bound is for a draft still reading its prompt — a long chat's,
// after its upkeep, read again at the context's end. A planner sent
// while the draft reads is read in the same batches, and the draft's
// first words wait for it (at 250 ms, the sixth turn of a chat had its
// first words at 1.8–3× the plain model's: docs/benchmarks.md).
const (
	draftDelay = 30 * time.Millisecond
	draftLead  = time.Second
)

// draftProbes is how many drafts go ahead of the planner on a server whose
// order is not known: the planner then starts while the draft streams,
// and a draft piece while the planner's answer streams teaches that the
// server runs both at once. (A plan of plain chat is a few tokens: a
// draft released by its first tokens rarely writes before the planner's
// stream has ended, so the hold of a chat plan alone seldom teaches it.)
// On a server that runs one request at a time, each probe makes the
// planner wait for the whole draft — a draft an app request withdraws is
// a call more — so it is done a few times per server, and kept.
const draftProbes = 3

// probeAgain is how long after the last probe spent probes are sent
// again.
const probeAgain = 24 * time.Hour

// startDraft starts the draft of tr's answer, and returns the context the
// planner must plan in (it tells the draft when the planner's request is
// written). nil when there is no vanilla spoke to draft with.
//
// newChat: the chat's first request, which continues no run of
// requests: the draft goes as after plain chat, whatever the server's
// last plan needed.
func (o *Operator) startDraft(ctx context.Context, tr *turnRun, newChat bool) (*answerDraft, context.Context) {
	sp, err := o.spokeFor(tr, VanillaApp)
	if err != nil {
		return nil, ctx
	}
	dctx, cancel := context.WithCancel(ctx)
	host := hostIn(ctx, o.opts.HubModel)
	facts := o.order.get(host)
	// While the order is not known, the first few drafts go ahead as a
	// probe (draftProbes).
	// Requests come in runs: where the server is not known to run both
	// at once, after a plan that needed apps the draft does not go ahead
	// (nor probe) until a plan is plain chat again, so a run of app
	// requests pays no withdrawn draft but the first's — there a draft
	// ahead makes the planner wait for its whole answer, or a triage
	// comes first. Side by side it goes ahead whatever the last plan
	// needed: the planner follows its first piece, so an app request
	// pays the draft's reading of its own request (the conversation's
	// prompt is read while the person is idle, conversationGrew), and
	// the chat request after a run of apps has its first words as fast
	// as after a chat turn (after app requests, the planner's reading
	// and the plan's kind went first: 1.2–1.5× the plain model's
	// first words, runs R–U in docs/benchmarks.md).
	appsRun := facts.AppsRun && !newChat && !facts.SideBySide
	probe := !appsRun && !facts.SideBySide && mayRunTwo(facts)
	if probe {
		o.order.update(host, func(f *serverFacts) {
			if f.Probes >= draftProbes {
				f.Probes = 0 // spent long ago: sent again
			}
			f.Probes++
			f.ProbedAt = time.Now().UTC()
		})
	}
	d := &answerDraft{tr: tr, sp: sp, cancel: cancel, start: make(chan struct{}), done: make(chan struct{}), first: make(chan struct{}), reqSent: make(chan struct{}), planDone: make(chan struct{}),
		host: host, appsRun: appsRun, ahead: (facts.SideBySide && !appsRun) || probe, follow: probe && (o.order.get(host).Probes%2 == 0 || tr.undrafted), noLead: tr.undrafted, leadMax: draftLead, serial: facts.serialNow()}
	if o.draftLead > 0 {
		d.leadMax = o.draftLead
	}
	dctx = httptrace.WithClientTrace(dctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) { d.reqOnce.Do(func() { close(d.reqSent) }) },
	})
	d.task = spokes.Task{Chat: tr.chat, Query: tr.query, Functionality: ChatFunctionality, Fresh: tr.fresh, NoLog: true,
		OnChunk: func(c llm.Chunk) { d.chunk(o, c) }}
	if d.ahead {
		d.release()
	}
	go func() {
		defer close(d.done)
		defer d.firstOnce.Do(func() { close(d.first) })
		defer d.reqOnce.Do(func() { close(d.reqSent) })
		t := time.NewTimer(draftDelay)
		defer t.Stop()
		for waiting := true; waiting; {
			select {
			case <-d.start:
				waiting = false
			case <-t.C:
				// A planner whose request is on its way is waited for; a
				// model client that is not HTTP never says.
				waiting = d.wrote.Load()
			case <-dctx.Done():
				d.mu.Lock()
				d.err = dctx.Err()
				d.mu.Unlock()
				return
			}
		}
		res, err := sp.Do(dctx, d.task)
		d.mu.Lock()
		d.res, d.err, d.ended = res, err, time.Now()
		d.mu.Unlock()
	}()
	pctx := httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{
		WroteRequest: func(httptrace.WroteRequestInfo) {
			d.wrote.Store(true)
			d.mu.Lock()
			d.planWrites++
			if d.planWrote.IsZero() {
				d.planWrote = time.Now()
			}
			d.mu.Unlock()
		},
		GotFirstResponseByte: func() {
			d.mu.Lock()
			d.planFirsts++
			if d.planFirst.IsZero() {
				d.planFirst = time.Now()
			}
			d.mu.Unlock()
			// The planner's answer has begun: a server that runs one
			// request at a time is busy with it, and takes the draft
			// next — once the plan's first tokens have not said apps
			// (planText), so that an app request costs no draft at all.
		},
	})
	return d, pctx
}

// lead waits, when the draft went ahead, for its first piece (or its end,
// or draftLead): the planner's request goes after it. Every second probe's
// planner follows the draft's request by probeGap instead (follow): a
// server that runs both at once reads the two prompts together, so the
// two answers are written side by side however short the draft — where,
// waiting for its first piece, a short answer (a fast model's, a few
// dozen tokens) was written whole before the planner's request had
// crossed the server, and taught nothing. The other probes wait for the
// first piece: a server that writes the draft's first piece only after a
// short plan has been written whole teaches the order that way (chunk).
// An undrafted turn's (noLead) does not wait at all once the order is
// known, and its probes follow the draft's request.
func (d *answerDraft) lead(ctx context.Context) {
	if !d.ahead {
		return
	}
	t := time.NewTimer(d.leadMax)
	defer t.Stop()
	if d.follow {
		select {
		case <-d.reqSent:
		case <-d.first:
		case <-t.C:
			return
		case <-ctx.Done():
			return
		}
		gap := time.NewTimer(probeGap)
		defer gap.Stop()
		select {
		case <-gap.C:
		case <-d.first:
		case <-ctx.Done():
		}
		return
	}
	if d.noLead {
		return
	}
	select {
	case <-d.first:
	case <-t.C:
	case <-ctx.Done():
	}
}

// probeGap is how long a probe's planner follows the draft's request.
const probeGap = 20 * time.Millisecond

// planned is told that the planner returned. A planner that went first
// ran alone until its first byte: that time is kept. A draft that went
// ahead unlearns the order only on evidence that the server runs one
// request at a time (see answerDraft).
func (d *answerDraft) planned(o *Operator) {
	d.planDoneOnce.Do(func() { close(d.planDone) })
	d.mu.Lock()
	d.planOver = true
	wrote, first, ended, ahead := d.planWrote, d.planFirst, d.ended, d.ahead
	d.mu.Unlock()
	if wrote.IsZero() || first.IsZero() || !first.After(wrote) {
		return // (a first byte reported before the write: no time)
	}
	if !ahead {
		// The least seen: a first call's time includes loading the model.
		o.order.update(d.host, func(f *serverFacts) {
			if v := first.Sub(wrote); f.PlanFirstByte == 0 || v < f.PlanFirstByte {
				f.PlanFirstByte = v
			}
		})
		return
	}
	alone := o.order.get(d.host).PlanFirstByte
	if !ended.IsZero() && first.After(ended) && alone > 0 && ended.Sub(wrote) > 2*alone {
		o.order.update(d.host, func(f *serverFacts) { f.SideBySide, f.Serial = false, true })
	}
}

// probeWindow is how long a chat plan's planner is held, while the order
// is not known, for the draft's first piece: a server that runs two
// requests at once gives it while the planner still streams. (Not scaled
// by the planner's own time: a first call's includes loading the model.)
const probeWindow = 500 * time.Millisecond

// holdChat is told that the plan is plain chat, and says how long the
// planner's call may go on (nil: end it now). While it is not known
// whether the server runs two requests at once, the planner is held
// until the draft's first piece: a piece while the planner still streams
// teaches that it does (chunk); none within the window, while it
// streamed, that it runs one at a time. Either is kept, so only the
// first chat turn on a server pays for the lesson (up to the window).
func (d *answerDraft) holdChat(o *Operator) <-chan struct{} {
	if f := o.order.get(d.host); d.ahead || f.SideBySide || f.serialNow() {
		d.planEnds()
		return nil
	}
	window := probeWindow
	if o.probeWindow > 0 {
		window = o.probeWindow
	}
	held := make(chan struct{})
	go func() {
		defer close(held)
		defer d.planEnds()
		t := time.NewTimer(window)
		defer t.Stop()
		select {
		case <-d.first:
		case <-t.C:
			d.mu.Lock()
			streaming := d.planStreaming()
			d.mu.Unlock()
			if streaming {
				o.order.update(d.host, func(f *serverFacts) { f.Serial = true })
			}
		}
	}()
	return held
}

// planEnds is told that the planner's call is being ended (its plan is
// decided): a draft piece from now on, however soon the server serves it,
// is no evidence that it runs both at once.
func (d *answerDraft) planEnds() {
	d.mu.Lock()
	d.planOver = true
	d.mu.Unlock()
}

// hold makes the draft wait for its release however long the hub's
// first call takes (the triage: a model client that is not HTTP says
// nothing of it either).
func (d *answerDraft) hold() { d.wrote.Store(true) }

// release lets the draft start (once).
func (d *answerDraft) release() { d.startOnce.Do(func() { close(d.start) }) }

func (d *answerDraft) chunk(o *Operator, c llm.Chunk) {
	// The first piece is told of once what it teaches is learned (a hold
	// waiting for it ends the planner's call: planEnds).
	defer d.firstOnce.Do(func() { close(d.first) })
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.planFirst.IsZero() {
		d.earlyPiece = true
	}
	if !d.serial && (d.planStreaming() || d.ahead && !d.planFirst.IsZero() && (!d.follow || d.earlyPiece)) {
		// A piece of the draft while the planner's answer streams, or
		// after the planner's first byte when the draft went first (a
		// server that runs one request at a time starts the planner only
		// once the whole draft is written): the server runs them side by
		// side. Where the planner followed the draft's request, not its
		// first piece (follow), a server that runs one at a time may
		// have taken the planner first; so there a piece after the
		// planner's first byte teaches only where an earlier piece came
		// before it — the two streams interleaved, which such a server
		// never does. (Not on a server taken as serial, for serialFor:
		// its draft starts as a chat plan's first tokens come, and a
		// piece may cross the planner's end before the hub has read it.)
		o.order.update(d.host, func(f *serverFacts) { f.SideBySide, f.Serial = true, false })
	}
	switch d.state {
	case drafting:
		d.thinking.WriteString(c.Thinking)
		if c.Content != "" {
			d.sent = true
			d.text.WriteString(c.Content)
			d.tr.emit(Event{Kind: EventDraft, App: VanillaApp, By: ByAssistant, Text: c.Content})
		}
	case kept:
		if c.Thinking != "" {
			d.tr.emit(Event{Kind: EventThinking, App: VanillaApp, Text: c.Thinking})
		}
		if c.Content != "" {
			d.tr.emit(Event{Kind: EventToken, App: VanillaApp, By: ByAssistant, Text: c.Content})
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

// commit makes the draft the turn's answer; announce (the plan event) is
// emitted at that moment, so every draft piece comes before it and every
// token after it.
func (d *answerDraft) commit(announce func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.state = kept
	announce()
	if th := d.thinking.String(); th != "" {
		d.tr.emit(Event{Kind: EventThinking, App: VanillaApp, Text: th})
	}
}

// keep waits for the committed draft and logs it in the vanilla spoke's
// memory as a chat step's answer.
func (d *answerDraft) keep(ctx context.Context, o *Operator) (spokes.Result, error) {
	d.release()
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

// reFunctionality finds the functionalities a plan's JSON names so far.
var reFunctionality = regexp.MustCompile(`"functionality"\s*:\s*"([^"]*)"`)

// planText is told the planner's output as it streams: once its kind is
// apps, or it names a functionality other than chat, the plan is not
// plain chat and the draft is withdrawn at once, before it costs a whole
// answer.
func (d *answerDraft) planText(text string) {
	switch decidedKind(text) {
	case kindApps:
		d.abandon()
		return
	case kindChat:
		d.release()
		return // the kind decides: a functionality named after it is not read
	default:
		if !kindPending(text) && !d.serial {
			d.release() // a plan that does not begin with its kind
		}
	}
	for _, m := range reFunctionality.FindAllStringSubmatch(text, -1) {
		if m[1] != ChatFunctionality {
			d.abandon()
			return
		}
	}
}

// abandon withdraws the draft without waiting for it to stop: it is
// cancelled, and the clients told if any of it was sent. Once only.
func (d *answerDraft) abandon() {
	d.mu.Lock()
	if d.state != drafting {
		d.mu.Unlock()
		return
	}
	d.state = withdrawn
	sent := d.sent
	d.mu.Unlock()
	var hold <-chan struct{}
	if d.keepSlot != nil && d.holdsSlot() {
		hold = d.keepSlot()
	}
	if hold != nil {
		// Its slot is the conversation's: it is left only once the
		// turn's seat has taken the apps' (seat.go), or the plan is made.
		go func() {
			select {
			case <-hold:
			case <-d.planDone:
			case <-d.done:
			}
			d.cancel()
		}()
	} else {
		d.cancel()
	}
	if sent {
		d.tr.emit(Event{Kind: EventDraftWithdrawn, App: VanillaApp})
	}
}

// holdsSlot reports whether the draft's request is at its server and has
// not ended: it holds a slot there.
func (d *answerDraft) holdsSlot() bool {
	select {
	case <-d.done:
		return false
	case <-d.reqSent:
		return true
	default:
		return false
	}
}

// abandoned reports whether the draft was withdrawn already.
func (d *answerDraft) abandoned() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.state == withdrawn
}

// cut stops the draft of a turn that was cancelled while it was shown:
// what it wrote stays, as the turn's partial answer (the clients keep
// the pieces they have; nothing is withdrawn). A draft already withdrawn
// leaves nothing.
func (d *answerDraft) cut() (string, llm.Usage) {
	d.mu.Lock()
	text := ""
	if d.state == drafting {
		d.state = withdrawn
		text = d.text.String()
	}
	d.mu.Unlock()
	d.cancel()
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return text, d.res.Usage
}

// withdraw withdraws the draft (if planText has not already), waits for
// it to stop, and returns what it cost.
func (d *answerDraft) withdraw() llm.Usage {
	d.abandon()
	d.cancel()
	<-d.done
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.res.Usage
}
