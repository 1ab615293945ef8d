package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

const hubOwner = "hub"

// SpokeOwner is the memory owner — the namespace — of app's spoke: its
// working memory and the state the app keeps (apps.Call.Memory), in the
// isolated mode and in the --vanilla baseline alike.
func SpokeOwner(app string) string { return spokePrefix + app }

const spokePrefix = "spoke/"

// vanillaSystem is the vanilla spoke's system prompt: the conversation's.
// It begins as spokes.Preamble does and parts from it after three words:
// on a model server with parallel slots (seat.go) the conversation keeps
// a slot apart from the apps', which an app turn does not evict, while a
// conversation that has no slot yet takes the apps' rather than the
// planner's (it shares more with theirs).
const vanillaSystem = "You are bulkhead, in conversation with the user: a helpful assistant running on their own machine. Answer clearly and concisely; use Markdown where it helps."

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
	// Draft starts the plain answer while the planner plans, and keeps it
	// when the plan is plain chat (draft.go).
	Draft bool
	// Order keeps which request goes first on each model server, learned
	// (OpenServerOrder over a file in the data directory; nil: learned
	// anew by this Operator).
	Order *ServerOrder
	// Changes keeps what apps' processes wrote into the folders they
	// share with the user, until the person decides it (changes.go);
	// nil: no app writes there.
	Changes *changes.Store
	// Workspace is the folder the apps work in: a chat started here
	// records it (Chat.Folder), and a dialog of a chat started in another
	// folder names both (permissions.Request.Folder).
	Workspace string
	// CallTimeout bounds one app function call (0: spokes' default).
	CallTimeout time.Duration
	// CallsPerTurn bounds the app calls of one turn, every spoke and ISC
	// request together (0: DefaultCallsPerTurn).
	CallsPerTurn int
	// BeforeTurn, when set, is asked before a turn writes anything; its
	// error refuses the turn (a disk below its free-space floor).
	BeforeTurn func() error
	// Now is the clock, in the user's time zone: what a relative date of
	// a request ("tomorrow") means (nil: time.Now).
	Now func() time.Time
	// Memory configures long-term memory and masking.
	Memory MemoryOptions
	// PrivateBroker builds the broker that decides the permissions of one
	// private turn (a private chat's, or a private query's): the same
	// rules and prompter as Broker, the stored grants readable, but
	// nothing it writes (action log, grants, uses) reaches the disk —
	// permissions.NewBroker over a memory.Scratch of the hub's namespace.
	// nil: private turns get a broker with no rules, grants or prompter,
	// which denies whatever would need asking.
	PrivateBroker func() (*permissions.Broker, error)
}

// Operator is the hub's deterministic core: it plans each request with the
// hub's model, runs the plan on spokes, logs the turn and reports events.
// See the package doc for its concurrency contract.
type Operator struct {
	opts Options
	// order: which model servers were seen running the planner and a
	// draft at once, so drafts go first there (draft.go, order.go).
	order    *ServerOrder
	noTriage bool // tests of the planner-first path without it (triage.go)
	// probeWindow, when set, replaces the const probeWindow (tests).
	probeWindow time.Duration
	// draftLead, when set, replaces the const draftLead (tests).
	draftLead time.Duration
	store     *memory.Store
	planner   *Planner
	log       *slog.Logger
	catalog   []Functionality
	detector  guard.Detector
	mem       *memorizer   // nil without long-term memory
	bgCalls   atomic.Int64 // model calls of the memory upkeep so far
	warming   warmth       // the planner's prompt being read ahead (warm.go)
	// plannerRead: the model servers (by host) that have read a planner's
	// prompt for this process — a plan made, or a warm — so that its
	// instructions and catalog are in a slot's cache (triage.go, cold).
	plannerRead sync.Map
	// seatWG: the seats in flight (seat.go); life ends at Close, and
	// closed (under mu) says it did: no seat starts after.
	seatWG  sync.WaitGroup
	life    context.Context
	endLife context.CancelFunc

	mu      sync.Mutex
	eph     *memory.Store   // private chats; opened on first use
	private map[string]bool // ids of private chats
	// privBrokers are the private chats' brokers, one each for its life.
	privBrokers map[string]*permissions.Broker
	spokes      map[string]*spokeRef // chat + "\x00" + app
	busy        map[string]bool      // chats with a turn running
	working     map[string]int       // app → spokes of it working now
	running     map[string]*turnRun  // chat → the turn running in it
	disabled    map[string]bool      // apps switched off (SetEnabled)
	toolModels  map[string]bool      // models known to call tools
	closed      bool                 // Close began: no seat (seat.go) nor spoke starts
}

type spokeRef struct {
	chat  string
	spoke *spokes.Spoke
}

