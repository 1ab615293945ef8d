package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

const hubOwner = "hub"

// vanillaSystem is the vanilla spoke's system prompt.
const vanillaSystem = "You are bulkhead, a helpful assistant running on the user's own machine. Answer clearly and concisely; use Markdown where it helps."

// Options builds an Operator.
type Options struct {
	// Store is the persistent memory; the caller owns and closes it.
	Store *memory.Store
	// HubModel is the hub's own model client, used only by the planner.
	HubModel Model
	// SpokeModel builds the model client of an app's spoke from that app's
	// configuration; every spoke gets its own.
	SpokeModel func(app string) (spokes.Model, error)
	// History is how many past requests of a chat the planner sees;
	// SpokeHistory how many past interactions a spoke puts in its context.
	History, SpokeHistory int
	Logger                *slog.Logger
	// Apps are the installed apps; nil means none (every request goes to
	// the vanilla spoke).
	Apps *apps.Registry
	// Broker decides permissions. Required when apps are installed.
	Broker *permissions.Broker
	// Vanilla runs the unsafe single-context baseline: one model with
	// every app's description and tools, one memory, no dialogs. It
	// exists to show what the isolation prevents.
	Vanilla bool
	// CallTimeout bounds one app function call (0: spokes' default).
	CallTimeout time.Duration
}

// Operator is the hub's deterministic core: it plans each request with the
// hub's model, runs the plan on spokes, logs the turn and reports events.
// See the package doc for its concurrency contract.
type Operator struct {
	opts    Options
	store   *memory.Store
	planner *Planner
	log     *slog.Logger
	catalog []Functionality

	mu      sync.Mutex
	eph     *memory.Store        // private chats; opened on first use
	private map[string]bool      // ids of private chats
	spokes  map[string]*spokeRef // chat + "\x00" + app
	busy    map[string]bool      // chats with a turn running
	working map[string]int       // app → spokes of it working now
	running map[string]*turnRun  // chat → the turn running in it
}

type spokeRef struct {
	chat  string
	spoke *spokes.Spoke
}

// ErrBusy is returned when a chat already has a turn running.
var ErrBusy = errors.New("this chat is still answering")

// New builds an operator.
func New(opts Options) (*Operator, error) {
	if opts.Store == nil || opts.HubModel == nil || opts.SpokeModel == nil {
		return nil, errors.New("hub needs a store, the hub's model and a spoke model factory")
	}
	if opts.Apps != nil && len(opts.Apps.Names()) > 0 && opts.Broker == nil && !opts.Vanilla {
		return nil, errors.New("hub needs a permission broker when apps are installed")
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Operator{
		opts:    opts,
		store:   opts.Store,
		planner: NewPlanner(opts.HubModel, log),
		log:     log,
		catalog: catalogView(opts.Apps),
		private: map[string]bool{},
		spokes:  map[string]*spokeRef{},
		busy:    map[string]bool{},
		working: map[string]int{},
		running: map[string]*turnRun{},
	}, nil
}

// catalogView is what the planner sees of the catalog: chat, and every
// functionality an installed app provides, in the hub's own words.
func catalogView(reg *apps.Registry) []Functionality {
	out := []Functionality{{Name: ChatFunctionality, Description: "Talk with the user directly: conversation, writing, explanations, general knowledge, anything no other functionality covers."}}
	if reg == nil {
		return out
	}
	for _, f := range reg.Functionalities() {
		out = append(out, Functionality{Name: f.Name, Description: f.Description})
	}
	return out
}

// HubModel names the planner's model.
func (o *Operator) HubModel() string { return o.opts.HubModel.Model() }

// Close stops every spoke and drops every private chat.
func (o *Operator) Close() error {
	o.mu.Lock()
	refs := o.spokes
	o.spokes = map[string]*spokeRef{}
	eph := o.eph
	o.eph = nil
	o.mu.Unlock()
	for _, r := range refs {
		r.spoke.Stop()
	}
	if eph != nil {
		return eph.Close()
	}
	return nil
}

// Working lists the apps whose spokes are working now.
func (o *Operator) Working() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []string
	for app, n := range o.working {
		if n > 0 {
			out = append(out, app)
		}
	}
	return out
}

// Ask runs one request in a chat: it logs the request, plans it, runs the
// plan and logs the outcome, reporting events to emit (called on the
// caller's goroutine or a spoke's, never concurrently). The returned Turn
// holds the outcome even when err is not nil.
func (o *Operator) Ask(ctx context.Context, chat, query string, emit func(Event)) (Turn, error) {
	if err := o.claim(chat); err != nil {
		return Turn{}, err
	}
	defer o.release(chat)
	st, _ := o.storeFor(chat)
	c, err := st.Chat(chat)
	if err != nil {
		return Turn{}, fmt.Errorf("%w: %s", ErrNoChat, chat)
	}
	if c.Title == "" {
		c.Title = titleFrom(query)
		if err := st.UpdateChat(c); err != nil {
			return Turn{}, err
		}
	}
	ns, err := st.Namespace(hubOwner)
	if err != nil {
		return Turn{}, err
	}
	it, err := ns.Append(chat, memory.Interaction{Input: query, Status: memory.StatusPending, Started: time.Now()})
	if err != nil {
		return Turn{}, fmt.Errorf("log the request: %w", err)
	}
	return o.run(ctx, st, ns, it, emit)
}

