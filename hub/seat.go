package hub

import (
	"context"
	"errors"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// A seat gives the apps' calls a slot of their own on a model server with
// parallel slots as Ollama's runner has them: each slot keeps the tokens
// it last read, and a request takes the free slot whose tokens share the
// longest prefix with its prompt (the first such slot on a tie). Three
// kinds of prompt begin apart: the planner's, the conversation's (the
// plain spoke's, its draft's and upkeep's) and the apps' (every app
// spoke's, their upkeep, the synthesis', the detector's: spokes.Preamble).
// On three slots each should keep one. An empty slot shares nothing,
// while every slot that holds a prompt shares the template's first
// tokens: a request takes an empty slot only when every other is busy.
// So on a server that has run one request at a time, or a planner beside
// a draft, the apps' first call takes the conversation's slot (or the
// planner's), and the next chat turn reads its whole conversation again.
//
// So when an app turn's plan says apps and the server is not known to
// hold the apps' slot, the hub sends a seat while the planner still
// writes its plan: the preamble alone, one token to write. Where the
// turn's draft still writes in the conversation's slot, the draft's
// stream is ended only once the seat's answer has begun (or the
// planner's call has ended): the seat takes the slot neither holds, and
// every later call of the apps goes to it. A seat that ended before the
// planner's call did is known to have taken a slot other than the
// planner's; a seat that ended after proves nothing and the next app
// turn seats again. A seat not read before the planner's call ended,
// while the draft held its slot, shows a server without a third slot
// (crowded): from then on the draft is ended at once. A plan of several
// steps ends in a synthesis, whose prompt and a spoke's would share the
// apps' slot and evict each other turn after turn: when the plan names
// its second step, the hub sends the seat again with a second one, the
// synthesis' system prompt, written while the first still holds its
// slot, so that each takes one (known when the second was written before
// the first's answer began). The server is taken to hold the slots until
// a planner's call reads its prompt at over seatCold times the best rate
// seen (the model was loaded again, or another client took a slot): the
// next app turn seats again. On a server that runs one request at a time
// (Ollama's default, where no chat turn has taught the hub so) every seat
// waits behind the planner and ends after it: two such running teach
// that the server is serial (ServerOrder.Serial, as a draft that got no
// piece beside the planner does), which stops seats for as long as it
// stops drafting ahead. A seat goes where the turn's planner goes (its
// session's model and server), carries no word of the user's or of any
// app, and is one of the turn's background calls.
type seating struct {
	mu    sync.Mutex
	hosts map[string]seatFacts
}

type seatFacts struct {
	// seated: a slot holds a seat; synth: another holds the synthesis'.
	seated, synth bool
	// crowded: a seat was not read while a draft and a planner held
	// their slots: the server has no third (a draft is ended at once).
	crowded bool
	// late counts the seats running that ended after their planner.
	late int
	// best is the planner's fastest prompt reading seen, per token.
	best time.Duration
}

// seatCold is how much slower than its best a planner's prompt reading
// must be to be read as cold (its prefix evicted): a cached planner reads
// only its request's tokens, a fraction of its prompt.
const seatCold = 3

// seatLateRuns seats running that end after their planner's call teach
// that the server runs one request at a time (as Ollama does by default:
// a seat waits behind the planner), as the draft's order does
// (ServerOrder.Serial, probed again after serialFor). A seat that ends
// first counts them anew.
const seatLateRuns = 2

// seatMinTokens is the smallest planner prompt whose reading rate is
// evidence (a short prompt reads fast, cached or not).
const seatMinTokens = 64

// seatKey names a model on a server: each model has its runner, and so
// its slots.
func seatKey(ctx context.Context, o *Operator) string {
	return orderKey(hostIn(ctx, o.opts.HubModel)) + "\x00" + modelIn(ctx, o.opts.HubModel)
}

func (s *seating) get(key string) seatFacts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hosts[key]
}

func (s *seating) set(key string, change func(*seatFacts)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hosts == nil {
		s.hosts = map[string]seatFacts{}
	}
	f := s.hosts[key]
	change(&f)
	s.hosts[key] = f
}

// seated marks the model (seatKey) as holding a slot for the other calls.
func (s *seating) seated(key string) { s.set(key, func(f *seatFacts) { f.seated = true }) }

// planned is told what a planner's call of the model (seatKey) cost: a
// reading far slower than the best seen means its prefix was not cached.
func (s *seating) planned(key string, u llm.Usage) {
	if u.PromptTokens < seatMinTokens || u.PromptDuration <= 0 {
		return
	}
	rate := u.PromptDuration / time.Duration(u.PromptTokens)
	s.set(key, func(f *seatFacts) {
		switch {
		case f.best == 0 || rate < f.best:
			f.best = rate
		case rate > seatCold*f.best:
			// (Not crowded: a server without a third slot is one whose
			// planner's slot a late seat took, and whose next plan reads
			// cold; it is learned for as long as bulkhead runs.)
			f.seated, f.synth = false, false
		}
	})
}

