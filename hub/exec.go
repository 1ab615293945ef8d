package hub

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

func newID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// execute runs a resolved plan. A plan whose steps all route to the
// vanilla spoke is one vanilla call with the user's own words. A plan with
// one app step streams that app spoke's answer. Otherwise steps run in
// dependency order, independent ones concurrently, each in its own spoke,
// and a fresh vanilla spoke writes the answer from the typed results.
func (o *Operator) execute(ctx context.Context, tr *turnRun) (spokes.Result, error) {
	plan := tr.plan
	allVanilla := true
	for _, s := range plan.Steps {
		if s.App != VanillaApp {
			allVanilla = false
		}
	}
	if allVanilla {
		var needs []string
		for _, s := range plan.Steps {
			needs = append(needs, s.Needs...)
		}
		return o.runStep(ctx, tr, Step{ID: "s1", Functionality: ChatFunctionality, App: VanillaApp, Needs: needs}, nil, true)
	}
	if len(plan.Steps) == 1 {
		return o.runStep(ctx, tr, plan.Steps[0], nil, true)
	}
	done := map[string]StepResult{}
	var doneMu sync.Mutex

	var total llm.Usage
	for _, level := range levels(plan) {
		var wg sync.WaitGroup
		mu := &doneMu
		// Steps of a level read only the results of earlier levels.
		doneMu.Lock()
		before := maps.Clone(done)
		doneMu.Unlock()
		for _, s := range level {
			wg.Add(1)
			go func(s Step) {
				defer wg.Done()
				res, err := o.runStep(ctx, tr, s, before, false)
				sr := StepResult{Step: s.ID, App: s.App, Functionality: s.Functionality, Value: res.Value}
				if s.App == VanillaApp {
					sr.Value = quote(map[string]string{"text": res.Text})
				}
				var hw hubWords
				switch {
				case errors.As(err, &hw):
					sr.Error, sr.ErrorByHub = err.Error(), true
				case err != nil:
					sr.Error = err.Error()
				case sr.Value == nil:
					sr.Error, sr.ErrorByHub = "the app produced no result", true
				}
				if sr.Value != nil {
					tr.setValue(s.ID, sr.Value)
				}
				mu.Lock()
				total.Add(res.Usage)
				done[s.ID] = sr
				mu.Unlock()
			}(s)
		}
		wg.Wait()
		if ctx.Err() != nil {
			return spokes.Result{Usage: total, Status: memory.StatusCancelled}, ctx.Err()
		}
	}
	results := make([]StepResult, 0, len(plan.Steps))
	for _, s := range plan.Steps {
		results = append(results, done[s.ID])
	}
	tr.results = results
	tr.emit(Event{Kind: EventResults, Results: results})
	res, err := o.synthesize(ctx, tr, results)
	res.Usage.Add(total)
	return res, err
}

// levels groups steps so that each depends only on earlier groups.
func levels(p Plan) [][]Step {
	placed := map[string]int{}
	var out [][]Step
	for _, s := range p.Steps { // steps only depend on earlier ones
		lvl := 0
		for _, d := range s.DependsOn {
			if placed[d]+1 > lvl {
				lvl = placed[d] + 1
			}
		}
		placed[s.ID] = lvl
		for len(out) <= lvl {
			out = append(out, nil)
		}
		out[lvl] = append(out[lvl], s)
	}
	return out
}

// mappedFunction is the app's own function for a functionality.
func (o *Operator) mappedFunction(app, functionality string) string {
	if o.opts.Apps == nil {
		return functionality
	}
	if a, ok := o.opts.Apps.App(app); ok {
		if f := a.Manifest().Provides[functionality]; f != "" {
			return f
		}
	}
	return functionality
}

