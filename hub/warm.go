package hub

import (
	"context"
	"net/http/httptrace"
	"slices"
	"sync"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/memory"
)

// What the memory upkeep learns sits before the chat's requests in the
// planner's prompt, and before the exchanges in a spoke's: a new summary
// or fact rewrites the part of the prompt a model server has cached. So
// the upkeep that wrote one has the server read the new prefix at once
// (warm), while the person is idle, and the next turn reads only its own
// request — never the rewrite on the turn's path.

// warm has the model server read the prompt the chat's next plan (app
// "": the hub's upkeep) or the next answer of app's spoke will begin
// with. ctx is the upkeep's: its calls go where the chat's latest turn
// went. A failure costs only the next turn's speed: it is logged.
func (o *Operator) warm(ctx context.Context, app, chat string) {
	if o.opts.Vanilla || ctx.Err() != nil {
		return
	}
	st, private := o.storeFor(chat)
	if private {
		return // a private chat's prompts hold nothing of an upkeep
	}
	if app == "" {
		if !o.triagesNext(ctx) {
			o.warmPlanner(ctx, st, chat)
			return
		}
		// The next turn begins in the plain spoke's context, not with
		// the planner's prompt: its prefix is what the slot must hold.
		app = VanillaApp
	}
	sp, err := o.spoke(st, chat, app)
	if err != nil {
		return
	}
	o.bgCalls.Add(1)
	if _, err := sp.Warm(ctx, chat); err != nil && ctx.Err() == nil {
		o.log.Debug("warm a spoke's prompt", "app", app, "err", err)
	}
}

// triagesNext reports whether a chat's next turn on ctx's server begins
// with the triage, in the plain spoke's context, and not with the
// planner's prompt: in a run of plain chat, where the planner and the
// plain spoke share a runner, on a server not known to run both at once
// and with no probe due (startDraft) — one taken as running one request
// at a time, or whose probes were spent without teaching its order (as
// Ollama's default one slot can leave it). There the hub's upkeep ends by warming the plain
// spoke's prompt: the planner's would take the one slot from the
// conversation the triage and the draft read next (the turn after an
// upkeep was 3.1× the plain model's on one slot), and an app request,
// which the planner plans after the triage, reads its prompt cold either
// way.
func (o *Operator) triagesNext(ctx context.Context) bool {
	if !o.opts.Draft || o.noTriage || !o.sharesPlannersRunner(ctx) {
		return false
	}
	f := o.order.get(hostIn(ctx, o.opts.HubModel))
	if f.SideBySide || f.AppsRun {
		return false
	}
	return !mayRunTwo(f)
}

// Warm has the model server read the prompt the next plan of chat will
// begin with ("": a new chat's) before the person asks: a client calls it
// as a chat opens, so that the first request of a session reads only its
// own words, not the catalog. A private chat's is its catalog alone, as
// its plans are. It returns once the server has read it (or failed to:
// that costs only the next turn's speed). A turn that starts meanwhile
// waits for it before its plan, rather than read the same prefix again
// beside it.
func (o *Operator) Warm(ctx context.Context, chat string) {
	if o.opts.Vanilla || ctx.Err() != nil {
		return
	}
	if chat != "" {
		if st, private := o.storeFor(chat); !private {
			if _, err := st.Chat(chat); err == nil {
				o.warmPlanner(ctx, st, chat)
				return
			}
		}
	}
	in := PlanInput{Functionalities: o.catalogNow()}
	// A new chat's plan names the facts the hub holds (every chat's).
	if _, facts, err := o.plannerMemory(""); err == nil {
		in.Facts = facts
	}
	o.readPlanner(ctx, in, "")
}

// warmth is the planner's prompts being read ahead: a plan waits for
// them (they read the prefix it will begin with).
type warmth struct {
	mu   sync.Mutex
	n    int
	done chan struct{} // closed when n drops to 0
	// onWait, for tests: a plan is about to wait for a warm in flight.
	onWait func()
}

func (w *warmth) begin() func() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.n == 0 {
		w.done = make(chan struct{})
	}
	w.n++
	var once sync.Once
	return func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			if w.n--; w.n == 0 {
				close(w.done)
			}
		})
	}
}

