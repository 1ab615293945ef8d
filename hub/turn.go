package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// turnRun is the state of one running turn, shared by the operator's
// goroutine, the spokes working on it and their gates.
type turnRun struct {
	st    *memory.Store // the chat's store: the spokes' namespaces live here
	chat  string
	seq   uint64 // as reported in events: 0 for a private query
	query string
	plan  Plan
	// private: nothing of the turn reaches long-term memory; fresh (a
	// private query): its spokes start with no context and log nothing.
	private, fresh bool
	// undrafted: the caller shows no draft before the plan (AskOptions).
	undrafted bool
	// broker decides the turn's permissions and takes its notes; nil: the
	// operator's (a private turn always has its own, or none at all).
	broker *permissions.Broker
	// session is the client session the turn runs for (its context's,
	// permissions.WithSession): every request of the turn carries it.
	session string
	// stop ends the turn with a cause (a dialog no one could answer).
	stop context.CancelCauseFunc
	// folder is the folder the chat was started in (Chat.Folder).
	folder string

	// ledger traces where the turn's values came from (provenance.go).
	ledger *judge.Ledger

	mu      sync.Mutex // serialises emit: events never arrive concurrently
	emitFn  func(Event)
	execOK  map[string]bool // apps allowed to run in this turn
	results []StepResult
	served  []string                 // apps whose spokes logged an interaction
	own     map[string]*spokes.Spoke // a private query's own spokes
	// counts are the calls and ISC requests made so far, per step and
	// function ("call\x00s1\x00send"); context the apps whose context
	// (description, memory) the ledger holds.
	counts  map[string]int
	context map[string]bool
	// got are the data labels each step has received (shared data, ISC
	// answers): its result carries them on, with its own.
	got map[string][]string
	// values are the typed values of the steps that ended, and entities
	// the hub entities the turn shared: what the bindings refer to.
	values   map[string]json.RawMessage
	entities map[string]string
	// unmet says, per step, why the call of its function was not the one
	// its plan bound (so a step with no value can say why).
	unmet map[string]string
	// activity is the turn's log of calls and decisions (Turn.Activity).
	activity []Activity
	// pendingSets are the change sets left pending in this turn: not
	// asked again before it ends (changes.go).
	pendingSets map[string]bool
	// answer is the answer's parts, as the step that answers wrote them
	// (parts.go).
	answer Parts
	// refused are the steps that did not do their work because a request
	// they needed was denied (Event.Refused).
	refused []string
}

// noteRefused keeps that the step's function fn of app did not run
// because a request it needed was denied, and why.
func (t *turnRun) noteRefused(app, fn, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.refused = append(t.refused, fmt.Sprintf("%s.%s did not run — %s", app, fn, why))
}

// refusedSteps are the turn's refused steps (noteRefused), in the order
// they ended.
func (t *turnRun) refusedSteps() []string {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.refused)
}

// noteUnmet keeps why a call of step's function was not the expected one.
func (t *turnRun) noteUnmet(step, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.unmet[step] = why
}

// noValue says why step s ended without a typed value.
func (t *turnRun) noValue(s Step, fn string) string {
	t.mu.Lock()
	why := t.unmet[s.ID]
	t.mu.Unlock()
	if why != "" {
		return fmt.Sprintf("%s called %s, but not as the plan bound it: %s", s.App, fn, why)
	}
	return fmt.Sprintf("%s made no call of %s", s.App, fn)
}

// setValue keeps the typed value of a step that ended.
func (t *turnRun) setValue(step string, v json.RawMessage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.values[step] = v
}

// received notes that step now holds data with labels.
func (t *turnRun) received(step string, labels []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.got[step] = append(t.got[step], labels...)
}

// receivedLabels are the labels of the data step has received.
func (t *turnRun) receivedLabels(step string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.got[step])
}

// allowedToRun reports whether app may run in this turn already.
func (t *turnRun) allowedToRun(app string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.execOK[app]
}

// allowRun lets app run for the rest of the turn.
func (t *turnRun) allowRun(app string) {
	t.mu.Lock()
	t.execOK[app] = true
	t.mu.Unlock()
}

// count counts one more call (kind "call") or ISC request ("isc") of fn
// in step and returns how many there have been.
func (t *turnRun) count(kind, step, fn string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	k := kind + "\x00" + step + "\x00" + fn
	t.counts[k]++
	return t.counts[k]
}

