package permissions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// KV is the store the Broker keeps permanent grants and the action log in:
// the hub's memory namespace (*memory.Namespace satisfies it). Writes must be
// durable when Set returns.
type KV interface {
	Get(key string) ([]byte, error)
	Set(key string, val []byte) error
	Delete(key string) error
	Keys(prefix string) ([]string, error) // in byte order
}

// Options configure a Broker.
type Options struct {
	Store    KV               // permanent grants and the action log; nil: nothing persists (private mode)
	NotFound error            // what Store.Get returns (errors.Is) for a missing key, such as memory.ErrNotFound
	KeyFile  string           // HMAC key file; required with Store; created 0600 on first use
	Rules    []Rule           // checked with ValidateRules
	Prompter Prompter         // nil until SetPrompter: requests that need asking are denied (SourcePolicy)
	Now      func() time.Time // nil: time.Now
	Logger   *slog.Logger     // nil: discard
	// Grants, when set, is the broker whose grants this one also decides
	// by (a private turn's broker: the stored grants are the main
	// broker's, and using one spends its uses there, in the main store).
	// This broker then loads no stored grants of its own and makes none
	// that persist: a permanent answer is kept for the session.
	Grants *Broker
}

// Broker decides permission requests. Its methods are safe for concurrent use.
type Broker struct {
	store    KV
	notFound error
	key      []byte
	rules    []Rule
	now      func() time.Time
	log      *slog.Logger

	mu       sync.Mutex // guards the fields below, and the Store's grants/ keys
	prompter Prompter
	trusted  map[string]bool   // trusted-session mode, by client session
	turns    map[string]*queue // each session's dialogs, one at a time
	dry      bool              // Decides is looking: a matching grant is not used
	parent   *Broker           // Options.Grants
	grants   []*held           // valid grants: session, stored and config
	invalid  []*held           // stored grants that failed their signature check
	leases   *leaseSet         // the access decisions gave (lease.go); the parent's for a private broker

	logMu   sync.Mutex // serializes action-log appends
	seq     uint64
	entries []Entry // the log, when there is no Store
}

// held is a grant the Broker holds, with where it lives.
type held struct {
	g   Grant
	key string // its Store key; "" for session and config grants
}

// NewBroker builds a Broker: it validates the rules, loads the key and the
// stored grants, and verifies their signatures. A grant that fails is kept
// with Invalid set, never consulted, logged, and listed by Invalid.
func NewBroker(o Options) (*Broker, error) {
	if err := ValidateRules(o.Rules); err != nil {
		return nil, fmt.Errorf("permission rules: %w", err)
	}
	b := &Broker{store: o.Store, notFound: o.NotFound, prompter: o.Prompter, now: o.Now, log: o.Logger, parent: o.Grants,
		trusted: map[string]bool{}, turns: map[string]*queue{}}
	if b.now == nil {
		b.now = time.Now
	}
	b.leases = newLeaseSet()
	if b.parent != nil {
		b.leases = b.parent.leases
	}
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	for i, ru := range o.Rules {
		ru.Where = ru.where(i)
		b.rules = append(b.rules, ru)
	}
	if b.store == nil || b.parent != nil {
		return b, nil
	}
	if o.KeyFile == "" {
		return nil, errors.New("permissions: a Store needs a KeyFile to sign grants with")
	}
	key, err := loadKey(o.KeyFile)
	if err != nil {
		return nil, err
	}
	b.key = key
	if err := b.loadGrants(); err != nil {
		return nil, err
	}
	if err := b.loadSeq(); err != nil {
		return nil, err
	}
	return b, nil
}

// SetRules makes rules the user's rules from now on (the config file
// changed); a request being decided keeps the rules it started with.
// What an allow rule allowed that the new rules no longer allow ends:
// the processes that held it are stopped before SetRules returns
// (leases). Nothing changes when the rules are not valid.
func (b *Broker) SetRules(rules []Rule) error {
	if err := ValidateRules(rules); err != nil {
		return fmt.Errorf("permission rules: %w", err)
	}
	var rs []Rule
	for i, ru := range rules {
		ru.Where = ru.where(i)
		rs = append(rs, ru)
	}
	b.mu.Lock()
	b.rules = rs
	b.mu.Unlock()
	if stopped := b.endRuled(rs); len(stopped) > 0 {
		b.log.Info("the rules changed: what an allow rule allowed and the rules no longer allow has ended", "stopped", stopped)
	}
	return nil
}

// Rules are the user's rules now.
func (b *Broker) Rules() []Rule {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.rules)
}

// SetPrompter sets who is asked from now on; requests already showing keep
// theirs.
func (b *Broker) SetPrompter(p Prompter) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.prompter = p
}