// Retry runs a turn that did not finish (cut, cancelled, failed or left
// pending by a crash) again, in place.
func (o *Operator) Retry(ctx context.Context, chat string, seq uint64, emit func(Event)) (Turn, error) {
	if err := o.claim(chat); err != nil {
		return Turn{}, err
	}
	defer o.release(chat)
	st, _ := o.storeFor(chat)
	ns, err := st.Namespace(hubOwner)
	if err != nil {
		return Turn{}, err
	}
	its, err := ns.Interactions(chat)
	if err != nil {
		return Turn{}, err
	}
	for _, it := range its {
		if it.Seq != seq {
			continue
		}
		if it.Status == memory.StatusOK {
			return turnOf(it), errors.New("that turn already has its answer")
		}
		it.Output, it.Error, it.Meta, it.Status = "", "", nil, memory.StatusPending
		it.Started, it.Ended = time.Now(), time.Time{}
		if err := ns.Update(it); err != nil {
			return Turn{}, err
		}
		return o.run(ctx, st, ns, it, emit)
	}
	return Turn{}, fmt.Errorf("chat %s has no turn %d", chat, seq)
}

// run plans and executes a logged request and logs its outcome.
func (o *Operator) run(ctx context.Context, st *memory.Store, ns *memory.Namespace, it memory.Interaction, emit func(Event)) (Turn, error) {
	if emit == nil {
		emit = func(Event) {}
	}
	chat := it.Chat
	var meta turnMeta

	finish := func(text string, status memory.Status, runErr error) (Turn, error) {
		it.Output, it.Status, it.Ended = text, status, time.Now()
		it.Usage = memory.Usage{Calls: meta.Usage.Calls, PromptTokens: meta.Usage.PromptTokens, EvalTokens: meta.Usage.EvalTokens, Duration: meta.Usage.Duration}
		if runErr != nil {
			it.Error = runErr.Error()
		}
		it.Meta, _ = json.Marshal(meta)
		if err := ns.Update(it); err != nil && runErr == nil {
			runErr = fmt.Errorf("log the answer: %w", err)
		}
		turn := turnOf(it)
		if runErr != nil {
			emit(Event{Kind: EventError, Chat: chat, Turn: it.Seq, Err: runErr, Usage: meta.Usage, Status: status, Text: text})
			return turn, runErr
		}
		emit(Event{Kind: EventAnswer, Chat: chat, Turn: it.Seq, Text: text, Usage: meta.Usage, Status: status})
		return turn, nil
	}

	tr := o.startTurn(st, it, emit)
	defer o.endTurn(chat)
	emit = tr.emit
	emit(Event{Kind: EventStarted})
	var plan Plan
	if o.opts.Vanilla {
		plan = vanillaPlan()
	} else {
		history, err := o.history(ns, chat, it.Seq)
		if err != nil {
			return finish("", memory.StatusError, err)
		}
		named := o.namedApps(it.Input)
		var usage llm.Usage
		plan, usage, err = o.planner.Plan(ctx, PlanInput{Query: it.Input, History: history, Functionalities: o.catalog, NamedApps: named}, o.route)
		meta.Usage.Add(usage)
		if err != nil {
			return finish("", statusOf(ctx, err), err)
		}
		if plan.Fallback {
			o.log.Warn("plan fallback", "chat", chat, "turn", it.Seq, "reason", plan.Reason)
			o.note("plan", "hub", "planner output unusable twice; routed to the vanilla spoke: "+plan.Reason)
		}
		if plan, err = o.resolveApps(ctx, tr, plan); err != nil {
			return finish("", statusOf(ctx, err), err)
		}
	}
	tr.plan = plan
	meta.Plan = &plan
	emit(Event{Kind: EventPlan, Chat: chat, Turn: it.Seq, Plan: &plan})

	res, err := o.execute(ctx, tr)
	meta.Usage.Add(res.Usage)
	meta.Thinking = res.Thinking
	if err != nil {
		return finish(res.Text, res.Status, err)
	}
	return finish(res.Text, memory.StatusOK, nil)
}

// route maps a functionality to the app that serves it; "" when several
// apps provide it and the operator must choose.
func (o *Operator) route(fn, hint string) (string, bool) {
	if fn == ChatFunctionality {
		return VanillaApp, hint == ""
	}
	if o.opts.Apps == nil {
		return "", false
	}
	p := o.opts.Apps.Providers(fn)
	if hint != "" {
		return hint, slices.Contains(p, hint)
	}
	switch len(p) {
	case 0:
		return "", false
	case 1:
		return p[0], true
	default:
		return "", true
	}
}