func (t *turnRun) emit(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.Chat, e.Turn = t.chat, t.seq
	if a, ok := activityOf(e); ok && len(t.activity) < maxActivity {
		t.activity = append(t.activity, a)
	}
	t.emitFn(e)
}

// logged is the turn's activity as it stands.
func (t *turnRun) logged() []Activity {
	if t == nil {
		return nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.activity)
}

func (t *turnRun) serve(app string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !slices.Contains(t.served, app) {
		t.served = append(t.served, app)
	}
}

func (t *turnRun) servedApps() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return slices.Clone(t.served)
}

func (o *Operator) startTurn(rs runSpec, it memory.Interaction, emit func(Event)) *turnRun {
	tr := &turnRun{st: rs.st, chat: it.Chat, seq: it.Seq, query: it.Input, private: rs.private, fresh: rs.fresh, folder: rs.folder, undrafted: rs.undrafted,
		emitFn: emit, execOK: map[string]bool{}, own: map[string]*spokes.Spoke{},
		ledger: judge.NewLedger(), counts: map[string]int{}, context: map[string]bool{}, got: map[string][]string{},
		values: map[string]json.RawMessage{}, entities: map[string]string{}, unmet: map[string]string{}}
	tr.ledger.User(judge.ScopeQuery, it.Input)
	if rs.fresh {
		tr.seq = 0
	}
	o.mu.Lock()
	o.running[it.Chat] = tr
	o.mu.Unlock()
	return tr
}

// endTurn forgets the running turn, stops a private query's own spokes,
// and wakes the memory worker.
func (o *Operator) endTurn(tr *turnRun) {
	o.mu.Lock()
	delete(o.running, tr.chat)
	o.mu.Unlock()
	tr.mu.Lock()
	own := tr.own
	tr.own = nil
	tr.mu.Unlock()
	for _, sp := range own {
		sp.Stop()
	}
	o.dropPrivate(tr)
	if o.mem != nil {
		o.mem.turnEnded()
	}
}

func (o *Operator) turnsRunning() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.running)
}

// spokeFor returns the spoke that serves app in the turn: the chat's, or
// for a private query one of its own, made fresh and stopped when the
// turn ends. A private query's spokes keep the app's data where the chat
// keeps it, but log nothing.
func (o *Operator) spokeFor(tr *turnRun, app string) (*spokes.Spoke, error) {
	if !tr.fresh {
		return o.spoke(tr.st, tr.chat, app)
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.own == nil {
		return nil, errors.New("the request has ended")
	}
	if sp, ok := tr.own[app]; ok {
		return sp, nil
	}
	sp, err := o.newSpoke(tr.st, tr.chat, app, true)
	if err != nil {
		return nil, err
	}
	tr.own[app] = sp
	return sp, nil
}

func (o *Operator) turn(chat string) *turnRun {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.running[chat]
}

// namedApps lists installed apps whose names appear as words in the query.
func (o *Operator) namedApps(query string) []string {
	if o.opts.Apps == nil {
		return nil
	}
	var out []string
	for _, name := range o.opts.Apps.Names() {
		if !o.Enabled(name) {
			continue
		}
		if regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(name) + `\b`).MatchString(query) {
			out = append(out, name)
		}
	}
	return out
}

// brokerOf is who decides the turn's permissions: its own broker (a
// private turn's), else the operator's; nil when there is none.
func (o *Operator) brokerOf(tr *turnRun) *permissions.Broker {
	if tr != nil && (tr.broker != nil || tr.private) {
		return tr.broker
	}
	return o.opts.Broker
}

