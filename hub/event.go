package hub

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// EventKind names an event of a turn.
type EventKind string

// The events a turn emits, in this order: started, then plan once; spoke, thinking and
// token as work goes on; then exactly one of answer or error.
const (
	// EventStarted: the request is logged; Turn holds its number.
	EventStarted  EventKind = "started"
	EventPlan     EventKind = "plan"
	EventSpoke    EventKind = "spoke"    // a spoke started or stopped working
	EventThinking EventKind = "thinking" // a piece of the model's thinking
	EventToken    EventKind = "token"    // a piece of the answer
	EventAnswer   EventKind = "answer"
	EventError    EventKind = "error"
	// EventPermission: a permission request was made (Permission set);
	// EventDecision follows it with the decision (Decision set).
	EventPermission EventKind = "permission"
	EventDecision   EventKind = "decision"
	// EventAppCall and EventAppResult: an app function ran in a spoke.
	EventAppCall   EventKind = "app_call"
	EventAppResult EventKind = "app_result"
	// EventResults: the typed results of a plan with several apps, for
	// the results card (Results set), before the synthesis streams.
	EventResults EventKind = "results"
	// EventDraft: a piece of the plain answer drafted while the plan is
	// made (draft.go), before EventPlan. When the plan is plain chat the
	// draft is the answer's beginning (EventToken goes on from it);
	// otherwise EventDraftWithdrawn follows and the draft is no part of
	// the turn.
	EventDraft          EventKind = "draft"
	EventDraftWithdrawn EventKind = "draft_withdrawn"
	// EventProgress: what the turn waits for besides the model (Progress
	// set, App names the app): an app's server starting for a call (or
	// its tools being listed before the turn: the serving process says
	// so before EventStarted), or a running tool's own progress (an MCP
	// server's notifications/progress, its message the app's words).
	// Shown while the turn runs; never logged or stored.
	EventProgress EventKind = "progress"
)

// Event is one thing that happened during a turn. Which fields are set
// depends on Kind.
type Event struct {
	Kind EventKind
	Chat string
	Turn uint64
	Plan *Plan  // plan
	App  string // spoke, thinking, token: the app whose spoke it is
	// By, of a token or a draft piece, is who wrote it (with App for an
	// app): a change of author starts a new part of the answer.
	By By
	// Parts, of an answer (and of an error, what was written before it),
	// is the answer as its authors wrote it.
	Parts   Parts
	Working bool      // spoke: started (true) or stopped (false)
	Text    string    // thinking, token: the piece; answer: the whole answer
	Usage   llm.Usage // answer, error: what the turn cost; plan: what planning cost
	Err     error     // error
	// Status is the turn's final status (answer, error).
	Status memory.Status

	Permission *permissions.Request  // permission
	Decision   *permissions.Decision // decision
	Function   string                // app_call, app_result
	Args       json.RawMessage       // app_call
	Result     json.RawMessage       // app_result (nil on failure, with Err set)
	Results    []StepResult          // results
	Progress   *apps.Progress        // progress
	// Refused, of an answer, are the steps that did not do their work
	// because a request they needed was denied — by a rule, a policy, a
	// remembered denial or the person — each as "app.function did not
	// run — why" (a single step's answer says it in a part of the hub's,
	// a step of several in its result's error). A step that did its
	// work in the end — a call allowed after one denied, an app that ran
	// without the data it was refused — is not among them.
	Refused []string
}

// StepResult is the typed outcome of one plan step.
type StepResult struct {
	Step          string          `json:"step"`
	App           string          `json:"app"`
	Functionality string          `json:"functionality"`
	Value         json.RawMessage `json:"value,omitempty"`
	Error         string          `json:"error,omitempty"`
	// ErrorByHub: Error is the hub's words (the step gave no value, for
	// a reason the hub names), not the app's.
	ErrorByHub bool `json:"error_by_hub,omitempty"`
}