// wait returns once no warm is in flight, or ctx ends.
func (w *warmth) wait(ctx context.Context) {
	w.mu.Lock()
	if w.n == 0 {
		w.mu.Unlock()
		return
	}
	done, onWait := w.done, w.onWait
	w.mu.Unlock()
	if onWait != nil {
		onWait()
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
}

// warmPlanner is warm for the chat's next plan: its prompt up to the
// request, as the next turn will build it.
func (o *Operator) warmPlanner(ctx context.Context, st *memory.Store, chat string) {
	ns, err := st.Namespace(hubOwner)
	if err != nil {
		return
	}
	next := uint64(1)
	if last, err := ns.Recent(chat, 1); err == nil && len(last) > 0 {
		next = last[len(last)-1].Seq + 1
	}
	in := PlanInput{Functionalities: o.catalogNow()}
	if in.History, err = o.history(ns, chat, next); err != nil {
		return
	}
	if in.Summary, in.Facts, err = o.plannerMemory(chat); err != nil {
		return
	}
	o.readPlanner(ctx, in, chat)
}

// readPlanner has the server read the planner's prompt in (a plan
// waits for it meanwhile), and notes that it did. chat ("": none) is the
// chat whose conversation is kept beside a cold read (keepBeside).
func (o *Operator) readPlanner(ctx context.Context, in PlanInput, chat string) {
	done := o.warming.begin()
	defer done()
	o.bgCalls.Add(1)
	ctx, kept := o.keepBeside(ctx, ctx, chat)
	defer kept(true)
	if _, err := o.planner.Warm(ctx, in); err != nil {
		if ctx.Err() == nil {
			o.log.Debug("warm the planner's prompt", "err", err)
		}
		return
	}
	o.plannerWasRead(hostIn(ctx, o.opts.HubModel))
}

// plannerWindowMoves reports whether the plan after turn seq lists other
// earlier requests first than seq's did: the window (Options.History)
// moves in blocks, and where it moves the next prompt does not continue
// the last one — the server would read all the requests again.
func (o *Operator) plannerWindowMoves(seq uint64) bool {
	return o.opts.History > 0 && memory.WindowStart(seq+1, o.opts.History) != memory.WindowStart(seq, o.opts.History)
}

// plannerKeepsSlot reports whether the planner's prompt keeps a slot of
// its own on ctx's server (one known to run requests side by side), so
// that what a turn appends to it — the request with what served it, after
// which the last plan's own words are not the next prompt's — is read
// there while the person is idle, and the next plan reads only its
// request. (Where the planner shares one slot with the conversation, the
// read would evict the conversation the next turn begins with.)
func (o *Operator) plannerKeepsSlot(ctx context.Context) bool {
	f := o.order.get(hostIn(ctx, o.opts.HubModel))
	return f.SideBySide && !f.serialNow()
}

// conversationGrew reports whether the plain spoke answered turn tr: its
// next prompt then holds this exchange, which the model server has not
// read as that prompt writes it. A server keeps the tokens an answer was
// written in, but the next prompt writes the answer as it was kept — a
// thinking model's thoughts dropped by its template, secrets masked, the
// tests' dubbed model's words in place of the ones it wrote — and where
// the window of earlier exchanges (Options.SpokeHistory) moves, it does
// not continue this prompt at all. Either way the next answer would read
// the exchange again, at the end of the whole conversation, before its
// first words; it is read while the person is idle instead (after a
// chat turn, or an app turn whose plan had a chat step), where the hub
// schedules for the server's cache (Options.Draft).
func (o *Operator) conversationGrew(tr *turnRun) bool {
	return o.opts.Draft && !o.opts.Vanilla && o.opts.SpokeHistory > 0 && slices.Contains(tr.servedApps(), VanillaApp)
}

// warmLater has the chat's next plan's prompt read once the person is
// idle (the memory upkeep's quiet period), where the turn did without
// the planner on a cold server. Without long-term memory there is no
// idle worker: the next plan reads it.
func (o *Operator) warmLater(turn context.Context, chat string) {
	if o.mem != nil {
		o.mem.enqueueRead(turn, "", chat, false)
	}
}

// IsWarm reports whether req is a warm call (Planner.Warm,
// spokes.Spoke.Warm): one token asked, for scripted models and the
// tests that count the calls a turn makes.
func IsWarm(req *api.ChatRequest) bool {
	n, ok := req.Options["num_predict"]
	if !ok {
		return false
	}
	switch v := n.(type) {
	case float64:
		return v == 1
	case int:
		return v == 1
	}
	return false
}

// A model server with parallel slots (Ollama's runner) gives a request
// the free slot whose tokens share the longest prefix with its prompt:
// an empty slot shares nothing, while every slot that holds a prompt
// shares the chat template's first tokens. So a planner's prompt read
// cold — the first of a serving process, the model just loaded — takes
// the slot of the conversation whose request ended last, not an empty
// one; and the next draft, finding its conversation nowhere, takes the
// planner's slot for the same reason, and the plan after it reads the
// planner's thousands of tokens cold again (a chat turn at 9× the plain
// model's, twice in a row, in runs at a person's pace). keepBeside has
// the plain spoke's prompt for chat read while the cold planner's
// holds its slot: it finds its conversation in another free slot, or
// fills an empty one, and never the planner's, which is busy. After
// both, one slot holds the planner's prompt and another the
// conversation, and each later request finds its own.

// keepBesideAfter is how long after the planner's request was written
// the plain spoke's prompt is sent: the planner's must have taken its
// slot first (a cold read lasts far longer).
const keepBesideAfter = 250 * time.Millisecond

// keepBeside returns ctx for a planner's call that may read its prompt
// cold, and a func to call once it returned: with wait, it returns once
// the plain spoke's read has too (a warm's job ends with both read); a
// turn goes on, and the read ends on its own, with the operator at the
// latest. It does nothing where the planner's prompt was read by this
// process already, on a server taken as serial or whose probes were
// spent without teaching that it runs two at once (one slot: nothing to
// keep beside, and the spoke's read would evict the planner's), where the plain spoke has a runner of its own, where the hub
// does not schedule for the cache (Options.Draft off), for no chat, or a
// private one (its prompts are read by no one later). route is the
// context the spoke's read goes under (where the turn's calls go, none
// of ctx's request hooks: the draft's count the planner's requests).
func (o *Operator) keepBeside(ctx, route context.Context, chat string) (context.Context, func(wait bool)) {
	if !o.keepsBeside(ctx, chat) {
		return ctx, func(bool) {}
	}
	st, private := o.storeFor(chat)
	if private {
		return ctx, func(bool) {}
	}
	var once sync.Once
	stop, done := make(chan struct{}), make(chan struct{})
	base := context.WithoutCancel(route)
	ctx = httptrace.WithClientTrace(ctx, &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) {
		once.Do(func() {
			o.mu.Lock()
			if o.closed {
				o.mu.Unlock()
				close(done)
				return
			}
			o.seatWG.Add(1)
			o.mu.Unlock()
			go func() {
				defer o.seatWG.Done()
				defer close(done)
				t := time.NewTimer(keepBesideAfter)
				defer t.Stop()
				select {
				case <-t.C:
				case <-stop:
					return // the planner's read ended first: it was not cold
				case <-o.life.Done():
					return
				}
				sp, err := o.spoke(st, chat, VanillaApp)
				if err != nil {
					return
				}
				wctx, cancel := context.WithCancel(base)
				defer cancel()
				defer context.AfterFunc(o.life, cancel)()
				o.bgCalls.Add(1)
				if _, err := sp.Warm(wctx, chat); err != nil && wctx.Err() == nil {
					o.log.Debug("keep the conversation beside a cold planner", "err", err)
				}
			}()
		})
	}})
	return ctx, func(wait bool) {
		close(stop)
		once.Do(func() { close(done) }) // never written: nothing started
		if wait {
			<-done
		}
	}
}

