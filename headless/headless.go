// Package headless runs one request without the TUI, for scripts: it
// prints the answer, or with JSON one event per line as docs/events.md
// describes. It is used by `bulkhead ask`.
//
// Run is synchronous; events are written in the order the hub emits them,
// from one goroutine at a time (the hub never emits concurrently).
//
// Everything printed passes through internal/termtext: the answer, the
// streamed tokens and error messages (app- and model-authored text) show
// control characters and escape sequences as visible escapes, and every
// JSON line has them as JSON escapes, so nothing a model or an app wrote
// can act on the terminal.
package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Backend is what a headless run needs of the hub.
type Backend interface {
	NewChat(private bool) (hub.Chat, error)
	Chat(id string) (hub.Chat, error)
	Ask(ctx context.Context, chat, query string, emit func(hub.Event)) (hub.Turn, error)
	AskWith(ctx context.Context, chat, query string, opts hub.AskOptions, emit func(hub.Event)) (hub.Turn, error)
	// TurnsBefore returns up to n turns of chat below before (0: the
	// newest), oldest first: --retry reads the last one alone.
	TurnsBefore(chat string, before uint64, n int) ([]hub.Turn, bool, error)
	Retry(ctx context.Context, chat string, seq uint64, emit func(hub.Event)) (hub.Turn, error)
}

// Options says how to run and print.
type Options struct {
	JSON   bool // one JSON event per line
	Stream bool // print tokens as they arrive
	// Private: nothing of the request is written to disk — a new private
	// chat, or with Chat a private query in that chat (hub.AskOptions).
	Private bool
	Chat    string // continue this chat instead of starting one
	// Retry runs the last turn of Chat again if it did not finish (cut,
	// cancelled, failed, or interrupted by a crash); the query is unused.
	Retry bool
	// Unavailable, if set, is why the model server cannot be used; the
	// run reports it as its error without asking.
	Unavailable error
	// Attribute says who wrote every answer ("the assistant:"), as
	// accessible mode does; without it only an app's answer is labelled
	// (the assistant is whoever speaks unlabelled).
	Attribute bool
	// Terminal: standard output is a terminal of this size that a person
	// reads (zero: a pipe or a file). A streamed text answer then shows
	// the plain model's draft as it comes, before the plan says whether
	// it is the answer, and takes it back if it is not (preview.go); on
	// a pipe text cannot be taken back, and nothing of a draft is
	// written before its plan.
	Terminal TermSize
}

// showsDrafts: the client shows a draft's words before the plan (a JSON
// stream, or streamed text on a terminal with rows to take back).
func (o Options) showsDrafts() bool {
	return o.Stream && (o.JSON || o.Terminal.Cols > 0 && o.Terminal.Rows > 1)
}