// ask puts a permission request to the broker, reporting it and its
// decision as events. Without a broker (no apps) everything is denied.
func (o *Operator) ask(ctx context.Context, tr *turnRun, r permissions.Request) (permissions.Decision, error) {
	b := o.brokerOf(tr)
	if b == nil {
		return permissions.Decision{Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "no permission broker"}, nil
	}
	if r.ID == "" {
		r.ID = newID()
	}
	if tr != nil {
		r.Session, r.Chat, r.Private = tr.session, tr.chat, tr.private
		if ws := o.opts.Workspace; ws != "" && tr.folder != "" && tr.folder != ws {
			r.Folder, r.ChatFolder = ws, tr.folder
		}
		tr.emit(Event{Kind: EventPermission, Permission: &r})
	}
	d, err := b.Request(ctx, r)
	if err != nil {
		// Every permission event gets its decision, even when no one
		// answered (cancelled, no prompter, a store failure): a denial.
		if tr != nil {
			tr.emit(Event{Kind: EventDecision, Decision: &permissions.Decision{RequestID: r.ID, Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "not answered: " + err.Error()}})
		}
		err = fmt.Errorf("permission for %s %s: %w", r.Kind, r.Object, err)
		if tr != nil && tr.stop != nil && errors.Is(err, permissions.ErrUnanswerable) {
			// Nothing of the turn goes on without its answer: it ends
			// here, unfinished, and can be run again with someone (or a
			// policy) to answer.
			tr.stop(err)
		}
		return d, err
	}
	if tr != nil {
		tr.emit(Event{Kind: EventDecision, Decision: &d})
	}
	return d, nil
}

// note writes a hub observation to the action log of the turn's broker
// (the operator's when tr is nil).
func (o *Operator) note(tr *turnRun, kind, subject, detail string) {
	if b := o.brokerOf(tr); b != nil {
		chat := ""
		if tr != nil {
			chat = tr.chat
		}
		if err := b.NoteIn(chat, kind, subject, detail); err != nil {
			o.log.Warn("action log note", "kind", kind, "err", err)
		}
	}
}

// resolveApps chooses an app for every step that several apps could
// serve: a rule, the user's default (a permanent select grant), or one
// select dialog with every candidate; a policy never chooses.
func (o *Operator) resolveApps(ctx context.Context, tr *turnRun, plan Plan) (Plan, error) {
	for i, s := range plan.Steps {
		if s.App != "" {
			continue
		}
		cands := o.providers(s.Functionality)
		// One dialog with every candidate: which app serves is the
		// person's choice — or a rule's, or the default a permanent answer
		// made — never a policy's (ConcernChoice keeps it from routine).
		r := permissions.Request{
			Kind: permissions.KindSelect, Subject: "hub", Function: s.Functionality, Choices: cands,
			Detail: fmt.Sprintf("Your request needs %s, which %d apps offer: %s. Which should serve it? (allow permanently to make it the default)", s.Functionality, len(cands), strings.Join(cands, ", ")),
		}
		judge.Assessment{Expected: true, Why: fmt.Sprintf("step %s needs %s", s.ID, s.Functionality), Choice: true, Candidates: cands}.Apply(&r)
		d, err := o.ask(ctx, tr, r)
		if err != nil {
			return plan, err
		}
		if !d.Allowed || d.Choice == "" {
			why := "no app chosen for " + s.Functionality + " (offered: " + strings.Join(cands, ", ") + ")"
			if d.Note != "" {
				why += ": " + d.Note
			}
			return plan, errors.New(why)
		}
		plan.Steps[i].App = d.Choice
	}
	return plan, nil
}

// quote renders a value for a dialog.
func quote(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage(`null`)
	}
	return b
}

// recordAppContext puts into the turn's ledger, once per app, what the
// app authored that its spoke's model reads besides its calls' outputs:
// its description, its functions' descriptions, and its memory of this
// chat (summary and recent answers). A value taken from them is then
// attributed to the app rather than called unknown.
func (o *Operator) recordAppContext(tr *turnRun, app string) {
	tr.mu.Lock()
	seen := tr.context[app]
	tr.context[app] = true
	tr.mu.Unlock()
	if seen || o.opts.Apps == nil {
		return
	}
	a, ok := o.opts.Apps.App(app)
	if !ok {
		return
	}
	m := a.Manifest()
	tr.ledger.AppText(app, m.Description)
	for _, f := range m.Functions {
		tr.ledger.AppText(app, f.Description)
	}
	if tr.fresh {
		return
	}
	ns, err := tr.st.Namespace(SpokeOwner(app))
	if err != nil {
		return
	}
	if sum, err := ns.LongTerm().Summary(tr.chat); err == nil {
		tr.ledger.AppText(app, sum.Text)
	}
	if its, err := ns.Recent(tr.chat, 2*max(o.opts.SpokeHistory, 1)); err == nil {
		for _, it := range its {
			tr.ledger.AppText(app, it.Output)
		}
	}
}
