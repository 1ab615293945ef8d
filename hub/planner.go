package hub

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// Model is what the hub needs of a model client: *llm.Client has it.
type Model interface {
	Chat(ctx context.Context, req llm.Request, onChunk func(llm.Chunk)) (llm.Response, error)
	Model() string
}

// PastTurn is what the planner sees of an earlier turn: the user's own
// words and which apps served them — never an app's answer.
type PastTurn struct {
	Query string
	Apps  []string
}

// PlanInput is everything the planner reads. Every field is trusted: the
// user's words, the hub's own memory of them, and the vetted catalog.
type PlanInput struct {
	Query           string
	History         []PastTurn
	Functionalities []Functionality
	// NamedApps are installed apps whose names the user typed in the
	// request; a step may name one of them.
	NamedApps []string
	// Summary is the hub's summary of the chat, built from the user's own
	// messages only.
	Summary string
	// Facts are the names (never the values) of the entities the hub
	// holds; a step may list some in needs.
	Facts []string
	// Private: a private turn's planning is logged without a word of what
	// the model wrote (it may quote the request).
	Private bool
	// Catalog holds the request and response schemas the plan's bindings
	// are checked against (hub-owned; nil: no binding holds).
	Catalog *apps.Catalog
	// Now is when the request was made, in the user's time zone: what
	// its relative dates ("tomorrow") mean (zero: none is read).
	Now time.Time
	// OnText, if set, is told the planner's output so far as it streams
	// (each attempt from its start): a draft is withdrawn as soon as the
	// plan's kind is apps, or it names a functionality other than chat.
	OnText func(text string)
	// HoldChat, if set, is asked once the plan's first tokens say plain
	// chat: the planner's call is ended when the channel it returns is
	// closed (nil: at once). A draft that must learn whether the server
	// runs two requests at once holds it a moment.
	HoldChat func() <-chan struct{}
}

// env is what the plan's bindings are checked against: the request, and
// the catalog's schemas.
func (in PlanInput) env() judge.Env {
	get := func(pick func(apps.Functionality) json.RawMessage) func(string) (json.RawMessage, bool) {
		return func(fn string) (json.RawMessage, bool) {
			if in.Catalog == nil {
				return nil, false
			}
			f, ok := in.Catalog.Get(fn)
			return pick(f), ok
		}
	}
	return judge.Env{Query: in.Query, Now: in.Now,
		Request:  get(func(f apps.Functionality) json.RawMessage { return f.Request }),
		Response: get(func(f apps.Functionality) json.RawMessage { return f.Response })}
}

// Planner asks the hub's own model for a plan with a `format` schema.
type Planner struct {
	model Model
	log   *slog.Logger
}

// NewPlanner builds a planner over the hub's model client.
func NewPlanner(model Model, log *slog.Logger) *Planner {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Planner{model: model, log: log}
}

// plannerSystem begins with words no other call's prompt begins with
// (spokes.Preamble): on a slotted server the planner's prompt stays in a
// slot of its own (seat.go).
const plannerSystem = `As the planner of bulkhead, a local assistant, you never answer the user yourself: you decide which functionalities serve the request.
Reply with JSON only, following the schema. Split the request into as few steps as possible; each step uses exactly one functionality from the list. Steps are s1, s2, … in order. Give a step "depends_on" only to name earlier steps whose results it needs, and a short "query" (what its app must know) only when the plan has several steps.
In "bind", give the step's arguments (listed after each functionality) the values the request gives them, one object per argument:
- {"arg": "to", "value": "bob@example.com"}: a value copied exactly from the request;
- {"arg": "city", "from": "s1.city"}: a field of an earlier step's result;
- {"arg": "dates", "entity": "trip.dates"}: a fact the hub holds (listed by name under "Facts").
Bind only values of this request; never guess one, never take one from earlier requests.
Begin with "kind": "chat" when the request is plain conversation: no functionality but chat serves it and it needs no fact the hub holds. Else begin with "apps" — a chat step that needs a fact too.
When nothing else fits, use kind "chat" and one step with the "chat" functionality.
Example: "when does my trip start?", with the fact trip.dates held → {"kind":"apps","steps":[{"functionality":"chat","needs":["trip.dates"]}]}
Example: "email bob@example.com that I am late" → {"kind":"apps","steps":[{"functionality":"mail.send","bind":[{"arg":"to","value":"bob@example.com"}]}]}
Example: "find my flight to Paris and put it in my calendar" → {"kind":"apps","steps":[{"functionality":"travel.find_flight","query":"my flight to Paris"},{"functionality":"calendar.add","bind":[{"arg":"date","from":"s1.date"}],"depends_on":["s1"],"query":"the flight to Paris"}]}`

