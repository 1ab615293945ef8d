package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// AskOptions change how one request runs.
type AskOptions struct {
	// Private runs this one request privately, in any chat: the planner
	// sees no memory (no history, summary or entity names); every spoke
	// starts fresh (no history, no summary, no recall tool) and logs
	// nothing; nothing of the turn is written to any namespace — the
	// hub's log of it lives in memory while it runs and is dropped after,
	// its permissions go to a private broker (Options.PrivateBroker), and
	// no summary, entity or record is made of it. The Turn and events
	// carry Seq 0 and Turn.Private: the turn is not kept and cannot be
	// retried. What the user asked an app to do is still done to the
	// app's own data (a sent email stays in mail's sent folder; a saved
	// note stays saved): that is the app's state, not memory of the turn.
	Private bool
	// Undrafted: the caller shows nothing of a draft before the plan
	// (plain text, or JSON without a stream: what is written cannot be
	// taken back), so the planner of a draft that goes ahead need not
	// wait for the draft's first words: the two go to the server at once,
	// and the plan's kind — what such a caller waits for — comes sooner.
	Undrafted bool `json:",omitempty"`
	// Clock is the asking client's (LocalClock): relative dates in the
	// request are the person's (clock.go).
	Clock Clock `json:",omitzero"`
}

// Ask runs one request in a chat: it logs the request, plans it, runs the
// plan and logs the outcome, reporting events to emit (called on the
// caller's goroutine or a spoke's, never concurrently). The returned Turn
// holds the outcome even when err is not nil.
func (o *Operator) Ask(ctx context.Context, chat, query string, emit func(Event)) (Turn, error) {
	return o.AskWith(ctx, chat, query, AskOptions{}, emit)
}

// AskWith is Ask with options (a private query).
func (o *Operator) AskWith(ctx context.Context, chat, query string, opts AskOptions, emit func(Event)) (Turn, error) {
	ctx = WithClock(permissions.WithChat(ctx, chat), opts.Clock)
	if err := o.beforeTurn(); err != nil {
		return Turn{}, err
	}
	if err := o.claim(chat); err != nil {
		return Turn{}, err
	}
	defer o.release(chat)
	st, privChat := o.storeFor(chat)
	c, err := st.Chat(chat)
	if err != nil {
		return Turn{}, fmt.Errorf("%w: %s", ErrNoChat, chat)
	}
	logSt := st
	if opts.Private {
		if logSt, err = o.ephemeralStore(); err != nil {
			return Turn{}, err
		}
	}
	if c.Title == "" {
		c.Title = titleFrom(query)
		if opts.Private {
			// A chat whose first request was private keeps no word of it.
			c.Title = "private query"
		}
		if err := st.UpdateChat(c); err != nil {
			return Turn{}, err
		}
	}
	ns, err := logSt.Namespace(hubOwner)
	if err != nil {
		return Turn{}, err
	}
	it, err := ns.Append(chat, memory.Interaction{Input: query, Status: memory.StatusPending, Started: time.Now()})
	if err != nil {
		return Turn{}, fmt.Errorf("log the request: %w", err)
	}
	if opts.Private {
		defer func() {
			if err := ns.Remove(chat, it.Seq); err != nil {
				o.log.Warn("drop a private turn", "err", err)
			}
		}()
	}
	return o.run(ctx, runSpec{st: st, ns: ns, private: opts.Private || privChat, fresh: opts.Private, folder: c.Folder, undrafted: opts.Undrafted}, it, emit)
}

// Retry runs a turn that did not finish (cut, cancelled, failed or left
// pending by a crash) again, in place.
func (o *Operator) Retry(ctx context.Context, chat string, seq uint64, emit func(Event)) (Turn, error) {
	ctx = permissions.WithChat(ctx, chat)
	if err := o.beforeTurn(); err != nil {
		return Turn{}, err
	}
	if err := o.claim(chat); err != nil {
		return Turn{}, err
	}
	defer o.release(chat)
	st, privChat := o.storeFor(chat)
	c, err := st.Chat(chat)
	if err != nil {
		return Turn{}, fmt.Errorf("%w: %s", ErrNoChat, chat)
	}
	ns, err := st.Namespace(hubOwner)
	if err != nil {
		return Turn{}, err
	}
	// That one turn, read by its key: not the chat's whole log.
	it, err := ns.Interaction(chat, seq)
	if errors.Is(err, memory.ErrNotFound) {
		return Turn{}, fmt.Errorf("chat %s has no turn %d", chat, seq)
	}
	if err != nil {
		return Turn{}, err
	}
	if it.Status == memory.StatusOK {
		return turnOf(it), errors.New("that turn already has its answer")
	}
	it.Output, it.Error, it.Meta, it.Status = "", "", nil, memory.StatusPending
	it.Started, it.Ended = time.Now(), time.Time{}
	if err := ns.Update(it); err != nil {
		return Turn{}, err
	}
	return o.run(ctx, runSpec{st: st, ns: ns, private: privChat, folder: c.Folder}, it, emit)
}