// runStep runs one step in its app's spoke, once admit has let it run
// with the data it needs (done holds the results of earlier steps). A
// chat step of a plan with several steps runs in a fresh spoke that logs
// nothing (like the synthesis): it may read app results, and what it
// writes from them must not sit in the plain chat's context later.
func (o *Operator) runStep(ctx context.Context, tr *turnRun, s Step, done map[string]StepResult, stream bool) (spokes.Result, error) {
	ctx = withStep(ctx, s.ID)
	query := s.Query
	switch {
	case stream, query == "" && s.App == VanillaApp:
		query = tr.query // a single step answers the user's own words
	case query == "":
		// A step of several the plan gave no words: the hub's own, never
		// the whole request (its other parts are for other apps).
		query = o.stepWords(s)
	}
	if err := o.canServe(ctx, s.App); err != nil {
		return spokes.Result{Status: memory.StatusError}, err
	}
	data, err := o.admit(ctx, tr, s, query, o.gatherShare(tr, s, done))
	if err != nil {
		if errors.Is(err, errStepRefused) {
			tr.noteRefused(s.App, o.mappedFunction(s.App, s.Functionality), strings.TrimPrefix(err.Error(), errStepRefused.Error()+": "))
		}
		return spokes.Result{Status: memory.StatusError}, err
	}
	if s.App != VanillaApp && s.App != monolithApp {
		o.recordAppContext(tr, s.App)
	}
	var sp *spokes.Spoke
	fresh := tr.fresh
	if s.App == VanillaApp && !stream {
		sp, err = o.freshSpoke(tr, vanillaSystem)
		if sp != nil {
			defer sp.Stop()
		}
		fresh = true
	} else {
		sp, err = o.spokeFor(tr, s.App)
	}
	if err != nil {
		return spokes.Result{Status: memory.StatusError}, err
	}
	o.setWorking(s.App, +1)
	tr.emit(Event{Kind: EventSpoke, App: s.App, Working: true})
	defer func() {
		o.setWorking(s.App, -1)
		tr.emit(Event{Kind: EventSpoke, App: s.App, Working: false})
	}()
	app := s.App
	fn := o.mappedFunction(s.App, s.Functionality)
	// refused is the last refusal of a call of the step's own function,
	// and did whether one ran: an answer whose call was refused says so.
	var refused *spokes.Refused
	var did bool
	var callMu sync.Mutex
	// In a plan of several steps the synthesis answers: an app step ends
	// with its typed value.
	task := spokes.Task{Chat: tr.chat, Query: query, Functionality: s.Functionality, Function: fn, Data: data, Bound: boundLines(s), Args: o.presetArgs(tr, s, fn, data), Fresh: fresh, NoLog: fresh, ValueOnly: !stream && s.App != VanillaApp,
		OnCall: func(fn string, args json.RawMessage) {
			tr.emit(Event{Kind: EventAppCall, App: app, Function: fn, Args: args})
		},
		OnResult: func(called string, result json.RawMessage, err error) {
			if err != nil {
				tr.ledger.AppText(app+"."+called, err.Error())
			} else {
				tr.ledger.App(app+"."+called, result)
			}
			if called == fn {
				callMu.Lock()
				var r *spokes.Refused
				if errors.As(err, &r) {
					refused = r
				}
				did = did || err == nil
				callMu.Unlock()
			}
			tr.emit(Event{Kind: EventAppResult, App: app, Function: called, Result: result, Err: err})
		},
	}
	if stream {
		task.OnChunk = func(c llm.Chunk) {
			if c.Thinking != "" {
				tr.emit(Event{Kind: EventThinking, App: app, Text: c.Thinking})
			}
			if c.Content != "" {
				tr.emit(Event{Kind: EventToken, App: app, By: byOf(app), Text: c.Content})
			}
		}
	}
	res, err := sp.Do(ctx, task)
	if res.Logged != 0 {
		tr.serve(app)
	}
	if s.App != VanillaApp {
		// A server may write between its calls: what it left is put to
		// the person before the turn ends, at the latest.
		o.settleChanges(ctx, tr, app, betweenCalls)
	}
	callMu.Lock()
	if refused != nil && !did {
		// The step's own work was refused: the turn did not do what it
		// was asked (Event.Refused), whatever the app answered.
		tr.noteRefused(app, fn, refused.Error())
	}
	if stream {
		var answer Parts
		answer.Add(byOf(app), app, res.Text)
		if err == nil && refused != nil && !did {
			// The answer never hides that what was asked was not done: the
			// hub says so, in a part of its own, after the app's.
			note := fmt.Sprintf("\n\n%s.%s did not run — %s.", app, fn, refused.Error())
			answer.Add(ByHub, "", note)
			tr.emit(Event{Kind: EventToken, App: app, By: ByHub, Text: note})
		}
		res.Text = answer.Text()
		tr.setAnswer(answer)
	}
	callMu.Unlock()
	if err == nil && !stream && s.App != VanillaApp && res.Value == nil {
		// Never silently: the step says why it has no value.
		err = hubWords{fmt.Sprintf("no value: %s", tr.noValue(s, fn))}
	}
	if res.Value != nil && o.opts.Apps != nil {
		// What crosses the bulkhead must match the catalog's schema, and
		// carries only what the schema declares.
		if entry, ok := o.opts.Apps.Catalog().Get(s.Functionality); ok {
			if verr := apps.Validate(entry.Response, res.Value); verr != nil {
				o.note(tr, "dropped", app, fmt.Sprintf("result of %s does not match the catalog: %v", s.Functionality, verr))
				res.Value = nil
			} else {
				res.Value = apps.Project(entry.Response, res.Value)
			}
		}
		o.recordResult(ctx, tr, app, s.Functionality, res.Value)
	}
	return res, err
}

