package hub

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// What an app's process wrote into a folder it shares with the user
// (DESIGN.md §3, invariant 10) waits in a layer of its own (package
// changes) until the person decides it: after every call of an app —
// and when its step ends, for a server that writes between calls — the
// hub reads the layers the app's processes left for this chat and puts
// each as a change set to the person (KindChanges), with the hub's
// warning; when a chat's turn starts, the sets it left pending are
// offered again. Accepted, bulkhead applies them itself; discarded, they
// go whole; unanswered by a person (a policy, no one to ask), they stay
// pending: `bulkhead changes` and the permission manager list them.

// settleChanges decides the change sets that app's processes (every app's,
// when app is "") left for the turn's chat. expected says whether the
// call that wrote them was the one the plan's step expects. It returns
// words for the app's model on what became of them ("" when there were
// none).
func (o *Operator) settleChanges(ctx context.Context, tr *turnRun, app string, expect writeExpect) string {
	store := o.opts.Changes
	if store == nil || tr == nil {
		return ""
	}
	ls, err := store.Layers()
	if err != nil {
		o.log.Warn("list the change sets", "err", err)
		return ""
	}
	var notes []string
	for _, l := range ls {
		if l.Owner.Chat != tr.chat || l.Owner.Private != tr.private || app != "" && l.Owner.App != app || tr.leftPending(l.ID) {
			continue
		}
		if n := o.review(ctx, tr, store, l, expect); n != "" {
			notes = append(notes, n)
		}
		if ctx.Err() != nil {
			break
		}
	}
	return strings.Join(notes, " ")
}

// review puts one layer's change set to the person and does what they
// answer.
func (o *Operator) review(ctx context.Context, tr *turnRun, store *changes.Store, l changes.Layer, expect writeExpect) string {
	held := store.Held(l.ID)
	if l.Empty() {
		if !held {
			store.Drop(l)
		}
		return ""
	}
	set, err := store.Read(ctx, l)
	if err != nil {
		o.log.Warn("read a change set", "set", l.ID, "err", err)
		return fmt.Sprintf("What you wrote in %s could not be read (%v): it is kept, not applied.", l.Folder, err)
	}
	if set.Empty() {
		if !held {
			_ = store.Remove(l.ID)
		}
		return ""
	}
	d, err := o.ask(ctx, tr, changesRequest(l.Owner.App, set, expect))
	switch {
	case err != nil:
		tr.leavePending(l.ID)
		return fmt.Sprintf("What you wrote in %s was not answered (%v): it waits for the user's review and is not in the folder.", l.Folder, err)
	case d.Allowed:
		res, err := store.Accept(set, d.Picks)
		if err != nil {
			o.note(tr, "changes", l.Owner.App, fmt.Sprintf("applying %s to %s failed: %v", set.View.ID, l.Folder, err))
			return fmt.Sprintf("Your changes in %s were accepted but could not be applied (%v); they are kept.", l.Folder, err)
		}
		o.note(tr, "changes", l.Owner.App, appliedWords(set, res))
		return fmt.Sprintf("The user accepted %d of your %d changes in %s; %s", len(res.Applied), len(set.View.Entries), l.Folder, failedWords(set, res))
	case d.Pending():
		tr.leavePending(l.ID)
		why := ""
		if d.Note != "" {
			why = " (" + d.Note + ")"
		}
		return fmt.Sprintf("Your changes in %s wait for the user's review%s; they are not in the folder.", l.Folder, why)
	default:
		if err := store.Discard(set); err != nil {
			o.log.Warn("discard a change set", "set", l.ID, "err", err)
		}
		return fmt.Sprintf("The user discarded your changes in %s; none of them is in the folder.", l.Folder)
	}
}

// changesRequest is the dialog of set, with the hub's warning: whether
// the plan expected the write, and how many of its entries something
// else may run or trust, changed underneath, or never land.
// writeExpect is whether the plan expected a change set's writes, and
// when not, why not, in words that are true of it.
type writeExpect struct {
	ok  bool
	why string
}

var (
	// resumedWrites: a set left from before this turn.
	resumedWrites = writeExpect{why: "it was left from an earlier turn (a crash, a restart or an unanswered dialog), which no plan of this request expects"}
	// betweenCalls: a set a server wrote outside any of its calls.
	betweenCalls = writeExpect{why: "the app wrote it between its calls, not in a call the plan's step expects"}
	// outsideTurn: a pending set shown or decided outside its turn.
	outsideTurn = writeExpect{why: "it is decided outside its turn, where no plan expects it"}
)

// callExpect is what the plan expected of the writes of one call of fn.
func callExpect(fn apps.Function, v spokes.Verdict) writeExpect {
	switch {
	case !v.Expected:
		return writeExpect{why: fmt.Sprintf("the call of %s that wrote it is not the one the plan's step expects", fn.Name)}
	case fn.Effect == apps.EffectRead:
		return writeExpect{why: fmt.Sprintf("%s declares that it only reads", fn.Name)}
	}
	return writeExpect{ok: true}
}