// runSpec says where a turn runs: st holds the chat (and the spokes'
// namespaces), ns is where the hub logs the turn; private turns leave no
// long-term memory; fresh ones (private queries) start with no context.
type runSpec struct {
	st             *memory.Store
	ns             *memory.Namespace
	private, fresh bool
	folder         string // the chat's (Chat.Folder)
	undrafted      bool   // AskOptions.Undrafted
}

// run plans and executes a logged request and logs its outcome.
func (o *Operator) run(ctx context.Context, rs runSpec, it memory.Interaction, emit func(Event)) (Turn, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	chat := it.Chat
	var meta turnMeta
	var tr *turnRun

	finish := func(text string, status memory.Status, runErr error) (Turn, error) {
		if cause := context.Cause(ctx); errors.Is(cause, permissions.ErrUnanswerable) {
			// A dialog no one could answer ended it: that is its error,
			// and it is kept unfinished, for a retry.
			status, runErr = memory.StatusCancelled, cause
		}
		it.Output, it.Status, it.Ended = text, status, time.Now()
		it.Usage = memory.Usage{Calls: meta.Usage.Calls, PromptTokens: meta.Usage.PromptTokens, EvalTokens: meta.Usage.EvalTokens, Duration: meta.Usage.Duration}
		if runErr != nil {
			it.Error = runErr.Error()
		}
		meta.Activity = tr.logged()
		meta.Author = o.author(tr)
		parts := tr.answerParts(text, meta.Author)
		meta.Parts = parts
		it.Meta, _ = json.Marshal(meta)
		stored, spans := o.masked(ctx, tr, it, meta, refusedUpFront(runErr))
		if err := rs.ns.Update(stored); err != nil && runErr == nil {
			runErr = fmt.Errorf("log the answer: %w", err)
		}
		// The turn as kept, with what its masking hid, for this session
		// to reveal on request.
		turn := turnOf(stored)
		turn.Masked = spans
		if rs.fresh {
			turn.Seq, turn.Private = 0, true
		}
		if runErr != nil {
			emit(Event{Kind: EventError, Chat: chat, Turn: it.Seq, Err: runErr, Usage: meta.Usage, Status: status, Text: text, Parts: parts})
			return turn, runErr
		}
		usage := meta.Usage
		if !rs.private && o.mem != nil {
			// The upkeep this turn brings due runs in the background; its
			// calls are counted apart from the turn's own.
			usage.BackgroundCalls += o.mem.due(ctx, "", chat)
			for _, app := range tr.servedApps() {
				usage.BackgroundCalls += o.mem.due(ctx, app, chat)
			}
			if o.opts.Draft && !o.opts.Vanilla && (o.plannerWindowMoves(it.Seq) || o.plannerKeepsSlot(ctx)) && o.mem.enqueueRead(ctx, "", chat, true) {
				// The next plan lists other earlier requests than this
				// one did, or this one with what served it: its prompt is
				// read while the person is idle, not on the next turn's
				// path.
				usage.BackgroundCalls++
			}
			// Apps that ran beside each other (or a synthesis) may have
			// taken the conversation's slot (seat.go), or the plain spoke's
			// exchange is new to its next prompt (conversationGrew): the
			// conversation's prompt is read (back) while the person is idle.
			if tr != nil && (tr.plan.usesApps() && o.keepsConversation(ctx) || o.conversationGrew(tr)) && o.mem.enqueueRead(ctx, VanillaApp, chat, false) {
				usage.BackgroundCalls++
			}
		}
		turn.Usage.BackgroundCalls = usage.BackgroundCalls
		emit(Event{Kind: EventAnswer, Chat: chat, Turn: it.Seq, Text: text, Usage: usage, Status: status, App: meta.Author, Parts: parts, Refused: tr.refusedSteps()})
		return turn, nil
	}

	if rs.private {
		// Out-of-process apps keep a private turn out of bulkhead's log.
		ctx = apps.WithPrivate(ctx)
	}
	if c, ok := clockOf(ctx); ok {
		// The apps read "now" and "today" where the person is.
		ctx = apps.WithZone(ctx, c.Location())
	}
	tr = o.startTurn(rs, it, emit)
	tr.session = permissions.SessionOf(ctx)
	defer o.endTurn(tr)
	ctx, tr.stop = context.WithCancelCause(ctx)
	defer tr.stop(nil)
	// An app's process that this turn starts reaches the endpoints its
	// config names only as the user allows them (network permissions).
	if o.opts.Vanilla {
		ctx = apps.WithNetwork(ctx, vanillaNetwork{o.opts.Broker})
	} else {
		ctx = apps.WithNetwork(ctx, netAsker{o: o, tr: tr})
	}
	// What a call waits for — its app's server starting, the tool's own
	// progress — is shown while it runs.
	ctx = apps.WithProgress(ctx, func(p apps.Progress) {
		tr.emit(Event{Kind: EventProgress, App: p.App, Function: p.Function, Progress: &p})
	})
	emit = tr.emit
	emit(Event{Kind: EventStarted})
	if rs.private {
		b, err := o.privateBroker(chat, !rs.fresh)
		if err != nil {
			return finish("", memory.StatusError, err)
		}
		tr.broker = b
	}
	if !o.opts.Vanilla {
		// What the chat's apps left pending — a crash, a restart, a
		// dialog no one answered — is offered again as the chat resumes.
		o.settleChanges(ctx, tr, "", resumedWrites)
	}
	var plan Plan
	var dr *answerDraft     // the plain answer drafted while the plan is made
	var planUsage llm.Usage // what planning cost (the plan event says)
	if o.opts.Vanilla {
		plan = vanillaPlan()
	} else {
		in := PlanInput{Query: it.Input, Functionalities: o.catalogNow(), NamedApps: o.namedApps(it.Input), Private: rs.private, Now: o.nowIn(ctx)}
		if o.opts.Apps != nil {
			in.Catalog = o.opts.Apps.Catalog()
		}
		if !rs.fresh {
			var err error
			if in.History, err = o.history(rs.ns, chat, it.Seq); err != nil {
				return finish("", memory.StatusError, err)
			}
			for _, h := range in.History {
				tr.ledger.User(judge.ScopeHistory, h.Query) // the user's own earlier words
			}
		}
		if !rs.private {
			var err error
			if in.Summary, in.Facts, err = o.plannerMemory(chat); err != nil {
				return finish("", memory.StatusError, err)
			}
		}
		var err error
		pctx := ctx
		// A request that names an installed app is planned with it, most
		// likely: no draft is worth its call then.
		if o.opts.Draft && len(in.NamedApps) == 0 {
			if dr, pctx = o.startDraft(ctx, tr, len(in.History) == 0); dr != nil {
				// The planner (or a cold planner's triage) follows the
				// draft's first piece: its words are read first.
				dr.lead(ctx)
				in.OnText = dr.planText
				in.HoldChat = func() <-chan struct{} { return dr.holdChat(o) }
			}
		}
		// An app plan keeps the planner's slot its own (seat.go).
		seat := o.seatFor(ctx)
		if seat != nil {
			if dr != nil {
				dr.keepSlot = seat.holdDraft
			}
			draftText := in.OnText
			in.OnText = func(text string) {
				seat.planText(text)
				if draftText != nil {
					draftText(text)
				}
			}
		}
		// Where the planner goes first, plain chat is known without it
		// (triage.go).
		triaged := false
		if o.triaged(ctx, dr, in) {
			var usage llm.Usage
			triaged, usage, err = o.triage(ctx, dr, in)
			planUsage.Add(usage)
			if triaged {
				plan = chatPlan(in.Query)
				plan.Early, plan.Triaged = true, true
				if dr.ahead && !rs.private {
					// Beside a draft on a cold server: the planner's
					// prompt is read while the person is idle.
					o.warmLater(ctx, chat)
				}
			}
		}
		var plannerUsage llm.Usage
		if err == nil && !triaged {
			// A prompt read ahead (warm.go) is this plan's beginning:
			// read once, not twice side by side.
			o.warming.wait(pctx)
			keepChat := chat
			if rs.fresh {
				keepChat = "" // its spoke is the turn's own, read by no one later
			}
			kctx, kept := o.keepBeside(pctx, ctx, keepChat)
			plan, plannerUsage, err = o.planner.Plan(kctx, in, o.route)
			kept(false)
			planUsage.Add(plannerUsage)
			if err == nil {
				o.plannerWasRead(hostIn(pctx, o.opts.HubModel))
			}
		}
		meta.Usage.Add(seat.usage()) // sent while the planner wrote
		if dr != nil && err == nil {
			o.planKind(dr, keeps(plan))
		}
		if dr != nil {
			dr.planned(o)
		}
		if o.opts.Draft && !triaged {
			o.order.seats.planned(seatKey(ctx, o), plannerUsage)
		}
		meta.Usage.Add(planUsage)
		if dr != nil && err != nil && ctx.Err() != nil {
			// Cancelled (esc) while the draft was shown: what it wrote
			// stays, as the partial answer of a cancelled turn.
			text, usage := dr.cut()
			meta.Usage.Add(usage)
			return finish(text, memory.StatusCancelled, err)
		}
		if dr != nil && (err != nil || !keeps(plan) || dr.abandoned()) {
			// (A draft abandoned while an earlier attempt named an app
			// is not brought back: the chat step runs on its own.)
			meta.Usage.Add(dr.withdraw())
			dr = nil
		}
		if err != nil {
			return finish("", spokes.StatusOf(ctx, err), err)
		}
		if plan.Fallback {
			if rs.private {
				o.log.Warn("plan fallback (a private turn: no detail logged)")
			} else {
				o.log.Warn("plan fallback", "chat", chat, "turn", it.Seq, "reason", plan.Reason)
			}
			o.note(tr, "plan", "hub", "planner output unusable twice; routed to the vanilla spoke: "+plan.Reason)
		}
		if plan, err = o.resolveApps(ctx, tr, plan); err != nil {
			return finish("", spokes.StatusOf(ctx, err), err)
		}
	}
	tr.plan = plan
	for _, s := range plan.Steps {
		tr.ledger.Plan(s.ID, s.Query)
	}
	meta.Plan = &plan
	planEvent := Event{Kind: EventPlan, Chat: chat, Turn: it.Seq, Plan: &plan, Usage: planUsage}
	if dr != nil {
		// The draft's pieces so far came before the plan; the rest are
		// the answer's tokens, after it.
		dr.commit(func() { emit(planEvent) })
	} else {
		emit(planEvent)
	}

	var res spokes.Result
	var err error
	if dr != nil {
		res, err = dr.keep(ctx, o)
	} else {
		res, err = o.execute(ctx, tr)
	}
	meta.Usage.Add(res.Usage)
	meta.Thinking = res.Thinking
	meta.Results = tr.results
	if err != nil {
		status := res.Status
		if status == "" || status == memory.StatusError {
			// A turn whose context ended (its client went away, say) is
			// cancelled, whichever step noticed.
			status = spokes.StatusOf(ctx, err)
		}
		return finish(res.Text, status, err)
	}
	return finish(res.Text, memory.StatusOK, nil)
}

