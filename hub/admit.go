package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// share is the data a step needs from across a bulkhead — the fields of
// earlier results it binds and the hub-held values it needs — gathered
// before anyone is asked, so that one dialog can ask for it.
type share struct {
	data    json.RawMessage
	labels  []string
	prov    []permissions.Provenance
	sources map[string]json.RawMessage // by "<app>.<function>": allowed once shared
	// entities are the hub entities shared, by name: what entity
	// bindings resolve to once the share is allowed.
	entities map[string]string
	// freeText are the bound fields that are free text an app wrote;
	// masked the entities whose text the hub masked when it stored them.
	freeText, masked []string
	what             string   // "s1.fare_usd (metro_hail.estimate_fare, step s1)"
	why              []string // what the plan says, for the judgement
}

func (sh *share) add(key string, value json.RawMessage) {
	sh.data = mergeData(sh.data, quote(map[string]json.RawMessage{key: value}))
}

// gatherShare collects what step s needs: the fields of earlier results
// its bindings reference (done holds the results), and the hub entities
// it needs. Only a bound field flows — a step that depends on another
// but binds none of its fields gets nothing of it — with the labels of
// the step it comes from. nil when it needs nothing, or nothing of it is
// there.
func (o *Operator) gatherShare(tr *turnRun, s Step, done map[string]StepResult) *share {
	sh := &share{sources: map[string]json.RawMessage{}, entities: map[string]string{}}
	var what []string
	var fields []string
	for _, b := range s.Bind {
		if b.From == "" {
			continue
		}
		id, path, _ := strings.Cut(b.From, ".")
		r := done[id]
		if r.Value == nil {
			continue
		}
		var v any
		if json.Unmarshal(r.Value, &v) != nil {
			continue
		}
		vals := judge.At(v, strings.Split(path, "."))
		if len(vals) == 0 {
			continue
		}
		var value json.RawMessage
		if len(vals) == 1 {
			value = quote(vals[0])
		} else {
			value = quote(vals)
		}
		sh.add(b.From, value)
		// A field carries its step's labels and those of whatever that
		// step received: labels are never lost by passing through a step.
		sh.labels = append(sh.labels, o.labelsOf(r.App, r.Functionality)...)
		sh.labels = append(sh.labels, tr.receivedLabels(r.Step)...)
		src := r.App + "." + o.mappedFunction(r.App, r.Functionality)
		sh.sources[src] = mergeData(sh.sources[src], quote(map[string]json.RawMessage{b.From: value}))
		if o.freeText(r.Functionality, path) {
			sh.freeText = append(sh.freeText, b.From)
		}
		for _, p := range tr.ledger.Trace(quote(map[string]json.RawMessage{b.From: value}), nil, s.App, nil) {
			if !p.Trusted() {
				p.Source = src
			}
			sh.prov = append(sh.prov, p)
		}
		fields = append(fields, fmt.Sprintf("%s (%s, step %s)", b.From, src, id))
	}
	if len(fields) > 0 {
		what = append(what, strings.Join(fields, ", "))
		sh.why = append(sh.why, fmt.Sprintf("step %s binds %s", s.ID, strings.Join(fields, ", ")))
	}
	if names := o.gatherFacts(tr, s, sh); len(names) > 0 {
		what = append(what, "what the hub holds of "+strings.Join(names, ", "))
		sh.why = append(sh.why, fmt.Sprintf("step %s needs %s", s.ID, strings.Join(names, ", ")))
	}
	if len(sh.data) == 0 {
		return nil
	}
	sh.what = strings.Join(what, ", and ")
	return sh
}

// freeText reports whether the field at path of fn's result is free
// text: a string its schema does not close (an enum, a format of dates
// and the like).
func (o *Operator) freeText(fn, path string) bool {
	if fn == ChatFunctionality {
		return true
	}
	s := o.responseSchema(fn)
	for _, name := range strings.Split(path, ".") {
		for {
			if items, ok := s["items"].(map[string]any); ok {
				s = items
				continue
			}
			break
		}
		props, _ := s["properties"].(map[string]any)
		s, _ = props[name].(map[string]any)
	}
	if s == nil {
		return true
	}
	t, _ := s["type"].(string)
	return (t == "string" || t == "") && !apps.ClosedText(s)
}

