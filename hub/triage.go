package hub

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/llm"
)

// The triage: on a server where the planner goes first (one known to run
// one request at a time, or one whose order the probes did not learn),
// the planner's prompt — its instructions and the catalog, thousands of
// tokens — and the plain answer's take turns in one slot, each evicting
// the other: every chat turn read the planner's prompt cold, several
// times the plain model's whole turn. There the hub asks first, in the
// plain answer's own context (the vanilla spoke's working memory and the
// request: what the draft will read), whether plain conversation answers
// the request or a functionality is needed, the functionalities named
// after it. Plain chat decides the plan — the draft, whose prompt is the
// question's with its last message off, reads little again — and only
// apps asks the planner, whose plan is made and checked as ever.
//
// The triage can only say that no app is needed: it names no
// functionality, binds no value, and anything but a clear "chat" (apps,
// no answer, an error, a reply without a kind) leaves the request to
// the planner. What it reads beyond the planner's input are the plain
// model's own earlier answers, no app's words; at worst a request is
// answered in plain chat, shown as such.

// triageSchema is the triage's format: the kind alone, a JSON string —
// not an object holding it: every token of a reply is a step of the
// model's own, on one slot before the first words, and `"chat"` is a
// third of `{"kind":"chat"}` (in the tests' model, a token a byte).
var triageSchema = json.RawMessage(`{"type":"string","enum":["chat","apps"]}`)

// triagePredict bounds the triage's reply: "apps" and some room.
const triagePredict = 8

// The triage's reply is read whole: the hub never cuts it at its kind. A
// model server (Ollama 0.17) whose client leaves while a reply's last
// pieces are on their way can keep the request's place in the runner's
// queue for good (its handler stops reading the pieces its model call
// still sends), and on a one-slot server every request after it waits
// until the client gives up — seen once after a triage cut at its kind.
// The format's grammar ends the reply at the string's closing quote.

// triageQuestion is the hub's question, with the apps' names (the
// catalog's functionality names up to their first dot, never an app's
// description) and the names of the facts the hub holds (never their
// values): a request that needs one is the planner's to plan (a chat step
// that needs a fact has it shared). Short, and the names alone, not each
// app's functionalities: the server reads it after the request at every
// triaged turn, on one slot on the path of the first words (the
// functionalities written out were ~300 of the tests' model's tokens, the
// request and the answer before it ~260), and it decides only whether
// an app is needed, never which.
func triageQuestion(fns []Functionality, facts []string) string {
	var names []string
	seen := map[string]bool{}
	for _, f := range fns {
		if f.Name == ChatFunctionality {
			continue
		}
		app, _, _ := strings.Cut(f.Name, ".")
		if !seen[app] {
			seen[app] = true
			names = append(names, app)
		}
	}
	q := "Does the last request need an app (" + strings.Join(names, ", ") + ")"
	if len(facts) > 0 {
		q += " or a fact the assistant holds (" + strings.Join(facts, ", ") + ")"
	}
	return q + `? Answer "apps" if so, else "chat".`
}

// triaged reports whether the triage applies to this turn, on the
// planner's own runner, after a plan of plain chat there (or none yet):
// where a draft waits for the plan (the planner goes first); and, where
// the draft went ahead of a server known to run both at once, while the
// planner's prompt is cold — no plan made nor warm read on that server
// by this process (a serving process just started: its first turn read
// the planner's thousands of tokens before the draft could be kept, 3–4×
// the plain model's turn). There the triage runs beside the draft; a
// chat turn keeps the draft without the planner, whose prompt is read
// after the turn, while the person is idle (warmLater). Requests come in
// runs — chat after chat, apps after apps — so after a plan that needed
// apps the planner decides alone until a plan is plain chat again: a run
// of app requests pays no triage call (one, the first).
func (o *Operator) triaged(ctx context.Context, dr *answerDraft, in PlanInput) bool {
	if dr == nil || o.noTriage || len(in.Functionalities) == 0 || !o.sharesPlannersRunner(ctx) {
		return false
	}
	if dr.ahead && !o.coldBeside(dr) {
		return false
	}
	return !dr.appsRun
}

// coldBeside: dr went ahead of a server known to run both at once (not a
// probe, which must see the planner stream beside it), and no planner's
// prompt has been read there by this process.
func (o *Operator) coldBeside(dr *answerDraft) bool {
	if !dr.ahead || !o.order.get(dr.host).SideBySide {
		return false
	}
	return o.plannerCold(dr.host)
}

// plannerWasRead notes that host has read a planner's prompt.
func (o *Operator) plannerWasRead(host string) { o.plannerRead.Store(host, true) }

// planKind is told the kind of the plan a turn made where a draft waited
// for it (a triage's chat, or the planner's plan).
func (o *Operator) planKind(dr *answerDraft, chat bool) {
	o.order.update(dr.host, func(f *serverFacts) { f.AppsRun = !chat })
}

// triage asks whether the request is plain chat (see above). chat is true
// only on a reply whose kind is chat; the draft is released then.
func (o *Operator) triage(ctx context.Context, dr *answerDraft, in PlanInput) (chat bool, usage llm.Usage, err error) {
	dr.hold()
	resp, err := dr.sp.Consult(ctx, dr.task, triageQuestion(in.Functionalities, in.Facts), triageSchema, triagePredict, nil)
	usage = resp.Usage
	if ctx.Err() != nil {
		return false, usage, ctx.Err()
	}
	if err != nil {
		o.log.Warn("triage failed; the planner decides", "err", err)
		return false, usage, nil
	}
	if triageKind(resp.Message.Content) == kindChat {
		dr.release()
		return true, usage, nil
	}
	return false, usage, nil
}

// triageKind reads a triage's reply: "chat" or "apps" when it is that
// JSON string and nothing else (spaces apart), else "".
func triageKind(reply string) string {
	var kind string
	if json.Unmarshal([]byte(strings.TrimSpace(reply)), &kind) != nil || kind != kindChat && kind != kindApps {
		return ""
	}
	return kind
}

// IsTriage reports whether req is a triage's request (its format names
// the kind alone), for scripted servers.
func IsTriage(req *api.ChatRequest) bool {
	return len(req.Format) > 0 && string(req.Format) == string(triageSchema)
}