// Pending is the number of prompts waiting for their turn or showing,
// every session's.
func (b *Broker) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, q := range b.turns {
		n += q.len()
	}
	return n
}

// queueOf is the dialog queue of a session: a session's dialogs come one
// at a time, and never wait behind another session's.
func (b *Broker) queueOf(session string) *queue {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.turns[session]
	if q == nil {
		q = &queue{}
		b.turns[session] = q
	}
	return q
}

// EndSession forgets a client session: its session grants and its
// trusted-session mode go, and the processes that held access it
// allowed are stopped (leases). Its dialogs still waiting end with their
// contexts, which the caller cancels.
func (b *Broker) EndSession(session string) {
	b.mu.Lock()
	b.grants = slices.DeleteFunc(b.grants, func(h *held) bool { return h.key == "" && h.g.Session == session && session != "" })
	delete(b.trusted, session)
	if q := b.turns[session]; q != nil && q.len() == 0 {
		delete(b.turns, session)
	}
	b.mu.Unlock()
	// What the session allowed ends with it: its session grants' and
	// its answers' access (leases), whatever process holds it.
	if session != "" {
		b.leases.endWhere(func(l *Lease) bool { return l.session == session })
	}
}

// Request decides r, asking the Prompter if no rule or grant decides it, and
// appends the request and its decision to the action log. It returns an
// error matching ErrInvalidRequest for a malformed request (such as a
// collab, data or irreversible request without a Warning), ctx's error if
// ctx ends before an answer, or the Prompter's or the Store's error. Callers
// treat any error as a denial.
func (b *Broker) Request(ctx context.Context, r Request) (Decision, error) {
	if err := r.validate(); err != nil {
		return Decision{}, err
	}
	if r.ID == "" {
		r.ID = newID()
	}
	if r.Session == "" {
		r.Session = SessionOf(ctx)
	}
	if r.Chat == "" {
		r.Chat = ChatOf(ctx)
	}
	if d, ok := b.decideOrChoose(&r); ok {
		return b.finish(r, d)
	}
	turns := b.queueOf(r.Session)
	if err := turns.acquire(ctx); err != nil {
		return Decision{}, b.unanswered(r, err)
	}
	// An answer given while we queued (a session grant, say) may decide r now.
	if d, ok := b.decideOrChoose(&r); ok {
		turns.release()
		return b.finish(r, d)
	}
	b.mu.Lock()
	p := b.prompter
	b.mu.Unlock()
	if p == nil {
		turns.release()
		return b.finish(r, Decision{Answer: AnswerDeny, Source: SourcePolicy, Note: "no one is there to ask"})
	}
	out := make(chan outcome, 1)
	go b.prompt(ctx, p, turns, r, out)
	select {
	case o := <-out:
		return o.d, o.err
	case <-ctx.Done():
		select {
		case o := <-out:
			return o.d, o.err
		default:
			return Decision{}, ctx.Err()
		}
	}
}

// Settled decides r without asking anyone, when a rule, a grant or
// trusted-session mode decides it, and logs the decision as Request
// would; ok is false (and nothing is logged) when r would have to be put
// to the Prompter. A caller uses it to put two questions in one dialog.
func (b *Broker) Settled(r Request) (d Decision, ok bool, err error) {
	if err := r.validate(); err != nil {
		return Decision{}, false, err
	}
	if r.ID == "" {
		r.ID = newID()
	}
	d, ok = b.decide(r)
	if !ok {
		return Decision{}, false, nil
	}
	d, err = b.finish(r, d)
	return d, err == nil, err
}

// Decides reports whether a rule, a grant or trusted-session mode would
// decide r without asking anyone. It logs nothing and counts no use.
func (b *Broker) Decides(r Request) bool {
	if r.validate() != nil {
		return false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dry = true
	defer func() { b.dry = false }()
	now := b.now()
	for _, l := range chain {
		if l.allows && r.EveryTime() {
			continue
		}
		switch v, _ := l.eval(b, r, now); v {
		case allow, deny:
			return true
		case ask:
			return false
		}
	}
	return false
}

// Record logs r as decided by d, which the answer to another request
// gave (a dialog that asked two questions in one); it makes no grant.
func (b *Broker) Record(r Request, d Decision) (Decision, error) {
	if err := r.validate(); err != nil {
		return Decision{}, err
	}
	if r.ID == "" {
		r.ID = newID()
	}
	return b.finish(r, d)
}

type outcome struct {
	d   Decision
	err error
}

// prompt holds the turn while p is asked, so only one Prompt runs at a time,
// even when a Prompter overstays ctx; Request returns at ctx's end without
// waiting for it. An answer that comes after ctx ended is dropped.
func (b *Broker) prompt(ctx context.Context, p Prompter, turns *queue, r Request, out chan<- outcome) {
	d, err := p.Prompt(ctx, r)
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		turns.release()
		if ctx.Err() == nil {
			err = fmt.Errorf("ask about %s request %s: %w", r.Kind, r.ID, err)
		}
		out <- outcome{err: b.unanswered(r, err)}
		return
	}
	d, err = b.apply(r, d)
	turns.release()
	if err != nil {
		out <- outcome{err: b.unanswered(r, err)}
		return
	}
	d, err = b.finish(r, d)
	out <- outcome{d, err}
}