// dataRequest is the data permission for a share, with the hub's
// judgement: the plan's own flow, so expected unless what it carries
// (labels the receiver is not cleared for, instruction-like text) makes
// it otherwise.
func (o *Operator) dataRequest(s Step, sh *share) permissions.Request {
	a := judge.Assessment{Expected: true, Why: strings.Join(sh.why, "; "), Receiver: s.App, Carried: sh.labels,
		Labels: judge.Uncleared(sh.labels, o.clearance(s.App)), Instructions: judge.InstructionLike(string(sh.data)), Provenance: sh.prov}
	for _, name := range sh.masked {
		a.Instructions = append(a.Instructions, "masked in "+name+" when the hub stored it")
	}
	if len(sh.freeText) > 0 && o.outOfProcess(s.App) {
		// An app's free text, read by a program that runs outside bulkhead:
		// bound by the plan, but never routine.
		a.FreeText = sh.freeText
	}
	detail := fmt.Sprintf("Share %s with %s", sh.what, s.App) + sh.freeTextNote()
	r := permissions.Request{Kind: permissions.KindData, Subject: "hub", Object: s.App, Function: s.Functionality, Args: sh.data, Detail: detail}
	a.Apply(&r)
	return r
}

// freeTextNote says which fields of the share are free text an app
// wrote ("" when none is).
func (sh *share) freeTextNote() string {
	if len(sh.freeText) == 0 {
		return ""
	}
	return fmt.Sprintf(" (%s: free text an app wrote, bound by the plan)", strings.Join(sh.freeText, ", "))
}

// outOfProcess reports whether app runs outside bulkhead (an MCP
// server): what it is given, it may send anywhere its process reaches.
func (o *Operator) outOfProcess(app string) bool {
	a, ok := o.opts.Apps.App(app)
	if !ok {
		return false
	}
	_, ok = a.(apps.PerSpoke)
	return ok
}

// execRequest is the permission for s's app to run, showing what it will
// be asked.
func (o *Operator) execRequest(tr *turnRun, s Step, query string) permissions.Request {
	args := quote(map[string]string{"query": query})
	r := permissions.Request{Kind: permissions.KindExec, Subject: "hub", Object: s.App, Function: s.Functionality, Args: args,
		Detail: fmt.Sprintf("Run %s for step %s (%s)", s.App, s.ID, s.Functionality)}
	judge.Assessment{Expected: true, Why: fmt.Sprintf("step %s uses %s", s.ID, s.Functionality),
		Provenance: tr.ledger.Trace(args, nil, s.App, nil)}.Apply(&r)
	return r
}

// errStepRefused ends a step the user did not let run.
var errStepRefused = errors.New("refused")