// planPredict is the most tokens a plan may take: room for the longest
// plan the schema allows, whatever answer length the model's own
// parameters set (a short default cut every plan, retried, then fell
// back); the schema's bounds keep it from running on.
const planPredict = 1536

// errPlainChat ends a planner's call whose first tokens said plain chat.
var errPlainChat = errors.New("the plan is plain chat")

// Plan returns a validated plan and what planning cost. An unusable answer
// is retried once with the reason; a second one yields the vanilla fallback
// plan (Plan.Fallback set, logged). Errors are only those of the model
// call itself (cancelled, unreachable, model missing).
func (p *Planner) Plan(ctx context.Context, in PlanInput, route func(fn, app string) (string, bool)) (Plan, llm.Usage, error) {
	var usage llm.Usage
	msgs := []api.Message{
		{Role: "system", Content: plannerSystem},
		{Role: "user", Content: plannerPrompt(in)},
	}
	schema := planSchema(in.Functionalities, in.NamedApps, in.Facts)
	var lastErr error
	for attempt := 1; attempt <= 2; attempt++ {
		// The plan's first tokens may decide it: once they say plain
		// chat, the rest is not waited for (the call is ended, its slot
		// free for the answer).
		actx, decide := context.WithCancelCause(ctx)
		var text strings.Builder
		chat := false
		onChunk := func(c llm.Chunk) {
			text.WriteString(c.Content)
			if in.OnText != nil {
				in.OnText(text.String())
			}
			// Kind chat is plain conversation: it needs no functionality
			// and no fact the hub holds (a chat step that needs one is
			// kind apps), so it decides with facts held too.
			if chat || decidedKind(text.String()) != kindChat {
				return
			}
			chat = true
			var hold <-chan struct{}
			if in.HoldChat != nil {
				hold = in.HoldChat()
			}
			if hold == nil {
				decide(errPlainChat)
				return
			}
			go func() {
				select {
				case <-hold:
				case <-actx.Done():
				}
				decide(errPlainChat)
			}()
		}
		resp, err := p.model.Chat(actx, llm.Request{Messages: msgs, Format: schema, Think: new(false),
			Options: map[string]any{"num_predict": planPredict}}, onChunk)
		decided := context.Cause(actx) == errPlainChat && ctx.Err() == nil
		decide(nil)
		usage.Add(resp.Usage)
		if decided {
			plan := chatPlan(in.Query)
			plan.Early, plan.Retried = true, attempt > 1
			return plan, usage, nil
		}
		if err != nil {
			var cut *llm.StreamCutError
			if !errors.As(err, &cut) {
				return Plan{}, usage, fmt.Errorf("plan with %s: %w", modelIn(ctx, p.model), err)
			}
			lastErr = err
		} else {
			plan, perr := parsePlan(resp.Message.Content, route, in.NamedApps, in.Facts, in.env())
			if perr != nil && decidedKind(resp.Message.Content) == kindChat {
				// Chat, said first; what follows is not needed.
				plan, perr = chatPlan(in.Query), nil
			}
			if perr == nil {
				plan.Retried = attempt > 1
				return plan, usage, nil
			}
			lastErr = perr
		}
		if in.Private {
			p.log.Warn("planner answer unusable (a private turn: no detail logged)", "attempt", attempt)
		} else {
			p.log.Warn("planner answer unusable", "attempt", attempt, "err", lastErr)
		}
		msgs = append(msgs,
			api.Message{Role: "assistant", Content: resp.Message.Content},
			api.Message{Role: "user", Content: "That plan cannot be used: " + lastErr.Error() + ". Reply again with JSON that follows the schema."},
		)
	}
	if in.Private {
		p.log.Warn("planner fell back to the vanilla spoke (a private turn: no detail logged)")
	} else {
		p.log.Warn("planner fell back to the vanilla spoke", "err", lastErr)
	}
	return fallbackPlan(in.Query, lastErr.Error()), usage, nil
}