// SeatPrompt is the whole of a seat's request: the preamble every call
// about the apps begins with.
const SeatPrompt = spokes.Preamble

// SynthesisSeatPrompt is the whole of the second seat's request, sent with
// a seat when a plan has several steps: the synthesis' system prompt. The
// synthesis then has a slot of its own, and the spokes' prompts and its
// own do not evict each other turn after turn.
const SynthesisSeatPrompt = synthesisSystem

// seatCall is a seat's request: prompt, and one token to write.
func seatCall(prompt string) llm.Request {
	return llm.Request{Messages: []api.Message{{Role: "system", Content: prompt}}, Think: new(false),
		Options: map[string]any{"num_predict": 1}}
}

// A turnSeat sends a turn's seats, each at most once, as its plan says
// apps and then names a second step.
type turnSeat struct {
	o           *Operator
	key         string          // seatKey
	host        string          // the planner's server
	base        context.Context // the turn's, without its end
	need, synth bool            // the seat is needed; the synthesis' too
	first, pair sync.Once
	sent        atomic.Int32
	// planned: the planner's call has returned. A seat that ended before
	// it held a slot while the planner held its own: another one.
	planned atomic.Bool
	// read is closed once the first seat's answer has begun, or its call
	// ended: it was read in a slot. held: a draft kept its slot for it.
	read     chan struct{}
	readOnce sync.Once
	held     atomic.Bool
}

// seatFor is the seat of a turn planned under ctx; nil when none may be
// needed: the hub does not schedule for the cache (Options.Draft off),
// the server is known to run one request at a time (a seat would only
// queue behind the planner), it holds slots for the other calls already,
// or the plain spoke's model is another than the planner's (its calls do
// not share the planner's slots).
func (o *Operator) seatFor(ctx context.Context) *turnSeat {
	if !o.opts.Draft || o.opts.Vanilla {
		return nil
	}
	key := seatKey(ctx, o)
	f := o.order.seats.get(key)
	host := hostIn(ctx, o.opts.HubModel)
	if o.order.get(host).serialNow() || f.seated && f.synth || !o.sharesPlannersRunner(ctx) {
		return nil
	}
	// The seats go where the turn's calls go (its session's model and
	// server), and end with the operator, not with the turn.
	return &turnSeat{o: o, key: key, host: host, base: context.WithoutCancel(ctx), need: !f.seated, synth: !f.synth, read: make(chan struct{})}
}

// holdDraft is asked by a draft being withdrawn whether to keep its slot
// a while: until the turn's seat has been read, when one was sent and the
// server is not known to lack a third slot (nil: end the draft now).
func (s *turnSeat) holdDraft() <-chan struct{} {
	if s == nil || s.sent.Load() == 0 || s.o.order.seats.get(s.key).crowded {
		return nil
	}
	s.held.Store(true)
	return s.read
}

// wasRead closes read, once.
func (s *turnSeat) wasRead() { s.readOnce.Do(func() { close(s.read) }) }

// keepsConversation reports whether the conversation under ctx has a slot
// of its own to be kept in: the plain spoke's calls go to the planner's
// runner, on a server that runs requests side by side and is not known to
// lack a third slot. After an app turn there its prompt is read back
// while the person is idle: two apps that ran side by side, or a
// synthesis seated beside a spoke, take the conversation's slot, and the
// next chat turn would read it again from the start. (Where it was kept,
// the read finds it cached and reads nothing.)
func (o *Operator) keepsConversation(ctx context.Context) bool {
	if !o.opts.Draft || o.opts.Vanilla || !o.sharesPlannersRunner(ctx) {
		return false
	}
	f := o.order.get(hostIn(ctx, o.opts.HubModel))
	return f.SideBySide && !f.serialNow() && !o.order.seats.get(seatKey(ctx, o)).crowded
}

// sharesPlannersRunner reports whether the plain spoke's calls under ctx
// go to the planner's model on the planner's server: the same runner,
// the same slots.
func (o *Operator) sharesPlannersRunner(ctx context.Context) bool {
	sm, err := o.opts.SpokeModel(VanillaApp)
	if err != nil || modelIn(ctx, sm) != modelIn(ctx, o.opts.HubModel) {
		return false
	}
	h := hostIn(ctx, sm)
	return h == "" || orderKey(h) == orderKey(hostIn(ctx, o.opts.HubModel))
}

