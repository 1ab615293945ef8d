package chat

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"

	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/tui/widget"
)

// Live is a running turn as the chat draws it, built from its events on
// the UI loop.
type Live struct {
	ID    int // the run's, so a rendering of another run is not reused
	Query string
	Seq   uint64 // the turn retried, or the new turn's once an event names it
	// Fallback says why the plan fell back to the plain model ("": it did not).
	Fallback string
	// Drafting: the answer so far is the plain model's draft, made while
	// the hub plans (hub.EventDraft); it goes if the plan uses an app.
	Drafting bool
	// Private: a /private query (AskOptions.Private); its events carry
	// turn 0 and the hub keeps nothing of it.
	Private bool

	Extras Extras // app calls, permissions, the results card
	Answer strings.Builder
	// Parts is the answer so far by its authors, as its tokens said.
	Parts      hub.Parts
	Thinking   strings.Builder
	App        string
	Status     memory.Status // pending while running
	ErrText    string
	Cancelling bool
	Started    time.Time // when it was sent
	Tokens     int       // streamed answer chunks (one token each, from Ollama)
	// Doing is what the turn waits for besides the model, by app: its
	// server starting, a tool of it running and how far it got.
	Doing map[string]string
}

// NewLive is a turn just sent: pending, started now.
func NewLive(id int, query string, seq uint64) *Live {
	return &Live{ID: id, Query: query, Seq: seq, Status: memory.StatusPending, Started: time.Now()}
}

// Apply folds events into the live state and the status bar's set of
// working spokes. The started event names the turn, so the chat finds
// the hub's pending record of it by number.
func (r *Live) Apply(evs []hub.Event, working map[string]bool) {
	for _, e := range evs {
		if e.Turn != 0 && !r.Private {
			r.Seq = e.Turn
		}
		r.doing(e)
		if r.Extras.add(e) {
			continue
		}
		switch e.Kind {
		case hub.EventPlan:
			r.Drafting = false
			if e.Plan != nil {
				if apps := e.Plan.Apps(); len(apps) > 0 {
					r.App = strings.Join(apps, ", ")
				}
				if e.Plan.Fallback {
					r.Fallback = fallbackWords(e.Plan.Reason)
				}
			}
		case hub.EventDraft:
			r.Drafting = true
			r.Answer.WriteString(e.Text)
			r.Parts.Add(hub.ByAssistant, "", e.Text)
			r.Tokens++
		case hub.EventDraftWithdrawn:
			r.Drafting = false
			r.Answer.Reset()
			r.Parts = nil
			r.Tokens = 0
		case hub.EventToken:
			r.Drafting = false
			r.Answer.WriteString(e.Text)
			by, app := hub.TokenBy(e)
			r.Parts.Add(by, app, e.Text)
			r.Tokens++
			if r.Extras.results == nil {
				r.App = e.App
			} else { // the assistant writes from the apps' results
				r.App = hub.SynthesisApp
			}
		case hub.EventThinking:
			r.Thinking.WriteString(e.Text)
			r.App = e.App
		case hub.EventSpoke:
			working[e.App] = e.Working
			if e.Working {
				r.App = e.App
			}
		case hub.EventAnswer:
			r.Status = memory.StatusOK
			if e.App != "" {
				r.App = e.App // who wrote it (hub.Turn.AnsweredBy)
			}
			r.Answer.Reset()
			r.Answer.WriteString(e.Text)
			r.Parts = hub.Turn{Answer: e.Text, Author: e.App, Parts: e.Parts}.AnswerParts()
		case hub.EventError:
			r.Status = e.Status
			if e.Err != nil {
				r.ErrText = e.Err.Error()
			}
			if r.Answer.Len() == 0 && e.Text != "" {
				r.Answer.WriteString(e.Text) // the partial answer
				r.Parts = hub.Turn{Answer: e.Text, Author: e.App, Parts: e.Parts}.AnswerParts()
			}
		}
	}
}

// doing keeps what the turn waits for besides the model (Doing): an
// app's server starting, a tool running, its progress; it ends with the
// call, or with the app's spoke.
func (r *Live) doing(e hub.Event) {
	set := func(app, what string) {
		if r.Doing == nil {
			r.Doing = map[string]string{}
		}
		r.Doing[app] = what
	}
	switch e.Kind {
	case hub.EventAppCall:
		set(e.App, "running "+e.App+"."+e.Function)
	case hub.EventAppResult:
		delete(r.Doing, e.App)
	case hub.EventSpoke:
		if !e.Working {
			delete(r.Doing, e.App)
		}
	case hub.EventProgress:
		if p := e.Progress; p != nil {
			if what := ProgressWords(*p); what != "" {
				set(p.App, what)
			} else {
				delete(r.Doing, p.App)
			}
		}
	}
}

// ProgressWords say what a turn waits for, from an app's progress: its
// server starting ("" once started, before a call: the turn goes on),
// or its tool running, with how far it got and its own words.
func ProgressWords(p apps.Progress) string {
	fn := p.App
	if p.Function != "" {
		fn += "." + p.Function
	}
	switch {
	case p.Starting && p.Function == "":
		return "starting the MCP server " + p.App + " (listing its tools)"
	case p.Starting:
		return "starting the MCP server " + p.App + " for " + fn
	case p.Function == "":
		return ""
	}
	w := "running " + fn
	switch {
	case p.Total > 0:
		w += fmt.Sprintf(" · %s/%s", num(p.Done), num(p.Total))
	case p.Done > 0:
		w += " · " + num(p.Done)
	}
	if m := widget.OneLine(p.Message); m != "" {
		w += " · " + p.App + ": " + m
	}
	return w
}

// num is a progress count: whole numbers without a fraction.
func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// doingWords is what the turn waits for, in one line ("" for nothing
// but the model).
func (r *Live) doingWords() string {
	var out []string
	for _, app := range slices.Sorted(maps.Keys(r.Doing)) {
		out = append(out, r.Doing[app])
	}
	return strings.Join(out, "; ")
}

// View is the run as the chat draws it.
func (r *Live) View() TurnView {
	return TurnView{
		Query: r.Query, Answer: r.Answer.String(), Parts: r.Parts, Thinking: r.Thinking.String(),
		Status: r.Status, Error: r.ErrText, App: r.App, Live: true, Cancelling: r.Cancelling,
		Extras: &r.Extras, Private: r.Private, Started: r.Started, Tokens: r.Tokens, Fallback: r.Fallback, Drafting: r.Drafting,
		Doing: r.doingWords(),
	}
}

// fallbackWords is what a turn says when the planner's output was
// unusable and the plain model answered instead.
func fallbackWords(reason string) string {
	s := "the planner's output was unusable twice, so the plain model answered, with no app"
	if reason = widget.OneLine(reason); reason != "" {
		s += " (" + reason + ")"
	}
	return s
}