// admit decides whether step s may run and with which data: one dialog
// per step. A step whose functionality cannot be undone gets no exec
// dialog of its own: its call will ask, with its exact arguments. When the app's exec and the data both need an answer, one
// data dialog asks both ("Run mail for …, with the data below?"); its
// answer decides the exec too (logged as such), and a denial ends the
// step. An app already allowed to run in this turn, or whose exec a rule
// or grant decides, gets only the data dialog; denying it runs the app
// without the data. It returns the data to pass (nil when there is none).
func (o *Operator) admit(ctx context.Context, tr *turnRun, s Step, query string, sh *share) (json.RawMessage, error) {
	needExec := s.App != VanillaApp && s.App != monolithApp && !tr.allowedToRun(s.App)
	if needExec {
		er := o.execRequest(tr, s, query)
		d, settled, err := o.settle(tr, er)
		if err != nil {
			return nil, err
		}
		switch {
		case settled && !d.Allowed:
			return nil, refusal(s.App+" to run", d.Note)
		case settled:
			tr.allowRun(s.App)
		case sh == nil && o.effectOf(s.App, s.Functionality) == apps.EffectIrreversible:
			// The step's own work cannot be undone, so its call will be put
			// to the user with its exact arguments: that dialog decides,
			// and a second one to let the app start adds nothing.
			o.record(tr, er, permissions.Decision{Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourcePolicy,
				Note: "folded into the dialog of the step's irreversible call, which asks with its exact arguments"})
			tr.allowRun(s.App)
		case sh == nil || o.shareSettled(tr, s, sh):
			// Nothing to share, or a rule or grant decides the share:
			// the exec dialog alone.
			d, err := o.ask(ctx, tr, er)
			if err != nil {
				return nil, err
			}
			if !d.Allowed {
				return nil, refusal(s.App+" to run", d.Note)
			}
			tr.allowRun(s.App)
			if sh != nil {
				return o.shareAfterExec(ctx, tr, s, sh)
			}
			return nil, nil
		default:
			// One dialog for both.
			dr := o.dataRequest(s, sh)
			dr.ID = newID()
			dr.Detail = fmt.Sprintf("Run %s for step %s, asking it: %s — and share %s with it", s.App, s.ID, firstLine(query), sh.what) + sh.freeTextNote()
			d, err := o.ask(ctx, tr, dr)
			if err != nil {
				return nil, err
			}
			decided := permissions.Decision{Answer: permissions.AnswerOnce, Allowed: true, Source: d.Source, Note: "decided with the data request " + dr.ID}
			if !d.Allowed {
				decided.Answer, decided.Allowed = permissions.AnswerDeny, false
			}
			o.record(tr, er, decided)
			if !d.Allowed {
				return nil, refusal(s.App+" to run with that data", d.Note)
			}
			tr.allowRun(s.App)
			o.shared(tr, s, sh)
			return sh.data, nil
		}
	}
	if sh == nil {
		return nil, nil
	}
	return o.shareAfterExec(ctx, tr, s, sh)
}

// shareAfterExec asks for the share of an app allowed to run: a denied
// share leaves it without the data.
func (o *Operator) shareAfterExec(ctx context.Context, tr *turnRun, s Step, sh *share) (json.RawMessage, error) {
	d, err := o.ask(ctx, tr, o.dataRequest(s, sh))
	if err != nil || !d.Allowed {
		return nil, nil
	}
	o.shared(tr, s, sh)
	return sh.data, nil
}

// shareSettled reports whether a rule, a grant or trusted-session mode
// would decide the share without a person (nothing is logged).
func (o *Operator) shareSettled(tr *turnRun, s Step, sh *share) bool {
	b := o.brokerOf(tr)
	r := o.dataRequest(s, sh)
	r.Session = tr.session
	return b == nil || b.Decides(r)
}

// shared records in the ledger what the user let flow to s's app, and the
// labels the step now holds.
func (o *Operator) shared(tr *turnRun, s Step, sh *share) {
	for via, v := range sh.sources {
		tr.ledger.Allowed(s.App, via, v)
	}
	tr.mu.Lock()
	maps.Copy(tr.entities, sh.entities)
	tr.mu.Unlock()
	tr.received(s.ID, sh.labels)
}

func refusal(what, note string) error {
	msg := "you did not allow " + what
	if note != "" {
		msg += ": " + note
	}
	return fmt.Errorf("%w: %s", errStepRefused, msg)
}

// settle decides r without a dialog when a rule, grant or trusted mode
// does, reporting it as events like ask; settled is false when r needs a
// person.
func (o *Operator) settle(tr *turnRun, r permissions.Request) (permissions.Decision, bool, error) {
	b := o.brokerOf(tr)
	if b == nil {
		return permissions.Decision{Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "no permission broker"}, true, nil
	}
	if r.ID == "" {
		r.ID = newID()
	}
	r.Session, r.Chat, r.Private = tr.session, tr.chat, tr.private
	d, ok, err := b.Settled(r)
	if err != nil || !ok {
		return d, false, err
	}
	tr.emit(Event{Kind: EventPermission, Permission: &r})
	tr.emit(Event{Kind: EventDecision, Decision: &d})
	return d, true, nil
}