// planText is told the planner's output as it streams: once it says apps
// (its kind, or a functionality other than chat), the seat is sent while
// the planner still writes; once it names a second step, the seat and the
// synthesis' seat together — the second comes while the first holds its
// slot, so each takes one.
func (s *turnSeat) planText(text string) {
	if s == nil {
		return
	}
	steps, fns := 0, 0
	for _, m := range reFunctionality.FindAllStringSubmatch(text, -1) {
		if steps++; m[1] != ChatFunctionality {
			fns++
		}
	}
	apps := decidedKind(text) == kindApps || decidedKind(text) == "" && fns > 0
	switch {
	case !apps:
	case steps >= 2 && s.synth:
		// Several steps, not all plain chat: a synthesis follows.
		s.pair.Do(func() { s.send(SeatPrompt, SynthesisSeatPrompt) })
	case s.need:
		s.first.Do(func() { s.send(SeatPrompt) })
	}
}

// send sends a seat of each prompt, each after the one before was
// written, and learns what they prove: a seat that ended before the
// planner's call took a slot other than the planner's; a second one
// written before the first's answer began took a third.
func (s *turnSeat) send(prompts ...string) {
	o := s.o
	o.mu.Lock()
	if o.closed {
		o.mu.Unlock()
		return
	}
	o.seatWG.Add(1)
	o.mu.Unlock()
	s.sent.Add(int32(len(prompts)))
	go func() {
		// The seats outlive the planner's call and the turn, not the
		// operator.
		defer o.seatWG.Done()
		ctx, cancel := context.WithTimeout(s.base, seatTimeout)
		defer cancel()
		defer context.AfterFunc(o.life, cancel)()
		model := counted{o.opts.HubModel, &o.bgCalls}
		var firstByte, lastWrote atomic.Int64
		errs := make(chan error, len(prompts))
		for i, p := range prompts {
			wrote := make(chan struct{})
			var once sync.Once
			// The answer's first byte says the server read the prompt in
			// a slot: the seat has done its work. Its one token written,
			// the server ends it itself; one that writes on (whatever a
			// server sends) is ended seatGrace later. Not at the first
			// byte: a model server (Ollama 0.17) whose client leaves while
			// a reply's last pieces are on their way can keep the
			// request's place in its queue for good.
			cctx, answered := context.WithCancel(ctx)
			var got atomic.Bool
			var grace atomic.Pointer[time.Timer]
			trace := &httptrace.ClientTrace{
				WroteRequest: func(httptrace.WroteRequestInfo) {
					lastWrote.Store(time.Now().UnixNano())
					once.Do(func() { close(wrote) })
				},
				GotFirstResponseByte: func() {
					if i == 0 {
						firstByte.Store(time.Now().UnixNano())
						s.wasRead()
					}
					got.Store(true)
					grace.Store(time.AfterFunc(seatGrace, answered))
				},
			}
			go func() {
				defer answered()
				defer func() {
					if t := grace.Load(); t != nil {
						t.Stop()
					}
				}()
				_, err := model.Chat(httptrace.WithClientTrace(cctx, trace), seatCall(p), nil)
				once.Do(func() { close(wrote) }) // a client that is not HTTP says nothing
				if i == 0 {
					s.wasRead()
				}
				if got.Load() && ctx.Err() == nil && errors.Is(err, context.Canceled) {
					err = nil
				}
				errs <- err
			}()
			<-wrote
		}
		ok := true
		for range prompts {
			ok = <-errs == nil && ok
		}
		if !ok {
			return
		}
		if s.planned.Load() && s.held.Load() {
			// A draft held its slot, the planner its own, and the seat
			// got none until the plan was made: the server has no third.
			// (Not evidence that it runs one request at a time.)
			o.order.seats.set(s.key, func(f *seatFacts) { f.crowded = true })
			return
		}
		if s.planned.Load() {
			// Late: it proves nothing, and on a server that runs one
			// request at a time every seat is.
			late := 0
			o.order.seats.set(s.key, func(f *seatFacts) { f.late++; late = f.late })
			if late >= seatLateRuns {
				o.order.update(s.host, func(f *serverFacts) { f.Serial = true })
			}
			return
		}
		o.order.seats.set(s.key, func(f *seatFacts) { f.late = 0 })
		o.order.seats.seated(s.key)
		if len(prompts) > 1 && lastWrote.Load() < firstByte.Load() {
			o.order.seats.set(s.key, func(f *seatFacts) { f.synth = true })
		}
	}()
}

// seatTimeout bounds a seat's call (it writes one token).
const seatTimeout = 2 * time.Minute

// seatGrace is how long a seat whose answer began may write on before it
// is ended (a server that keeps to num_predict ends it at once).
const seatGrace = time.Second

// usage is told that the planner's call returned, and is what the turn
// reports of its seat: a background call when one was sent.
func (s *turnSeat) usage() llm.Usage {
	if s == nil {
		return llm.Usage{}
	}
	s.planned.Store(true)
	return llm.Usage{BackgroundCalls: int(s.sent.Load())}
}
