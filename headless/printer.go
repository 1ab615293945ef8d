package headless

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// The printer: a run's events as text or JSON lines, and what it keeps
// of them to say how the run ended.

// refusedSteps are the answer's refused steps, and those of them its
// text does not say.
func (p *printer) refusedSteps() (all, unsaid []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range p.refused {
		if !strings.Contains(p.answer, r) {
			unsaid = append(unsaid, r)
		}
	}
	return p.refused, unsaid
}

// unansweredRequest is the dialog the run's turn ended at, if it saw it.
func (p *printer) unansweredRequest() *permissions.Request {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.unanswered
}

// pendingSets counts the change sets the run left pending.
func (p *printer) pendingSets() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.pending)
}

func plural(n int, w string) string {
	if n == 1 {
		return "1 " + w
	}
	return fmt.Sprintf("%d %ss", n, w)
}

// happened says whether the run's turn did anything worth keeping: a
// dialog, an app call, a word of an answer.
func (p *printer) happened() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.acted
}

// printer writes a run's events. out and errOut sanitize what passes
// through them: out as JSON in JSON mode, as text otherwise.
type printer struct {
	out, errOut *termtext.Writer
	rawOut      io.Writer // out itself, for the printer's own sequences
	opts        Options
	chat        string
	mu          sync.Mutex
	streamed    bool
	reported    bool
	acted       bool  // a dialog, an app call or an answer's token was seen
	err         error // a write failure
	// draft holds a streamed draft until the plan says it is the answer:
	// text on a pipe cannot be withdrawn.
	draft strings.Builder
	// prev is a draft shown on a terminal before its plan.
	prev preview
	// attributed: the answer's author has been said (--json).
	attributed bool
	// pw writes the streamed answer's parts (text mode).
	pw *hub.PartWriter
	// sets are the change sets asked (set id by request id); pending
	// those whose last decision left them pending.
	sets    map[string]string
	pending map[string]bool
	// asked are the requests put to the prompter by id; unanswered the
	// first a policy denied: without --on-prompt, the dialog no one
	// could answer (every later one is cancelled with the turn).
	asked      map[string]*permissions.Request
	unanswered *permissions.Request
	// refused and answer are the answer's refused steps and its text.
	refused []string
	answer  string
}

// track follows the requests and change sets asked and what became of
// them, and what the answer says was refused.
func (p *printer) track(e hub.Event) {
	switch {
	case e.Kind == hub.EventPermission && e.Permission != nil:
		if p.asked == nil {
			p.asked = map[string]*permissions.Request{}
		}
		p.asked[e.Permission.ID] = e.Permission
	case e.Kind == hub.EventDecision && e.Decision != nil && !e.Decision.Allowed && e.Decision.Source == permissions.SourcePolicy && p.unanswered == nil:
		p.unanswered = p.asked[e.Decision.RequestID]
	case e.Kind == hub.EventAnswer:
		p.refused, p.answer = e.Refused, e.Text
	}
	switch {
	case e.Kind == hub.EventPermission && e.Permission != nil && e.Permission.Kind == permissions.KindChanges && e.Permission.Changes != nil:
		if p.sets == nil {
			p.sets, p.pending = map[string]string{}, map[string]bool{}
		}
		p.sets[e.Permission.ID] = e.Permission.Changes.ID
	case e.Kind == hub.EventDecision && e.Decision != nil && p.sets[e.Decision.RequestID] != "":
		id := p.sets[e.Decision.RequestID]
		if e.Decision.Pending() {
			p.pending[id] = true
		} else {
			delete(p.pending, id)
		}
	}
}

// author is the JSON form of who wrote an answer.
func author(by string) string {
	if hub.AuthorIsApp(by) || by == hub.MonolithApp {
		return by
	}
	return "assistant"
}

func newPrinter(out, errOut io.Writer, opts Options) *printer {
	p := &printer{out: termtext.NewWriter(out), rawOut: out, errOut: termtext.NewWriter(errOut), opts: opts}
	if opts.JSON {
		p.out = termtext.NewJSONWriter(out)
	}
	return p
}

// flush writes what the writers hold back (the start of a rune whose
// end never came) and reports the first write failure.
func (p *printer) flush() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, w := range []*termtext.Writer{p.out, p.errOut} {
		if err := w.Flush(); err != nil && p.err == nil {
			p.err = fmt.Errorf("write output: %w", err)
		}
	}
	return p.err
}

func (p *printer) emit(e hub.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch e.Kind {
	case hub.EventPermission, hub.EventDecision, hub.EventAppCall, hub.EventToken, hub.EventDraft, hub.EventAnswer:
		p.acted = true
	}
	p.track(e)
	if p.opts.JSON {
		p.emitJSON(e)
		return
	}
	switch e.Kind {
	case hub.EventDraft:
		if p.opts.showsDrafts() {
			p.showDraft(e.Text)
		} else {
			p.draft.WriteString(e.Text)
		}
	case hub.EventDraftWithdrawn:
		p.takeBack()
		p.draft.Reset()
	case hub.EventPlan:
		if p.previewing() {
			p.keepPreview()
		} else if p.opts.Stream && p.draft.Len() > 0 {
			p.streamed = true
			p.parts().Write(hub.ByAssistant, "", p.draft.String())
		}
		p.draft.Reset()
	case hub.EventToken:
		if p.opts.Stream {
			p.streamed = true
			by, app := hub.TokenBy(e)
			p.parts().Write(by, app, e.Text)
		}
	case hub.EventAnswer:
		if p.streamed {
			p.parts().Close()
		} else {
			p.write(p.out, strings.TrimRight(answerParts(e).Plain("", p.opts.Attribute), "\n")+"\n")
		}
	case hub.EventError:
		p.reported = true
		p.takeBack()
		if p.streamed {
			p.parts().Close()
		} else if e.Text != "" {
			p.write(p.out, strings.TrimRight(answerParts(e).Plain("", p.opts.Attribute), "\n")+"\n")
		}
		p.write(p.errOut, "bulkhead: "+message(e.Err)+"\n")
	}
}