// record logs r as decided by the answer to another request.
func (o *Operator) record(tr *turnRun, r permissions.Request, d permissions.Decision) {
	b := o.brokerOf(tr)
	if b == nil {
		return
	}
	if r.ID == "" {
		r.ID = newID()
	}
	r.Session, r.Chat, r.Private = tr.session, tr.chat, tr.private
	d, err := b.Record(r, d)
	if err != nil {
		o.log.Warn("action log", "err", err)
		return
	}
	tr.emit(Event{Kind: EventPermission, Permission: &r})
	tr.emit(Event{Kind: EventDecision, Decision: &d})
}

// explainTimeout bounds how long an app may take to say what a call
// would touch.
const explainTimeout = 2 * time.Second

// maxExplain bounds what it says.
const maxExplain = 400

// explain asks an app that can (apps.Explainer) what a call of fn with
// args would touch, for the dialog; "" when it cannot say. An app that
// runs out of process is not asked (it would start for it).
func (o *Operator) explain(ctx context.Context, tr *turnRun, app, fn string, args json.RawMessage) string {
	if o.opts.Apps == nil || tr == nil {
		return ""
	}
	a, ok := o.opts.Apps.App(app)
	if !ok {
		return ""
	}
	if _, ok := a.(apps.PerSpoke); ok {
		return ""
	}
	ex, ok := a.(apps.Explainer)
	if !ok {
		return ""
	}
	ns, err := tr.st.Namespace(SpokeOwner(app))
	if err != nil {
		return ""
	}
	ctx, cancel := context.WithTimeout(ctx, explainTimeout)
	defer cancel()
	text, err := ex.Explain(ctx, apps.Call{Function: fn, Args: args, Memory: ns, NotFound: memory.ErrNotFound})
	if err != nil {
		return clip("it could not say: "+err.Error(), maxExplain)
	}
	return clip(text, maxExplain)
}

// capable is what a model client can say of its abilities (*llm.Client).
type capable interface {
	Model() string
	Can(ctx context.Context, capability string) (bool, error)
	ModelsThatCan(ctx context.Context, capability string) ([]string, error)
}

// refusedUpFront reports whether a turn's error is canServe's refusal
// and nothing else: the hub's own words (only the hub makes an
// *llm.IncapableError), the app not yet run, the model names Ollama's.
// It is stored as said, not masked: its advice ("--model, or …") reads
// to the guard as text addressing the assistant.
func refusedUpFront(err error) bool {
	var inc *llm.IncapableError
	return errors.As(err, &inc) && err.Error() == inc.Error()
}

// canServe checks, before anything is asked, that app's spoke model can
// call tools — an app's spoke works through them. A model that cannot is
// refused with the installed models that can; a server that does not
// say is taken at its word.
func (o *Operator) canServe(ctx context.Context, app string) error {
	if app == VanillaApp || app == monolithApp {
		return nil
	}
	m, err := o.opts.SpokeModel(app)
	if err != nil {
		return err
	}
	c, ok := m.(capable)
	if !ok {
		return nil
	}
	name := modelIn(ctx, c)
	o.mu.Lock()
	known, seen := o.toolModels[name]
	o.mu.Unlock()
	if seen && known {
		return nil
	}
	can, err := c.Can(ctx, llm.CapTools)
	if err != nil || can {
		if err == nil {
			o.mu.Lock()
			o.toolModels[name] = true
			o.mu.Unlock()
		}
		return nil // an unreachable server fails the call itself, more clearly
	}
	alts, _ := c.ModelsThatCan(ctx, llm.CapTools)
	return &llm.IncapableError{Model: name, Role: "the model of " + app + "'s spoke", Capability: "tool calling", Alternatives: alts}
}

// modelIn names the model a call of m under ctx goes to: the session's
// choice (engine.WithModels), else m's own.
func modelIn(ctx context.Context, m interface{ Model() string }) string {
	if in, ok := m.(interface{ ModelIn(context.Context) string }); ok {
		return in.ModelIn(ctx)
	}
	return m.Model()
}