func changesRequest(app string, set *changes.Set, expect writeExpect) permissions.Request {
	v := set.View
	expected := expect.ok
	r := permissions.Request{Kind: permissions.KindChanges, Subject: app, Object: v.Folder, Function: "write", Changes: &v, Expected: expected,
		Detail: fmt.Sprintf("%s wrote in %s: %s; nothing of it is in the folder until you accept it", app, v.Folder, v.Count())}
	var warned, conflicts, never int
	for _, e := range v.Entries {
		switch {
		case e.Never != "":
			never++
		case e.Conflict != "":
			conflicts++
		}
		if len(e.Warnings) > 0 {
			warned++
		}
	}
	var w []string
	if expected {
		w = append(w, "expected by the plan: the app's step writes here")
	} else {
		w = append(w, "NOT expected by the plan: "+expect.why)
		r.Concerns = append(r.Concerns, permissions.ConcernUnexpected)
	}
	if warned > 0 {
		what := "are files"
		if warned == 1 {
			what = "is a file"
		}
		w = append(w, fmt.Sprintf("%d of the %d entries %s something else may run or trust later (marked): read them", warned, len(v.Entries), what))
		r.Concerns = append(r.Concerns, permissions.ConcernRunsLater)
	}
	if conflicts > 0 {
		w = append(w, fmt.Sprintf("%d changed in your folder after the app started: accepting replaces your version", conflicts))
		r.Concerns = append(r.Concerns, permissions.ConcernConflict)
	}
	if never > 0 {
		w = append(w, fmt.Sprintf("%d are never applied (a fifo, a socket or a device)", never))
	}
	if v.More > 0 {
		w = append(w, fmt.Sprintf("%d more entries are not listed here: they stay pending (bulkhead changes show %s)", v.More, v.ID))
	}
	r.Warning = strings.Join(w, "; ")
	return r
}

func appliedWords(set *changes.Set, res changes.Result) string {
	return fmt.Sprintf("applied %d of %d entries of %s to %s; %s", len(res.Applied), len(set.View.Entries), set.View.ID, set.View.Folder, failedWords(set, res))
}

func failedWords(set *changes.Set, res changes.Result) string {
	if len(res.Failed) == 0 {
		return "all of them are in the folder."
	}
	var parts []string
	for i, why := range res.Failed {
		if len(parts) == 5 {
			parts = append(parts, fmt.Sprintf("and %d more", len(res.Failed)-5))
			break
		}
		p := "?"
		if i >= 0 && i < len(set.View.Entries) {
			p = set.View.Entries[i].Path
		}
		parts = append(parts, p+": "+why)
	}
	return "not applied (left pending): " + strings.Join(parts, "; ") + "."
}

// dropPrivate removes the change sets a private turn's processes left
// undecided (and no process holds): nothing of a private turn is kept.
func (o *Operator) dropPrivate(tr *turnRun) {
	store := o.opts.Changes
	if store == nil || tr == nil || !tr.private {
		return
	}
	ls, _ := store.Layers()
	for _, l := range ls {
		if l.Owner.Private && l.Owner.Chat == tr.chat && !store.Held(l.ID) {
			if err := store.Remove(l.ID); err != nil && !errors.Is(err, changes.ErrNoLayer) {
				o.log.Warn("remove a private turn's change set", "set", l.ID, "err", err)
			}
		}
	}
}

// Settle puts what the gate's app wrote during the call to the person
// (spokes.Gate).
//
// A write is expected only where the plan expected the call and the
// function declares it writes: what a function declared a read wrote is
// never routine.
func (g *gate) Settle(ctx context.Context, fn apps.Function, v spokes.Verdict) string {
	return g.o.settleChanges(ctx, g.o.turn(g.chat), g.app, callExpect(fn, v))
}

// Settle applies what the baseline's apps wrote, with no dialog: the
// baseline is meant to show what happens without the hub. The action
// log says what it applied.
func (g openGate) Settle(ctx context.Context, f apps.Function, _ spokes.Verdict) string {
	if g.changes == nil {
		return ""
	}
	app, _, _ := strings.Cut(f.Name, "__")
	ls, _ := g.changes.Layers()
	for _, l := range ls {
		if l.Owner.App != app || l.Owner.Chat != permissions.ChatOf(ctx) {
			continue
		}
		set, err := g.changes.Read(ctx, l)
		if err != nil || set.Empty() {
			continue
		}
		res, err := g.changes.Accept(set, nil)
		if g.broker != nil {
			r := changesRequest(app, set, outsideTurn)
			r.Warning, r.Chat = vanillaWarning, permissions.ChatOf(ctx)
			note := vanillaWarning
			if err != nil {
				note += "; applying failed: " + err.Error()
			} else {
				note += "; " + failedWords(set, res)
			}
			_, _ = g.broker.Record(r, permissions.Decision{Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourceVanilla, Note: note})
		}
	}
	return ""
}