// DefaultCallsPerTurn is Options.CallsPerTurn's default.
const DefaultCallsPerTurn = 64

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
	o := &Operator{
		opts:        opts,
		store:       opts.Store,
		planner:     NewPlanner(opts.HubModel, log),
		log:         log,
		catalog:     catalogView(opts.Apps),
		detector:    opts.Memory.Detector,
		private:     map[string]bool{},
		privBrokers: map[string]*permissions.Broker{},
		spokes:      map[string]*spokeRef{},
		busy:        map[string]bool{},
		working:     map[string]int{},
		disabled:    map[string]bool{},
		running:     map[string]*turnRun{},
		toolModels:  map[string]bool{},
		order:       opts.Order,
	}
	if o.order == nil {
		o.order = OpenServerOrder("")
	}
	o.life, o.endLife = context.WithCancel(context.Background())
	if o.detector == nil {
		o.detector = guard.Rules{}
	}
	if err := o.loadDisabled(); err != nil {
		return nil, err
	}
	if opts.Memory.Enabled && !opts.Vanilla {
		o.mem = newMemorizer(o, opts.Memory)
	}
	return o, nil
}

// catalogView is what the planner sees of the catalog: chat, and every
// functionality an installed app provides, in the hub's own words.
func catalogView(reg *apps.Registry) []Functionality {
	out := []Functionality{{Name: ChatFunctionality, Description: "Talk with the user directly: conversation, writing, explanations, general knowledge, anything no other functionality covers."}}
	if reg == nil {
		return out
	}
	for _, f := range reg.Functionalities() {
		out = append(out, Functionality{Name: f.Name, Description: f.Description, Args: judge.CatalogArgs(f)})
	}
	return out
}

// HubModel names the planner's model.
func (o *Operator) HubModel() string { return o.opts.HubModel.Model() }

// errOperatorClosed: the operator's Close has begun.
var errOperatorClosed = errors.New("bulkhead is shutting down")

// Close stops every spoke, lets pending memory updates run for up to
// Memory.Drain, stops the memory worker and waits for it, and drops every
// private chat. Turns still running should be cancelled first.
func (o *Operator) Close() error {
	o.mu.Lock()
	refs := o.spokes
	o.spokes = map[string]*spokeRef{}
	// From here no spoke starts (spoke): a read the memory worker or a
	// turn still makes would start one that nothing stops.
	o.closed = true
	o.mu.Unlock()
	for _, r := range refs {
		r.spoke.Stop()
	}
	o.endLife()
	o.seatWG.Wait()
	if o.mem != nil {
		o.mem.shutdown(o.opts.Memory.Drain)
	}
	o.mu.Lock()
	eph := o.eph
	o.eph = nil
	o.mu.Unlock()
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

// route maps a functionality to the app that serves it; "" when several
// apps provide it and the operator must choose.
func (o *Operator) route(fn, hint string) (string, bool) {
	if fn == ChatFunctionality {
		return VanillaApp, hint == ""
	}
	if o.opts.Apps == nil {
		return "", false
	}
	p := o.providers(fn)
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
	from := memory.WindowStart(before, o.opts.History) // moves in blocks: the planner's prompt stays cached
	for _, it := range its {
		if it.Seq >= before || it.Seq < from {
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
	if o.closed {
		return nil, errOperatorClosed
	}
	if r, ok := o.spokes[key]; ok {
		return r.spoke, nil
	}
	sp, err := o.newSpoke(st, chat, app, false)
	if err != nil {
		return nil, err
	}
	o.spokes[key] = &spokeRef{chat: chat, spoke: sp}
	return sp, nil
}

// newSpoke builds and starts a spoke for app in chat, its namespace in st.
// A fresh one (a private query's) gets no recall tool: it starts with no
// prior context.
func (o *Operator) newSpoke(st *memory.Store, chat, app string, fresh bool) (*spokes.Spoke, error) {
	model, err := o.opts.SpokeModel(app)
	if err != nil {
		return nil, fmt.Errorf("model for the %s spoke: %w", app, err)
	}
	ns, err := st.Namespace(SpokeOwner(app))
	if err != nil {
		return nil, err
	}
	cfg := spokes.Config{App: app, Model: model, Memory: ns, History: o.opts.SpokeHistory, System: vanillaSystem, CallTimeout: o.opts.CallTimeout,
		Mask: o.spokeMask(chat, app), Recall: o.mem != nil && !fresh}
	switch {
	case app == monolithApp:
		// The unsafe baseline: no gate, no masking; its calls are logged,
		// a private turn's nowhere.
		g := openGate{changes: o.opts.Changes}
		if st == o.store {
			g.broker = o.opts.Broker
		}
		cfg.Impl, cfg.Gate, cfg.Mask = newMonolith(o.opts.Apps, st), g, nil
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
		t.Results = m.Results
		t.Thinking = m.Thinking
		t.Activity = m.Activity
		t.Author = m.Author
		t.Parts = m.Parts
	}
	if len(t.Parts) == 0 && t.Answer != "" {
		t.Parts = partsOf(t.Answer, t.AnsweredBy())
	}
	return t
}

// now is the time, in the user's time zone.
func (o *Operator) now() time.Time {
	if o.opts.Now != nil {
		return o.opts.Now()
	}
	return time.Now()
}