// masked is the hub's record of a turn as stored: when an app worked on
// it, the answer, the error and the thinking (all read app output) are
// masked (invariant 7) — but for the hub's own refusal of a spoke model
// before the app ran (refusedUpFront), which read none. The user's own
// words are kept as typed.
func (o *Operator) masked(ctx context.Context, tr *turnRun, it memory.Interaction, meta turnMeta, refused bool) (memory.Interaction, []MaskedSpan) {
	if tr == nil || o.opts.Vanilla || !tr.plan.usesApps() {
		return it, nil
	}
	ctx = context.WithoutCancel(ctx)
	var found []guard.Finding
	it.Output, found = o.maskWith(ctx, tr, hubOwner, "the answer", it.Output)
	// The parts as stored: each app's and the assistant's masked as the
	// answer is (the hub's own words are not read for instructions).
	for i, p := range meta.Parts {
		if p.By != ByHub {
			meta.Parts[i].Text = o.mask(ctx, tr, hubOwner, "the answer", p.Text)
		}
	}
	if !refused {
		it.Error = o.mask(ctx, tr, hubOwner, "the error", it.Error)
	}
	if meta.Thinking != "" {
		meta.Thinking = o.mask(ctx, tr, hubOwner, "the thinking", meta.Thinking)
	}
	// What the apps' calls carried is app output too.
	for i, a := range meta.Activity {
		if len(a.Args) > 0 {
			meta.Activity[i].Args = maskedJSON(o.mask(ctx, tr, hubOwner, "a call's arguments", string(a.Args)), a.Args)
		}
		if a.Err != "" {
			meta.Activity[i].Err = o.mask(ctx, tr, hubOwner, "a call's error", a.Err)
		}
		if r := a.Permission; r != nil && len(r.Args) > 0 {
			c := *r
			c.Args = maskedJSON(o.mask(ctx, tr, hubOwner, "a request's arguments", string(r.Args)), r.Args)
			meta.Activity[i].Permission = &c
		}
	}
	it.Meta, _ = json.Marshal(meta)
	var spans []MaskedSpan
	for _, f := range found {
		spans = append(spans, MaskedSpan{Kind: f.Kind, Text: f.Text})
	}
	return it, spans
}