// PendingSet is a change set waiting for the person, as the permission
// manager and `bulkhead changes` list it.
type PendingSet struct {
	ID      string    `json:"id"`
	App     string    `json:"app"`
	Folder  string    `json:"folder"`
	Chat    string    `json:"chat,omitempty"`
	Created time.Time `json:"created"`
	// Running: the process that writes it still runs (a server).
	Running bool `json:"running,omitempty"`
	Private bool `json:"private,omitempty"`
	// Count says its entries in words; Entries how many; Warned whether
	// one is warned of.
	Count   string `json:"count"`
	Entries int    `json:"entries"`
	Warned  bool   `json:"warned,omitempty"`
	// Err is why it could not be read.
	Err string `json:"err,omitempty"`
}

// ChangesOutcome is what deciding a pending set did.
type ChangesOutcome struct {
	// Applied are the paths written into the folder; Failed those not,
	// with why (they stay pending).
	Applied []string          `json:"applied,omitempty"`
	Failed  map[string]string `json:"failed,omitempty"`
	// Discarded: the set went whole.
	Discarded bool `json:"discarded,omitempty"`
}

// ErrNoChanges is matched by the error for a change set that is not
// there (or not the caller's to see).
var ErrNoChanges = changes.ErrNoLayer

// PendingChanges lists the change sets on disk that visible lets the
// caller see (a private chat's are its session's alone).
func (o *Operator) PendingChanges(ctx context.Context, visible func(changes.Owner) bool) []PendingSet {
	store := o.opts.Changes
	if store == nil {
		return nil
	}
	ls, _ := store.Layers()
	var out []PendingSet
	for _, l := range ls {
		if visible != nil && !visible(l.Owner) {
			continue
		}
		p := PendingSet{ID: l.ID, App: l.Owner.App, Folder: l.Folder, Chat: l.Owner.Chat, Created: l.Created, Running: store.Held(l.ID), Private: l.Owner.Private}
		if l.Empty() {
			continue
		}
		set, err := store.Read(ctx, l)
		switch {
		case err != nil:
			p.Err = err.Error()
		case set.Empty():
			continue
		default:
			p.Count, p.Entries, p.Warned = set.View.Count(), len(set.View.Entries), set.View.Warned()
		}
		out = append(out, p)
	}
	return out
}

// pendingSet reads the set id, where visible lets the caller see it.
func (o *Operator) pendingSet(ctx context.Context, id string, visible func(changes.Owner) bool) (*changes.Set, error) {
	store := o.opts.Changes
	if store == nil {
		return nil, fmt.Errorf("%w: %s", ErrNoChanges, id)
	}
	l, err := store.Layer(id)
	if err != nil {
		return nil, err
	}
	if visible != nil && !visible(l.Owner) {
		return nil, fmt.Errorf("%w: %s", ErrNoChanges, id)
	}
	return store.Read(ctx, l)
}

// ChangeSet is the pending set id, entry by entry, with its diffs.
func (o *Operator) ChangeSet(ctx context.Context, id string, visible func(changes.Owner) bool) (*permissions.Request, error) {
	set, err := o.pendingSet(ctx, id, visible)
	if err != nil {
		return nil, err
	}
	r := changesRequest(set.Layer.Owner.App, set, outsideTurn)
	r.ID, r.Chat = id, set.Layer.Owner.Chat
	return &r, nil
}

// DecideChanges is the person's answer to a pending set, given outside
// a turn (the permission manager, `bulkhead changes`): accept the
// entries picked (nil: all), or discard it. The action log records it
// as the person's.
func (o *Operator) DecideChanges(ctx context.Context, session, id string, accept bool, picks []int, visible func(changes.Owner) bool) (ChangesOutcome, error) {
	set, err := o.pendingSet(ctx, id, visible)
	if err != nil {
		return ChangesOutcome{}, err
	}
	store := o.opts.Changes
	r := changesRequest(set.Layer.Owner.App, set, outsideTurn)
	r.Session, r.Chat, r.Private = session, set.Layer.Owner.Chat, set.Layer.Owner.Private
	d := permissions.Decision{Answer: permissions.AnswerDeny, Source: permissions.SourceUser}
	var out ChangesOutcome
	if accept {
		res, err := store.Accept(set, picks)
		if err != nil {
			return out, err
		}
		d = permissions.Decision{Answer: permissions.AnswerOnce, Allowed: true, Source: permissions.SourceUser, Picks: picks, Note: failedWords(set, res)}
		for _, i := range res.Applied {
			out.Applied = append(out.Applied, set.View.Entries[i].Path)
		}
		for i, why := range res.Failed {
			if out.Failed == nil {
				out.Failed = map[string]string{}
			}
			out.Failed[set.View.Entries[i].Path] = why
		}
	} else {
		if err := store.Discard(set); err != nil {
			return out, err
		}
		out.Discarded = true
	}
	if b := o.opts.Broker; b != nil && !r.Private {
		if _, err := b.Record(r, d); err != nil {
			o.log.Warn("log a change set's decision", "set", id, "err", err)
		}
	}
	return out, nil
}

// leavePending marks the set id as left pending in this turn: it is
// not asked again before the turn ends.
func (tr *turnRun) leavePending(id string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.pendingSets == nil {
		tr.pendingSets = map[string]bool{}
	}
	tr.pendingSets[id] = true
}

func (tr *turnRun) leftPending(id string) bool {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.pendingSets[id]
}