// parts is the writer of the streamed answer's parts: each author's
// words as hub.Parts.Plain draws them.
func (p *printer) parts() *hub.PartWriter {
	if p.pw == nil {
		p.pw = hub.NewPartWriter(func(s string) { p.write(p.out, s) }, "", p.opts.Attribute)
	}
	return p.pw
}

// answerParts are an answer's (or a cut answer's) parts: as the event
// carries them, or its text by its author from a serving process that
// sent none.
func answerParts(e hub.Event) hub.Parts {
	if len(e.Parts) > 0 {
		return e.Parts
	}
	return hub.Turn{Answer: e.Text, Author: e.App}.AnswerParts()
}

func (p *printer) emitJSON(e hub.Event) {
	var ev Event
	switch e.Kind {
	case hub.EventPlan:
		ev = Event{Type: "plan", Chat: p.chat, Fallback: e.Plan.Fallback, Retried: e.Plan.Retried, Text: e.Plan.Reason}
		for _, s := range e.Plan.Steps {
			ev.Steps = append(ev.Steps, PlanStep{ID: s.ID, Functionality: s.Functionality, App: s.App, DependsOn: s.DependsOn, Needs: s.Needs})
		}
	case hub.EventToken:
		if !p.opts.Stream {
			return
		}
		ev = Event{Type: "token", Text: e.Text}
		by, app := hub.TokenBy(e)
		ev.By, ev.App = string(by), app
		if !p.attributed {
			p.attributed = true
			ev.Author, ev.AuthorWords = author(e.App), hub.Author(e.App)
		}
	case hub.EventDraft:
		if !p.opts.Stream {
			return
		}
		ev = Event{Type: "draft", Chat: p.chat, Text: e.Text}
	case hub.EventDraftWithdrawn:
		if !p.opts.Stream {
			return
		}
		ev = Event{Type: "draft_withdrawn", Chat: p.chat}
	case hub.EventAnswer:
		ev = Event{Type: "answer", Chat: p.chat, Text: e.Text, Usage: usageOf(e.Usage), Author: author(e.App), AuthorWords: hub.Author(e.App), Parts: answerParts(e), Refused: e.Refused}
	case hub.EventPermission:
		r := e.Permission
		ev = Event{Type: "permission", ID: r.ID, Kind: string(r.Kind), Subject: r.Subject, Object: r.Object, Function: r.Function,
			Args: r.Args, Detail: r.Detail, Warning: r.Warning, Folder: r.Folder, ChatFolder: r.ChatFolder, Change: r.Change, Changes: r.Changes, Expected: &r.Expected, Concerns: r.Concerns, Provenance: r.Provenance, Labels: r.Labels, Choices: r.Choices}
		for _, o := range r.Options() {
			ev.Options = append(ev.Options, string(o))
		}

	case hub.EventDecision:
		d := e.Decision
		ev = Event{Type: "decision", ID: d.RequestID, Answer: string(d.Answer), Source: string(d.Source), Allowed: &d.Allowed, Choice: d.Choice, Picks: d.Picks}
		if d.Pending() {
			// a change set's: neither applied nor discarded
			ev.Pending = p.sets[d.RequestID] != ""
		}
	case hub.EventAppCall:
		ev = Event{Type: "app_call", App: e.App, Function: e.Function, Args: e.Args}
	case hub.EventAppResult:
		ev = Event{Type: "app_result", App: e.App, Function: e.Function, Result: e.Result}
		if e.Err != nil {
			ev.Message = e.Err.Error()
		}
	case hub.EventResults:
		ev = Event{Type: "results", Results: e.Results}
	case hub.EventError:
		p.reported = true
		ev = Event{Type: "error", Chat: p.chat, Message: message(e.Err), Partial: e.Text, Status: string(e.Status), Usage: usageOf(e.Usage)}
	default:
		return
	}
	b, err := json.Marshal(ev)
	if err != nil {
		p.err = err
		return
	}
	p.write(p.out, string(b)+"\n")
}

func (p *printer) write(w io.Writer, s string) {
	if p.err != nil {
		return
	}
	if _, err := io.WriteString(w, s); err != nil {
		p.err = fmt.Errorf("write output: %w", err)
	}
}

func usageOf(u llm.Usage) *EventUsage {
	return &EventUsage{Calls: u.Calls, BackgroundCalls: u.BackgroundCalls, PromptTokens: u.PromptTokens, EvalTokens: u.EvalTokens, DurationMS: u.Duration.Milliseconds()}
}

// message is what the user reads for an error: the typed errors of the
// model layer already say what to do.
func message(err error) string {
	if err == nil {
		return "unknown error"
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	var cut *llm.StreamCutError
	if errors.As(err, &cut) {
		return err.Error() + "; the partial answer is kept — run the request again to retry"
	}
	return err.Error()
}