// history is the planner's view of the chat: earlier requests and the
// apps that served them.
func (o *Operator) history(ns *memory.Namespace, chat string, before uint64) ([]PastTurn, error) {
	if o.opts.History <= 0 {
		return nil, nil
	}
	its, err := ns.Recent(chat, o.opts.History+1)
	if err != nil {
		return nil, fmt.Errorf("planner memory: %w", err)
	}
	var out []PastTurn
	for _, it := range its {
		if it.Seq >= before {
			continue
		}
		t := turnOf(it)
		pt := PastTurn{Query: it.Input}
		if t.Plan != nil {
			pt.Apps = t.Plan.Apps()
		}
		out = append(out, pt)
	}
	return out, nil
}

// spoke returns the chat's spoke for app, starting it on first use.
func (o *Operator) spoke(st *memory.Store, chat, app string) (*spokes.Spoke, error) {
	key := chat + "\x00" + app
	o.mu.Lock()
	defer o.mu.Unlock()
	if r, ok := o.spokes[key]; ok {
		return r.spoke, nil
	}
	model, err := o.opts.SpokeModel(app)
	if err != nil {
		return nil, fmt.Errorf("model for the %s spoke: %w", app, err)
	}
	ns, err := st.Namespace("spoke/" + app)
	if err != nil {
		return nil, err
	}
	cfg := spokes.Config{App: app, Model: model, Memory: ns, History: o.opts.SpokeHistory, System: vanillaSystem, CallTimeout: o.opts.CallTimeout}
	switch {
	case app == monolithApp:
		cfg.Impl, cfg.Gate = newMonolith(o.opts.Apps, st), openGate{}
	case app != VanillaApp:
		impl, ok := o.opts.Apps.App(app)
		if !ok {
			return nil, fmt.Errorf("no app %q is installed", app)
		}
		if ps, ok := impl.(apps.PerSpoke); ok {
			impl = ps.NewInstance() // the spoke owns it, and its process
			cfg.OwnsImpl = true
		}
		cfg.Impl, cfg.Gate = impl, &gate{o: o, chat: chat, app: app}
	}
	sp, err := spokes.New(cfg)
	if err != nil {
		return nil, err
	}
	sp.Start()
	o.spokes[key] = &spokeRef{chat: chat, spoke: sp}
	return sp, nil
}

func (o *Operator) stopSpokes(chat string) {
	o.mu.Lock()
	var stop []*spokes.Spoke
	for k, r := range o.spokes {
		if r.chat == chat {
			stop = append(stop, r.spoke)
			delete(o.spokes, k)
		}
	}
	o.mu.Unlock()
	for _, s := range stop {
		s.Stop()
	}
}

func (o *Operator) setWorking(app string, d int) {
	o.mu.Lock()
	o.working[app] += d
	o.mu.Unlock()
}

func (o *Operator) claim(chat string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.busy[chat] {
		return ErrBusy
	}
	o.busy[chat] = true
	return nil
}

func (o *Operator) release(chat string) {
	o.mu.Lock()
	delete(o.busy, chat)
	o.mu.Unlock()
}

// storeFor returns the store that holds a chat and whether it is private.
func (o *Operator) storeFor(chat string) (*memory.Store, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.private[chat] && o.eph != nil {
		return o.eph, true
	}
	return o.store, false
}

func (o *Operator) ephemeralStore() (*memory.Store, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.eph == nil {
		eph, err := memory.OpenEphemeral(memory.Options{})
		if err != nil {
			return nil, fmt.Errorf("open private memory: %w", err)
		}
		o.eph = eph
	}
	return o.eph, nil
}

func (o *Operator) ephemeralIfOpen() *memory.Store {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.eph
}

func turnOf(it memory.Interaction) Turn {
	t := Turn{Chat: it.Chat, Seq: it.Seq, Query: it.Input, Answer: it.Output, Status: it.Status, Error: it.Error, Started: it.Started, Ended: it.Ended}
	t.Usage = llm.Usage{Calls: it.Usage.Calls, PromptTokens: it.Usage.PromptTokens, EvalTokens: it.Usage.EvalTokens, Duration: it.Usage.Duration}
	var m turnMeta
	if len(it.Meta) > 0 && json.Unmarshal(it.Meta, &m) == nil {
		t.Plan = m.Plan
		t.Thinking = m.Thinking
	}
	return t
}

func statusOf(ctx context.Context, err error) memory.Status {
	var cut *llm.StreamCutError
	switch {
	case ctx.Err() != nil:
		return memory.StatusCancelled
	case errors.As(err, &cut):
		return memory.StatusCut
	default:
		return memory.StatusError
	}
}