// apply normalizes a Prompter's answer and makes the grant it asks for.
func (b *Broker) apply(r Request, in Decision) (Decision, error) {
	d := Decision{Answer: in.Answer, Source: SourceUser, Caveats: in.Caveats}
	if in.Source == SourcePolicy {
		d.Source = SourcePolicy
	}
	if !slices.Contains(r.Options(), d.Answer) {
		switch d.Answer {
		case AnswerSession, AnswerPermanent:
			b.log.Warn("answer not offered for this request; treated as once", "request", r.ID, "kind", r.Kind, "answer", d.Answer)
			d.Answer = AnswerOnce
		default:
			b.log.Warn("unknown answer; treated as deny", "request", r.ID, "answer", d.Answer)
			d.Answer = AnswerDeny
		}
	}
	if d.Answer == AnswerPermanent && (b.store == nil || b.parent != nil) {
		d.Answer = AnswerSession // private: nothing persists
	}
	d.Allowed = d.Answer != AnswerDeny
	if len(r.Choices) > 0 && d.Allowed {
		// An allow names what it allows; the grant is for that choice.
		if !slices.Contains(r.Choices, in.Choice) {
			b.log.Warn("an allow of a choice named none of the choices; treated as deny", "request", r.ID, "choice", in.Choice)
			d.Answer, d.Allowed = AnswerDeny, false
		} else {
			d.Choice = in.Choice
			r.Object, r.Choices = in.Choice, nil
		}
	}
	if r.Kind == KindChanges && d.Allowed && in.Picks != nil {
		// Some entries: this set only; a grant covers whole sets.
		d.Picks = validPicks(in.Picks, r.Changes)
		if d.Answer != AnswerOnce {
			d.Answer = AnswerOnce
		}
	}
	if !d.Allowed {
		d.Note = in.Note
		d.Later = in.Later && r.Kind == KindChanges
		d.Permanent = in.Permanent && !r.EveryTime() && r.Kind != KindChanges
		if len(r.Choices) > 0 {
			d.Permanent = false // a deny of all choices is not remembered for one
		}
	}
	if d.Answer != AnswerSession && d.Answer != AnswerPermanent && !d.Permanent {
		return d, nil
	}
	origin := "dialog"
	if d.Source == SourcePolicy {
		origin = "policy"
	}
	stored := b.store != nil && b.parent == nil && (d.Answer == AnswerPermanent || d.Permanent)
	session := r.Session
	if stored {
		session = "" // a permanent grant is every session's
	}
	g := Grant{
		Session: session,
		Kind:    r.Kind, Subject: r.Subject, Object: r.Object, Function: r.Function, Labels: normLabels(r.Labels),
		Deny: !d.Allowed, Note: d.Note, Caveats: d.Caveats, Permanent: stored, Origin: origin,
		// The call this answer decides is the grant's first use.
		Uses: 1, LastUsed: b.now(),
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	g, err := b.add(g, stored)
	if err != nil {
		return Decision{}, err
	}
	d.GrantID = g.ID
	return d, nil
}

// unanswered logs that r got no decision and returns err.
func (b *Broker) unanswered(r Request, err error) error {
	d := Decision{RequestID: r.ID, Answer: AnswerDeny, Source: SourcePolicy, Note: "not answered: " + err.Error()}
	if lerr := b.record(Entry{Request: r, Decision: d}); lerr != nil {
		b.log.Error("action log", "request", r.ID, "err", lerr)
	}
	return err
}

// finish stamps d with r's ID and logs it. A decision that cannot be logged
// is not returned: the action must not run unrecorded.
func (b *Broker) finish(r Request, d Decision) (Decision, error) {
	d.RequestID = r.ID
	if err := b.record(Entry{Request: r, Decision: d}); err != nil {
		return Decision{}, fmt.Errorf("%s request %s: %w", r.Kind, r.ID, err)
	}
	return d, nil
}

// validPicks are the picks that name an entry of set, each once, in
// order; an empty list stays empty (not nil: none accepted).
func validPicks(picks []int, set *ChangeSet) []int {
	out := []int{}
	if set == nil {
		return out
	}
	seen := map[int]bool{}
	for _, i := range picks {
		if i >= 0 && i < len(set.Entries) && !seen[i] {
			seen[i] = true
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}