// Event is the JSON shape of one event line (docs/events.md).
type Event struct {
	Type     string      `json:"type"`
	Chat     string      `json:"chat,omitempty"`
	Steps    []PlanStep  `json:"steps,omitempty"`
	Fallback bool        `json:"fallback,omitempty"`
	Retried  bool        `json:"retried,omitempty"`
	Text     string      `json:"text,omitempty"`
	Usage    *EventUsage `json:"usage,omitempty"`
	Message  string      `json:"message,omitempty"`
	Partial  string      `json:"partial,omitempty"`
	Status   string      `json:"status,omitempty"`
	// Author, of an answer (and of the first token of a stream), is who
	// wrote it: an app's name, or "assistant"; AuthorWords says so as
	// every channel does.
	Author      string `json:"author,omitempty"`
	AuthorWords string `json:"author_words,omitempty"`
	// Parts, of an answer, are its words by author (docs/events.md):
	// the assistant's, the hub's ("hub"), each app's ("app", with its
	// name). By, of a token, is its part's author (with App for an app).
	Parts hub.Parts `json:"parts,omitempty"`
	By    string    `json:"by,omitempty"`

	// permission and decision
	ID      string `json:"id,omitempty"`
	Kind    string `json:"kind,omitempty"`
	Subject string `json:"subject,omitempty"`
	Object  string `json:"object,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Warning string `json:"warning,omitempty"`
	// Folder and ChatFolder, of a request of a chat started in another
	// folder: where its apps work now, and where the chat began.
	Folder     string `json:"folder,omitempty"`
	ChatFolder string `json:"chat_folder,omitempty"`
	// Change, of a write: what it would do to the file (the hub's diff).
	Change *permissions.Change `json:"change,omitempty"`
	// Changes, of a change set (kind "changes"): every entry an app wrote
	// in a folder it shares with you; Picks, of its decision, the entries
	// accepted (absent: all), Pending that it was left for later.
	Changes *permissions.ChangeSet `json:"changes,omitempty"`
	Picks   []int                  `json:"picks,omitempty"`
	Pending bool                   `json:"pending,omitempty"`
	Options []string               `json:"options,omitempty"`
	// Choices, of a select: every app that could serve; Choice, of its
	// decision, the one chosen.
	Choices []string `json:"choices,omitempty"`
	Choice  string   `json:"choice,omitempty"`
	// Expected, Concerns, Provenance and Labels are the hub's judgement of
	// a permission request (docs/events.md).
	Expected   *bool                    `json:"expected,omitempty"`
	Concerns   []permissions.Concern    `json:"concerns,omitempty"`
	Provenance []permissions.Provenance `json:"provenance,omitempty"`
	Labels     []string                 `json:"labels,omitempty"`
	Answer     string                   `json:"answer,omitempty"`
	Source     string                   `json:"source,omitempty"`
	Allowed    *bool                    `json:"allowed,omitempty"`
	// app_call and app_result
	App      string           `json:"app,omitempty"`
	Function string           `json:"function,omitempty"`
	Args     json.RawMessage  `json:"args,omitempty"`
	Result   json.RawMessage  `json:"result,omitempty"`
	Results  []hub.StepResult `json:"results,omitempty"`
	// Refused, of an answer, are the steps that did not run because a
	// request they needed was denied (hub.Event.Refused): the run exits 1.
	Refused []string `json:"refused,omitempty"`
}

// PlanStep is one step of a plan event.
type PlanStep struct {
	ID            string   `json:"id"`
	Functionality string   `json:"functionality"`
	App           string   `json:"app"`
	DependsOn     []string `json:"depends_on"`
	Needs         []string `json:"needs,omitempty"` // hub entities it needs (docs/plan.md)
}

// EventUsage is what a turn cost.
type EventUsage struct {
	Calls int `json:"calls"`
	// BackgroundCalls are the model calls of the memory upkeep this
	// turn brought due, made after it, and of its seats, made beside its
	// planner (docs/events.md).
	BackgroundCalls int   `json:"background_calls"`
	PromptTokens    int   `json:"prompt_tokens"`
	EvalTokens      int   `json:"eval_tokens"`
	DurationMS      int64 `json:"duration_ms"`
}

// OnPrompt builds the Prompter for --on-prompt:
//
//   - "expected" allows (once) only what the hub judged routine — expected
//     by the plan from that app, in that step, once, reversible, with no
//     concern (no labels the receiver is not cleared for, no
//     instruction-like content, every decisive value from the user) — and
//     denies everything else, irreversible actions included: the policy
//     for scripts;
//   - "judged" allows (once) what the plan declared — expected, or a
//     flow the plan declared whose only concern is what it carries —
//     irreversible actions included, and nothing else: no value that
//     did not come from the user, no instruction-like content, no choice
//     among apps, no file other programs run later, no network; the
//     policy `bulkhead bench` measures;
//   - "deny" denies every dialog;
//   - "once" and "session" allow every dialog that way (irreversible
//     actions: once) — whatever an injected instruction asked for too;
//   - "" fails the run at the first dialog, naming the flag.
func OnPrompt(mode string) (permissions.Prompter, error) {
	switch mode {
	case "":
		return noPrompt{}, nil
	case "expected":
		return permissions.Policy{Answer: permissions.AnswerOnce, RoutineOnly: true,
			Note: "denied by --on-prompt=expected: the hub did not judge this request routine (expected, reversible, no concern)"}, nil
	case "judged":
		return judged{}, nil
	case "deny":
		return permissions.Policy{Answer: permissions.AnswerDeny, Note: "denied by --on-prompt=deny"}, nil
	case "once":
		return permissions.Policy{Answer: permissions.AnswerOnce, Irreversible: permissions.AnswerOnce}, nil
	case "session":
		return permissions.Policy{Answer: permissions.AnswerSession, Irreversible: permissions.AnswerOnce}, nil
	}
	return nil, fmt.Errorf("--on-prompt=%s: want expected, judged, deny, once or session", mode)
}

// judged is --on-prompt=judged.
type judged struct{}

func (judged) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	if err := ctx.Err(); err != nil {
		return permissions.Decision{}, err
	}
	if r.Kind == permissions.KindChanges && !r.Routine() {
		// What an app wrote lands only where the plan expected the write
		// and no entry is warned: the rest stays pending, the person's.
		return permissions.Decision{Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "left pending by --on-prompt=judged: the plan did not expect the write, or an entry is warned of (bulkhead changes)"}, nil
	}
	if !Declared(r) || len(r.Choices) > 0 || slices.ContainsFunc(r.Concerns, func(c permissions.Concern) bool {
		return c == permissions.ConcernForeign || c == permissions.ConcernInstructions || c == permissions.ConcernChoice ||
			c == permissions.ConcernRunsLater || c == permissions.ConcernNetwork
	}) {
		return permissions.Decision{Answer: permissions.AnswerDeny, Source: permissions.SourcePolicy, Note: "denied by --on-prompt=judged: the plan did not declare it, or the hub warned about it"}, nil
	}
	return permissions.Decision{Answer: permissions.AnswerOnce, Source: permissions.SourcePolicy}, nil
}

// Declared reports whether the plan asked for r: the hub found it
// expected, or its only doubts are about what it carries (a flow the plan
// declared, to an app not cleared for its labels), not that it was asked.
func Declared(r permissions.Request) bool {
	return r.Expected || (len(r.Concerns) > 0 && !slices.Contains(r.Concerns, permissions.ConcernUnexpected))
}

// ErrNeedsPrompt is the error of a headless run that met a dialog without
// --on-prompt (with permissions.ErrUnanswerable).
var ErrNeedsPrompt = errors.New("no --on-prompt")

type noPrompt struct{}

// Prompt ends the turn (permissions.ErrUnanswerable): it is kept
// unfinished, for `ask --retry` with a policy.
func (noPrompt) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	return permissions.Decision{}, needsPrompt(fmt.Sprintf("%s %s %s", r.Kind, r.Subject, r.Object))
}

// needsPrompt is noPrompt's answer: ErrNeedsPrompt, and
// permissions.ErrUnanswerable.
type needsPrompt string

func (e needsPrompt) Error() string {
	return fmt.Sprintf("%v (%s): without --on-prompt there is no one to ask", permissions.ErrUnanswerable, string(e))
}

func (e needsPrompt) Is(target error) bool {
	return target == ErrNeedsPrompt || target == permissions.ErrUnanswerable
}

// Unanswered is the error of a run whose turn met a dialog no one could
// answer: nothing was done past it, and the turn is kept for a retry
// with a policy. Its exit status is ExitUnanswered.
type Unanswered struct {
	Chat string
	Err  error
	// Request is the dialog no one answered, when the run saw it: the
	// hint names a policy that allows it.
	Request *permissions.Request
}

// ExitUnanswered is the exit status of a run that ended at a dialog no
// one could answer.
const ExitUnanswered = 3

func (u *Unanswered) Error() string { return u.Err.Error() + "\n" + u.Hint() }

// Hint says what was done and what to do (the error itself was reported
// with the turn): the retry with the most careful policy that allows the
// dialog no one answered — expected, else judged, else once — or, where
// no policy allows it, what does.
func (u *Unanswered) Hint() string {
	again, retry := "run it again", "run it again with"
	if u.Chat != "" {
		again = "run bulkhead ask --retry --chat " + u.Chat
		retry = again
	}
	done := "nothing was done past it; the turn is kept: "
	if u.Chat == "" {
		done = "nothing was done past it, and a private request is not kept: "
	}
	if u.Request == nil {
		return done + retry + " --on-prompt=POLICY, the one that answers its dialogs as you would: expected allows only what the hub judged routine, judged what the plan declared (irreversible actions included) and nothing the hub warned of, once every dialog; or add a rule to the config"
	}
	r := *u.Request
	policy, note := RetryPolicy(r)
	concerns := make([]string, len(r.Concerns))
	for i, c := range r.Concerns {
		concerns[i] = string(c)
	}
	rule := ", or add a rule to the config that allows it"
	if r.IsIrreversible() {
		rule = " (no rule can allow an irreversible action)"
	}
	switch policy {
	case "expected":
		return done + retry + " --on-prompt=expected: it allows what the hub judged routine, as it judged this request, and denies the rest" + rule
	case "judged":
		return done + retry + " --on-prompt=judged: this request is not routine (" + strings.Join(concerns, ", ") + "), so --on-prompt=expected would deny it; judged allows what the plan declared, irreversible actions included, and nothing the hub warned of" + rule
	case "once":
		return done + retry + " --on-prompt=once: the hub warned about this request (" + strings.Join(concerns, ", ") + "), so expected and judged would deny it; once allows every dialog of the turn, whatever asked for it (irreversible actions once)" + rule
	}
	return done + "no --on-prompt policy allows this request (" + note + "): add a rule to the config that allows it, then " + again
}

// RetryPolicy is the most careful --on-prompt policy that allows r —
// "expected", "judged" or "once" — or "" with the reason none does (a
// choice among apps, a change set that is not routine).
func RetryPolicy(r permissions.Request) (policy, why string) {
	for _, mode := range []string{"expected", "judged", "once"} {
		p, _ := OnPrompt(mode)
		d, err := p.Prompt(context.Background(), r)
		if err != nil {
			return "", err.Error()
		}
		// A prompter answers; the broker makes every answer but a denial
		// an allow (a choice among apps: one that names its app).
		if d.Answer != permissions.AnswerDeny && d.Answer != "" && (len(r.Choices) == 0 || slices.Contains(r.Choices, d.Choice)) {
			return mode, ""
		}
		why = d.Note
	}
	return "", why
}

func (u *Unanswered) Unwrap() error { return u.Err }

// ErrFailed is returned (wrapped) when the turn ended in an error; the
// message has been printed already.
var ErrFailed = errors.New("request failed")

// Run asks one question and prints the outcome to out (and, in text mode,
// errors to errOut). It returns an error wrapping ErrFailed if the turn did
// not produce a full answer.
func Run(ctx context.Context, b Backend, query string, opts Options, out, errOut io.Writer) error {
	p := newPrinter(out, errOut, opts)
	err := run(ctx, b, query, opts, p)
	p.mu.Lock()
	p.takeBack() // a draft shown whose plan never came is not the answer
	p.mu.Unlock()
	if ferr := p.flush(); err == nil {
		err = ferr
	}
	return err
}

func run(ctx context.Context, b Backend, query string, opts Options, p *printer) error {
	query = strings.TrimSpace(query)
	if query == "" && !opts.Retry {
		return fmt.Errorf("%w: nothing to ask: give the request as arguments or on standard input", ErrUsage)
	}
	if opts.Retry && opts.Chat == "" {
		return fmt.Errorf("%w: --retry needs --chat: which chat's last turn to run again", ErrUsage)
	}
	if opts.Unavailable != nil {
		p.emit(hub.Event{Kind: hub.EventError, Err: opts.Unavailable})
		return fmt.Errorf("%w: %w", ErrFailed, opts.Unavailable)
	}
	var chat hub.Chat
	var err error
	if opts.Chat != "" {
		chat, err = b.Chat(opts.Chat)
	} else {
		chat, err = b.NewChat(opts.Private)
	}
	if err != nil {
		return err
	}
	p.chat = chat.ID
	if opts.Retry {
		var last []hub.Turn
		if last, _, err = b.TurnsBefore(chat.ID, 0, 1); err != nil {
			return err
		}
		if len(last) == 0 || !last[0].Retryable() {
			return fmt.Errorf("the last turn of chat %s finished; nothing to retry", chat.ID)
		}
		_, err = b.Retry(ctx, chat.ID, last[0].Seq, p.emit)
	} else {
		_, err = b.AskWith(ctx, chat.ID, query, hub.AskOptions{Private: opts.Private && opts.Chat != "", Undrafted: !opts.showsDrafts()}, p.emit)
	}
	if p.err != nil {
		return p.err
	}
	if err == nil {
		var failed []error
		if refused, unsaid := p.refusedSteps(); len(refused) > 0 {
			// The answer stands, and says what did not run; a script sees
			// it (exit 1). What the answer does not say is said here.
			if !opts.JSON && len(unsaid) > 0 {
				p.write(p.errOut, "bulkhead: not done: "+strings.Join(unsaid, "; ")+"\n")
			}
			failed = append(failed, fmt.Errorf("%w: %s", ErrRefused, strings.Join(refused, "; ")))
		}
		if n := p.pendingSets(); n > 0 {
			// The answer stands; what the apps wrote did not land: a
			// script sees it (exit 1) and is told where it waits.
			msg := fmt.Sprintf("%s left pending: nothing of it is in your folders; bulkhead changes lists it (show, accept, discard)", plural(n, "change set"))
			if !opts.JSON {
				p.write(p.errOut, "bulkhead: "+msg+"\n")
			}
			failed = append(failed, errors.New(msg))
		}
		if len(failed) > 0 {
			return fmt.Errorf("%w: %w", ErrFailed, errors.Join(failed...))
		}
	}
	if err != nil {
		if !p.reported {
			p.emit(hub.Event{Kind: hub.EventError, Chat: chat.ID, Err: err})
		}
		// A chat this run started, whose turn failed before anything
		// happened (no dialog, no app call, no word of an answer), is not
		// kept: running the request again is the retry.
		if d, ok := b.(interface{ DeleteChat(string) error }); ok && opts.Chat == "" && !p.happened() {
			_ = d.DeleteChat(chat.ID)
		}
		if errors.Is(err, permissions.ErrUnanswerable) {
			u := &Unanswered{Chat: chat.ID, Err: err, Request: p.unansweredRequest()}
			if opts.Private {
				u.Chat = ""
			}
			return u
		}
		return fmt.Errorf("%w: %w", ErrFailed, err)
	}
	return nil
}

// ErrUsage is matched by Run's error for a request it cannot make sense
// of (no query, --retry without --chat): bad usage, exit status 2.
var ErrUsage = errors.New("bad usage")

// ErrRefused is matched by Run's error when the turn answered but a step
// of it did not run because a request it needed was denied — by a rule,
// a policy or a remembered denial (hub.Event.Refused). Like every error
// of a turn that ran, it wraps ErrFailed: exit status 1. A denial the
// turn did without — an extra call refused, a step that ran without data
// it was denied — fails nothing.
var ErrRefused = errors.New("a request the turn needed was denied")