// maskedJSON is the masked text of JSON raw when it is still JSON, else
// the masked text as a JSON string.
func maskedJSON(masked string, raw json.RawMessage) json.RawMessage {
	if masked == string(raw) || json.Valid([]byte(masked)) {
		return json.RawMessage(masked)
	}
	b, _ := json.Marshal(masked)
	return b
}

// MaskedSpan is a span of an answer that the hub masked before storing
// it: its kind (the reason) and the text it hid. It is kept in the Turn
// an Ask returns, never stored, so the user can reveal it in this session.
type MaskedSpan struct {
	Kind string
	Text string
}

// NoteRevealed writes to the action log that the user revealed a masked
// span of turn seq in chat (its kind, not its text).
func (o *Operator) NoteRevealed(chat string, seq uint64, kind string) error {
	b := o.opts.Broker
	o.mu.Lock()
	if pb := o.privBrokers[chat]; pb != nil {
		b = pb
	}
	o.mu.Unlock()
	if b == nil {
		return nil
	}
	return b.Note("revealed", "user", fmt.Sprintf("revealed masked text (%s) of turn %d in chat %s", kind, seq, chat))
}

// PrivateGrants lists the grants the brokers of the private chats chats
// hold (their session grants, which die with the chat), each with its
// chat, for the permission manager.
func (o *Operator) PrivateGrants(chats []string) []permissions.Grant {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []permissions.Grant
	for _, c := range chats {
		if b := o.privBrokers[c]; b != nil {
			out = append(out, b.Grants()...)
		}
	}
	return out
}