// keepsBeside reports whether a planner's call under ctx now would have
// chat's conversation read beside it (keepBeside; a private chat apart).
func (o *Operator) keepsBeside(ctx context.Context, chat string) bool {
	host := hostIn(ctx, o.opts.HubModel)
	return chat != "" && o.opts.Draft && !o.opts.Vanilla && o.plannerCold(host) && mayRunTwo(o.order.get(host)) && o.sharesPlannersRunner(ctx)
}

// plannerCold: no planner's prompt has been read on host by this
// process (no plan made, no warm).
func (o *Operator) plannerCold(host string) bool {
	_, read := o.plannerRead.Load(host)
	return !read
}

// enqueueRead queues a read of a prompt for the memory worker's idle
// time, its calls going where turn's went: app "" the planner's for
// chat's next plan — if no plan or read has read one since (warmLater),
// or whatever did (always: the next plan's prompt does not continue the
// last one's) — else app's spoke's for its next answer. It reports
// whether it queued the read: not where one is queued, or where a queued
// upkeep makes it (upkeepReads).
func (m *memorizer) enqueueRead(turn context.Context, app, chat string, always bool) bool {
	j := memJob{app: app, chat: chat, warm: true, always: always}
	if m.opts.CallsOf != nil {
		j.calls = m.opts.CallsOf(turn)
	}
	return m.add(j)
}

// upkeepReads reports whether the read j (a spoke's) is the end of an
// upkeep of the same spoke and chat already queued: what the upkeep
// writes comes before the exchanges, and it has its spoke's prompt read
// when done. The caller holds m.mu.
func (m *memorizer) upkeepReads(j memJob) bool {
	return j.warm && j.app != "" && slices.ContainsFunc(m.queue, func(q memJob) bool { return !q.warm && q.app == j.app && q.chat == j.chat })
}

// hubReadsBeside reports whether the conversation's read j is made by a
// job of the hub's for its chat, queued behind it (the hub's jobs go
// last): while the planner's prompt is cold that job reads it with the
// conversation's beside it (keepBeside). Read alone first, the
// conversation's slot would be the one the planner's takes.
func (m *memorizer) hubReadsBeside(ctx context.Context, j memJob) bool {
	if j.app != VanillaApp || !m.o.keepsBeside(ctx, j.chat) {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.ContainsFunc(m.queue, func(q memJob) bool { return q.app == "" && q.chat == j.chat })
}
