package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sync"

	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// turnRun is the state of one running turn, shared by the operator's
// goroutine, the spokes working on it and their gates.
type turnRun struct {
	st    *memory.Store
	chat  string
	seq   uint64
	query string
	plan  Plan

	mu      sync.Mutex // serialises emit: events never arrive concurrently
	emitFn  func(Event)
	execOK  map[string]bool // apps allowed to run in this turn
	results []StepResult
}

func (t *turnRun) emit(e Event) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e.Chat, e.Turn = t.chat, t.seq
	t.emitFn(e)
}

func (o *Operator) startTurn(st *memory.Store, it memory.Interaction, emit func(Event)) *turnRun {
	tr := &turnRun{st: st, chat: it.Chat, seq: it.Seq, query: it.Input, emitFn: emit, execOK: map[string]bool{}}
	o.mu.Lock()
	o.running[it.Chat] = tr
	o.mu.Unlock()
	return tr
}

func (o *Operator) endTurn(chat string) {
	o.mu.Lock()
	delete(o.running, chat)
	o.mu.Unlock()
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
		if regexp.MustCompile(`(?i)\b` + regexp.QuoteMeta(name) + `\b`).MatchString(query) {
			out = append(out, name)
		}
	}
	return out
}

// ask puts a permission request to the broker, reporting it and its
// decision as events. Without a broker (no apps) everything is denied.
func (o *Operator) ask(ctx context.Context, tr *turnRun, r permissions.Request) (permissions.Decision, error) {
	if o.opts.Broker == nil {
		return permissions.Decision{Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "no permission broker"}, nil
	}
	if r.ID == "" {
		r.ID = newID()
	}
	if tr != nil {
		tr.emit(Event{Kind: EventPermission, Permission: &r})
	}
	d, err := o.opts.Broker.Request(ctx, r)
	if err != nil {
		return d, fmt.Errorf("permission for %s %s: %w", r.Kind, r.Object, err)
	}
	if tr != nil {
		tr.emit(Event{Kind: EventDecision, Decision: &d})
	}
	return d, nil
}

// note writes a hub observation to the action log.
func (o *Operator) note(kind, subject, detail string) {
	if o.opts.Broker != nil {
		o.opts.Broker.Note(kind, subject, detail)
	}
}

// resolveApps chooses an app for every step that several apps could
// serve: the user's default (a permanent select grant) or a select
// dialog per candidate until one is allowed.
func (o *Operator) resolveApps(ctx context.Context, tr *turnRun, plan Plan) (Plan, error) {
	for i, s := range plan.Steps {
		if s.App != "" {
			continue
		}
		cands := o.opts.Apps.Providers(s.Functionality)
		for _, c := range cands {
			d, err := o.ask(ctx, tr, permissions.Request{
				Kind: permissions.KindSelect, Subject: "hub", Object: c, Function: s.Functionality,
				Detail:   fmt.Sprintf("Use %s for %s? (%d apps offer it; allow permanently to make %s the default)", c, s.Functionality, len(cands), c),
				Expected: true,
			})
			if err != nil {
				return plan, err
			}
			if d.Allowed {
				plan.Steps[i].App = c
				break
			}
		}
		if plan.Steps[i].App == "" {
			return plan, fmt.Errorf("no app chosen for %s", s.Functionality)
		}
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