// RevokePrivate revokes grant id in the broker of one of the private
// chats chats; found is false when none of them holds it.
func (o *Operator) RevokePrivate(chats []string, id string) (found bool, r permissions.Revoked, err error) {
	o.mu.Lock()
	var bs []*permissions.Broker
	for _, c := range chats {
		if b := o.privBrokers[c]; b != nil {
			bs = append(bs, b)
		}
	}
	o.mu.Unlock()
	for _, b := range bs {
		if slices.ContainsFunc(b.Grants(), func(g permissions.Grant) bool { return g.ID == id }) {
			r, err := b.RevokeReport(id)
			return true, r, err
		}
	}
	return false, permissions.Revoked{}, nil
}

// privateBroker is the broker of a private turn: a private chat keeps one
// for its life (so "allow for this session" holds in it), a private query
// gets its own.
func (o *Operator) privateBroker(chat string, perChat bool) (*permissions.Broker, error) {
	if o.opts.Broker == nil {
		return nil, nil // no apps: nothing is ever asked
	}
	o.mu.Lock()
	b := o.privBrokers[chat]
	o.mu.Unlock()
	if b != nil && perChat {
		return b, nil
	}
	var err error
	if o.opts.PrivateBroker == nil {
		b, err = permissions.NewBroker(permissions.Options{Logger: o.log})
	} else {
		b, err = o.opts.PrivateBroker()
	}
	if err != nil {
		return nil, fmt.Errorf("private permission broker: %w", err)
	}
	if perChat {
		o.mu.Lock()
		o.privBrokers[chat] = b
		o.mu.Unlock()
	}
	return b, nil
}

// beforeTurn asks Options.BeforeTurn whether a turn may start.
func (o *Operator) beforeTurn() error {
	if o.opts.BeforeTurn == nil {
		return nil
	}
	return o.opts.BeforeTurn()
}