// Turn is one request and its outcome, as the hub logged it.
type Turn struct {
	Chat     string
	Seq      uint64
	Query    string
	Answer   string
	Thinking string
	Status   memory.Status
	Error    string
	Plan     *Plan
	// Results are the typed results of a plan with several steps (the
	// results card), as logged.
	Results []StepResult
	// Author is who wrote Answer (AnsweredBy): an app's name, VanillaApp,
	// SynthesisApp or MonolithApp; "" in turns logged before it was kept.
	Author string
	// Parts is the answer as its authors wrote it (Answer is their text
	// joined); a turn logged before parts were kept has one, by Author.
	Parts   Parts
	Usage   llm.Usage
	Started time.Time
	Ended   time.Time
	// Private: a private query's turn (AskOptions.Private): not kept, Seq 0.
	Private bool
	// Masked are the spans of Answer the hub masked before storing it,
	// with what they hid: in the Turn Ask returns only, never stored.
	Masked []MaskedSpan
	// Activity is what happened in the turn besides its answer — each app
	// call with its outcome, each permission request with its decision —
	// as logged (bounded: maxActivity entries, arguments clipped), so a
	// chat reopened or exported shows it.
	Activity []Activity
}

// Activity is one logged event of a turn: an app call (EventAppCall), its
// outcome (EventAppResult, Err when it failed), a permission request
// (EventPermission) or its decision (EventDecision).
type Activity struct {
	Kind       EventKind             `json:"kind"`
	App        string                `json:"app,omitempty"`
	Function   string                `json:"function,omitempty"`
	Args       json.RawMessage       `json:"args,omitempty"`
	Err        string                `json:"err,omitempty"`
	Permission *permissions.Request  `json:"permission,omitempty"`
	Decision   *permissions.Decision `json:"decision,omitempty"`
}

// Bounds of a turn's logged activity.
const (
	maxActivity     = 100     // entries; later ones are counted, not kept
	maxActivityArgs = 2 << 10 // bytes of one entry's arguments
	// maxActivityEntries: the entries of a change set one entry keeps
	// (no diff lines).
	maxActivityEntries = 50
)

// clipArgs bounds logged arguments: longer ones become a JSON string of
// their head and their size.
func clipArgs(a json.RawMessage) json.RawMessage {
	if len(a) <= maxActivityArgs {
		return a
	}
	b, _ := json.Marshal(fmt.Sprintf("%s… (%d bytes)", strings.ToValidUTF8(string(a[:maxActivityArgs]), ""), len(a)))
	return b
}

// activityOf is e as logged, and whether it is of a kind the log keeps.
func activityOf(e Event) (Activity, bool) {
	a := Activity{Kind: e.Kind, App: e.App, Function: e.Function}
	switch e.Kind {
	case EventAppCall:
		a.Args = clipArgs(e.Args)
	case EventAppResult:
		if e.Err != nil {
			a.Err = e.Err.Error()
		}
	case EventPermission:
		if e.Permission == nil {
			return a, false
		}
		r := *e.Permission
		r.Args = clipArgs(r.Args)
		if r.Changes != nil {
			r.Changes = r.Changes.Brief(maxActivityEntries)
		}
		a.Permission = &r
	case EventDecision:
		if e.Decision == nil {
			return a, false
		}
		d := *e.Decision
		a.Decision = &d
	default:
		return a, false
	}
	return a, true
}

// Retryable reports whether the turn ended without a full answer.
func (t Turn) Retryable() bool { return t.Status != memory.StatusOK }

// turnMeta is what the hub keeps in an interaction's Meta.
type turnMeta struct {
	Activity []Activity   `json:"activity,omitempty"`
	Plan     *Plan        `json:"plan,omitempty"`
	Results  []StepResult `json:"results,omitempty"`
	Thinking string       `json:"thinking,omitempty"`
	Usage    llm.Usage    `json:"usage"`
	// Author is who wrote the answer (Turn.AnsweredBy).
	Author string `json:"author,omitempty"`
	// Parts are the answer's parts, as stored (masked like the answer).
	Parts Parts `json:"parts,omitempty"`
}