// stepWords is what an app step of several is asked when the plan gave
// it no query: its functionality, as the catalog describes it.
func (o *Operator) stepWords(s Step) string {
	if o.opts.Apps != nil {
		if e, ok := o.opts.Apps.Catalog().Get(s.Functionality); ok && e.Description != "" {
			return fmt.Sprintf("Do %s for the user: %s", s.Functionality, e.Description)
		}
	}
	return fmt.Sprintf("Do %s for the user.", s.Functionality)
}

// boundLines are the step's bindings as its spoke's model reads them.
func boundLines(s Step) []string {
	var out []string
	for _, b := range s.Bind {
		switch {
		case b.Value != "":
			out = append(out, fmt.Sprintf("%s: %q", b.Arg, b.Value))
		case b.From != "":
			out = append(out, fmt.Sprintf("%s: the value of %q in the shared data", b.Arg, b.From))
		case b.Entity != "":
			out = append(out, fmt.Sprintf("%s: the value of %q in the shared data", b.Arg, b.Entity))
		}
	}
	return out
}

// freshSpoke starts a vanilla spoke with no history that logs nothing;
// the caller stops it.
func (o *Operator) freshSpoke(tr *turnRun, system string) (*spokes.Spoke, error) {
	model, err := o.opts.SpokeModel(VanillaApp)
	if err != nil {
		return nil, err
	}
	ns, err := tr.st.Namespace(SpokeOwner(VanillaApp))
	if err != nil {
		return nil, err
	}
	sp, err := spokes.New(spokes.Config{App: VanillaApp, Model: model, Memory: ns, System: system})
	if err != nil {
		return nil, err
	}
	sp.Start()
	return sp, nil
}

func (o *Operator) labelsOf(app, fn string) []string {
	var out []string
	if o.opts.Apps == nil {
		return nil
	}
	if e, ok := o.opts.Apps.Catalog().Get(fn); ok {
		out = append(out, e.Labels...)
	}
	if a, ok := o.opts.Apps.App(app); ok {
		out = append(out, a.Manifest().Labels...)
	}
	return out
}

func (o *Operator) clearance(app string) []string {
	if o.opts.Apps == nil {
		return nil
	}
	if a, ok := o.opts.Apps.App(app); ok {
		return a.Manifest().Clearance
	}
	return nil
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	if r := []rune(line); len(r) > 80 {
		return string(r[:79]) + "…"
	}
	return line
}

// hubWords is an error in the hub's own words (a step that gave no
// value, and why): the answer shows it as the hub's, never as an app's.
type hubWords struct{ msg string }

func (h hubWords) Error() string { return h.msg }
