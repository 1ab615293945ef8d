package hub

import (
	"context"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/memory"
)

// What the memory upkeep learns sits before the chat's requests in the
// planner's prompt, and before the exchanges in a spoke's: a new summary
// or fact rewrites the part of the prompt a model server has cached. So
// the upkeep that wrote one has the server read the new prefix at once
// (warm), while the person is idle, and the next turn reads only its own
// request — never the rewrite on the turn's path.

// warm has the model server read the prompt the chat's next plan (app
// "": the hub's upkeep) or the next answer of app's spoke will begin
// with. ctx is the upkeep's: its calls go where the chat's latest turn
// went. A failure costs only the next turn's speed: it is logged.
func (o *Operator) warm(ctx context.Context, app, chat string) {
	if o.opts.Vanilla || ctx.Err() != nil {
		return
	}
	st, private := o.storeFor(chat)
	if private {
		return // a private chat's prompts hold nothing of an upkeep
	}
	if app == "" {
		o.warmPlanner(ctx, st, chat)
		return
	}
	sp, err := o.spoke(st, chat, app)
	if err != nil {
		return
	}
	o.bgCalls.Add(1)
	if _, err := sp.Warm(ctx, chat); err != nil && ctx.Err() == nil {
		o.log.Debug("warm a spoke's prompt", "app", app, "err", err)
	}
}

// warmPlanner is warm for the chat's next plan: its prompt up to the
// request, as the next turn will build it.
func (o *Operator) warmPlanner(ctx context.Context, st *memory.Store, chat string) {
	ns, err := st.Namespace(hubOwner)
	if err != nil {
		return
	}
	next := uint64(1)
	if last, err := ns.Recent(chat, 1); err == nil && len(last) > 0 {
		next = last[len(last)-1].Seq + 1
	}
	in := PlanInput{Functionalities: o.catalogNow()}
	if in.History, err = o.history(ns, chat, next); err != nil {
		return
	}
	if in.Summary, in.Facts, err = o.plannerMemory(chat); err != nil {
		return
	}
	o.bgCalls.Add(1)
	if _, err := o.planner.Warm(ctx, in); err != nil && ctx.Err() == nil {
		o.log.Debug("warm the planner's prompt", "err", err)
	}
}

// IsWarm reports whether req is a warm call (Planner.Warm,
// spokes.Spoke.Warm): one token asked, for scripted models and the
// tests that count the calls a turn makes.
func IsWarm(req *api.ChatRequest) bool {
	n, ok := req.Options["num_predict"]
	if !ok {
		return false
	}
	switch v := n.(type) {
	case float64:
		return v == 1
	case int:
		return v == 1
	}
	return false
}