// catalogText is the functionality list that begins the planner's
// prompt (and, so that they share its cached prefix, the upkeep's).
func catalogText(fns []Functionality) string {
	var b strings.Builder
	b.WriteString("Functionalities:\n")
	for _, f := range fns {
		if len(f.Args) > 0 {
			fmt.Fprintf(&b, "- %s (%s): %s\n", f.Name, strings.Join(f.Args, ", "), f.Description)
		} else {
			fmt.Fprintf(&b, "- %s: %s\n", f.Name, f.Description)
		}
	}
	return b.String()
}

// plannerPrompt is the planner's user message, ordered for the model
// server's prompt cache: what every turn shares first (the catalog), then
// what changes seldom (the summary, the facts), then the chat's requests,
// oldest first, each written the same way when it is the one to plan and
// when it is an earlier one, what served it appended after it, so that a
// turn's prompt continues the last turn's and only the new request is
// read. What depends on this request alone (the apps it names) comes after
// it. The earlier requests shown move in blocks of half the window
// (PlanInput.History is cut by historyWindow), so they do not change at
// every turn once a chat is longer than the window.
func plannerPrompt(in PlanInput) string {
	var b strings.Builder
	b.WriteString(plannerPromptHead(in))
	fmt.Fprintf(&b, "%s\n", in.Query)
	if len(in.NamedApps) > 0 {
		fmt.Fprintf(&b, "\n%s%s\n", namedAppsLabel, strings.Join(in.NamedApps, ", "))
	}
	return b.String()
}

// plannerPromptHead is the planner's prompt up to the request to plan:
// what the chat's next plan begins with, whatever is asked (Warm).
func plannerPromptHead(in PlanInput) string {
	var b strings.Builder
	// What every chat shares comes first, what is the chat's own after
	// it: the facts are the hub's (one list for every chat), the summary
	// the chat's. So a new chat's first plan — no summary yet — finds
	// everything up to its request cached from another chat's.
	b.WriteString(catalogText(in.Functionalities))
	if len(in.Facts) > 0 {
		fmt.Fprintf(&b, "\nFacts the hub holds (names only; a step that needs one lists it in needs): %s\n", strings.Join(in.Facts, ", "))
	}
	b.WriteString("\n" + requestsHeading)
	if in.Summary != "" {
		fmt.Fprintf(&b, "%s%s\n", summaryLabel, in.Summary)
	}
	for _, h := range in.History {
		served := strings.Join(h.Apps, ", ")
		if served == "" {
			served = "nothing"
		}
		fmt.Fprintf(&b, "%s%s\nServed by: %s\n", requestLabel, h.Query, served)
	}
	b.WriteString(requestLabel)
	return b.String()
}

// Warm has the model server read what the chat's next plan will begin
// with — the catalog, the summary and the facts, the earlier requests —
// while the person is idle: after an upkeep rewrote the summary or the
// facts, which come before the requests, the next turn then reads only
// its own request (the server keeps the prefix it read). One token is
// written, and nothing is kept of it.
func (p *Planner) Warm(ctx context.Context, in PlanInput) (llm.Usage, error) {
	msgs := []api.Message{
		{Role: "system", Content: plannerSystem},
		{Role: "user", Content: plannerPromptHead(in)},
	}
	resp, err := p.model.Chat(ctx, llm.Request{Messages: msgs, Format: planSchema(in.Functionalities, nil, in.Facts), Think: new(false),
		Options: map[string]any{"num_predict": 1}}, nil)
	return resp.Usage, err
}

// The words of the planner's prompt that frame the requests.
const (
	requestsHeading = "The chat's requests, oldest first, each with what served it; plan the last one:\n"
	requestLabel    = "Request: "
	summaryLabel    = "Earlier requests, summed up from the user's own messages: "
	namedAppsLabel  = "Apps the user named in it (a step may set \"app\" to one of them): "
)
