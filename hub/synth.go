package hub

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
	"github.com/bulkhead-dev/bulkhead/internal/termtext"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
	"github.com/bulkhead-dev/bulkhead/spokes"
)

// The synthesis of a plan with several steps reads no app-authored text.
// Its model gets the user's request and the typed results with every
// free-text value — any string the catalog's schema does not close with
// an enum, and every error — replaced by a reference ({{r1}}); numbers,
// booleans, closed strings and plain dates or times stay as they are.
// Where the answer needs a text it writes the reference, and the hub puts
// the text in its place as a part of the answer by that app (parts.go:
// masked where it is instruction-like, clipped when long), never inside
// the assistant's words; the results card shows every value in full. So
// text in one app's result can change neither what the answer says about
// another app's value nor what it says about the request: the model that
// writes it never read that text, and its own words are a part no app's
// text can enter or end.

// refText is one free-text value the synthesis refers to; about names
// another app of the plan, or a value another step produced, that the
// text speaks of: such a text is not put into the answer. hub: the text
// is the hub's own (an error the hub wrote of a step).
type refText struct {
	app   string
	text  string
	about string
	hub   bool
}

// refs numbers the free texts of a synthesis.
type refs struct {
	texts []refText
}

func (r *refs) add(app, text string) string {
	return r.addAbout(app, text, "")
}

// addHub refers to the hub's own words (an error it wrote of a step).
func (r *refs) addHub(text string) string {
	r.texts = append(r.texts, refText{text: text, hub: true})
	return fmt.Sprintf("{{r%d}}", len(r.texts))
}

func (r *refs) addAbout(app, text, about string) string {
	r.texts = append(r.texts, refText{app: app, text: text, about: about})
	return fmt.Sprintf("{{r%d}}", len(r.texts))
}

// reRef finds a reference in the model's answer.
var reRef = lazyRegexp(`\{\{\s*r(\d+)\s*\}\}`)

// maxRefRunes bounds the text one reference puts into the answer; the
// results card has the rest.
const maxRefRunes = 300

// render is the part a reference stands for, as the answer shows it:
// the app's text, by the app; or the hub's words where the text is
// withheld or there is none.
func (r *refs) render(n int) Part {
	if n < 1 || n > len(r.texts) {
		return Part{By: ByHub, Text: "(no such text)"}
	}
	t := r.texts[n-1]
	if t.about != "" {
		// One app's claim about another step's value, another app or the
		// user's request: withheld, with the reason; the results card
		// has it in full, beside the other's own typed value.
		return Part{By: ByHub, Text: fmt.Sprintf("withheld: %s's text %s — see the results", t.app, t.about)}
	}
	// On one line, with every control an app wrote made a visible
	// escape, masked where instruction-like, bounded. Its quote marks
	// are its own: the part is drawn as the app's, whatever it holds.
	text := termtext.OneLine(strings.Join(strings.Fields(t.text), " "))
	text, _ = guard.Mask(text)
	if utf8.RuneCountInString(text) > maxRefRunes {
		text = string([]rune(text)[:maxRefRunes]) + "… (in full in the results)"
	}
	switch {
	case t.hub:
		return Part{By: ByHub, Text: text}
	case text == t.app:
		// The app's own name and nothing else (a "service" field): the
		// hub's word for the app, which carries no word of the app's.
		return Part{By: ByAssistant, Text: text}
	}
	return Part{By: ByApp, App: t.app, Text: text}
}

// parts splits s, the synthesis' answer, into the assistant's words and
// the parts its references stand for.
func (r *refs) parts(s string) Parts {
	var ps Parts
	for {
		loc := reRef().FindStringSubmatchIndex(s)
		if loc == nil {
			ps.Add(ByAssistant, "", s)
			return ps
		}
		ps.Add(ByAssistant, "", s[:loc[0]])
		var n int
		fmt.Sscanf(s[loc[2]:loc[3]], "%d", &n)
		p := r.render(n)
		ps.Add(p.By, p.App, p.Text)
		s = s[loc[1]:]
	}
}

// reSafeScalar is a string that cannot carry words: a number, a date, a
// time.
var reSafeScalar = lazyRegexp(`^[0-9][0-9:.,+\-TZ/ ]{0,39}$`)

// synthesisView is what the synthesis model reads of the results: the
// typed values with free text replaced by references.
func (o *Operator) synthesisView(results []StepResult) ([]map[string]any, *refs) {
	rf := &refs{}
	var out []map[string]any
	for _, r := range results {
		step := map[string]any{"step": r.Step, "app": r.App, "functionality": r.Functionality}
		if r.Value != nil {
			var v any
			if json.Unmarshal(r.Value, &v) == nil {
				step["value"] = refValue(o.responseSchema(r.Functionality), v, r.App, rf, judge.OthersOf(judgedResult(r), judgedResults(results)))
			}
		}
		if r.Error != "" {
			if r.ErrorByHub {
				step["error"] = rf.addHub(r.Error)
			} else {
				step["error"] = rf.add(r.App, r.Error)
			}
		}
		out = append(out, step)
	}
	return out, rf
}

func (o *Operator) responseSchema(fn string) map[string]any {
	var s map[string]any
	if o.opts.Apps != nil {
		if e, ok := o.opts.Apps.Catalog().Get(fn); ok {
			_ = json.Unmarshal(e.Response, &s)
		}
	}
	return s
}

// refValue replaces the free text in v (described by schema s) by
// references; a text that speaks of another app or another step's value
// (o) is referred to, never quoted.
func refValue(s map[string]any, v any, app string, rf *refs, o judge.Others) any {
	switch t := v.(type) {
	case map[string]any:
		props, _ := s["properties"].(map[string]any)
		out := map[string]any{}
		for k, x := range t {
			ps, _ := props[k].(map[string]any)
			out[k] = refValue(ps, x, app, rf, o)
		}
		return out
	case []any:
		items, _ := s["items"].(map[string]any)
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = refValue(items, x, app, rf, o)
		}
		return out
	case string:
		if apps.ClosedText(s) || reSafeScalar().MatchString(t) {
			return t
		}
		return rf.addAbout(app, t, o.About(t))
	}
	return v
}

// refStream puts the parts references stand for in place of them in a
// streamed answer: it holds back a piece that may be the start of a
// reference until it is complete.
type refStream struct {
	rf   *refs
	held string
	emit func(Part)
}

func (s *refStream) write(piece string) {
	text := s.held + piece
	s.held = ""
	for {
		i := strings.Index(text, "{{")
		if i < 0 {
			// A lone "{" at the end may open one.
			if strings.HasSuffix(text, "{") {
				s.out(text[:len(text)-1])
				s.held = "{"
				return
			}
			s.out(text)
			return
		}
		s.out(text[:i])
		text = text[i:]
		j := strings.Index(text, "}}")
		if j < 0 {
			if len(text) > 16 { // too long for a reference: plain text
				s.out(text[:2])
				text = text[2:]
				continue
			}
			s.held = text
			return
		}
		for _, p := range s.rf.parts(text[:j+2]) {
			s.emit(p)
		}
		text = text[j+2:]
	}
}

func (s *refStream) flush() {
	if s.held != "" {
		s.out(s.held)
		s.held = ""
	}
}

// out is the assistant's own words.
func (s *refStream) out(t string) {
	if t != "" {
		s.emit(Part{By: ByAssistant, Text: t})
	}
}

// synthesize writes the answer from typed results in a fresh vanilla
// spoke that has no history, leaves no trace of its own, and reads no
// app-authored text (see the comment at the top of this file).
func (o *Operator) synthesize(ctx context.Context, tr *turnRun, results []StepResult) (spokes.Result, error) {
	sp, err := o.freshSpoke(tr, synthesisSystem)
	if err != nil {
		return spokes.Result{Status: memory.StatusError}, err
	}
	defer sp.Stop()
	view, rf := o.synthesisView(results)
	tr.emit(Event{Kind: EventSpoke, App: "synthesis", Working: true})
	defer tr.emit(Event{Kind: EventSpoke, App: "synthesis", Working: false})
	stream := &refStream{rf: rf, emit: func(p Part) {
		app := VanillaApp
		if p.By == ByApp {
			app = p.App
		}
		tr.emit(Event{Kind: EventToken, App: app, By: p.By, Text: p.Text})
	}}
	res, err := sp.Do(ctx, spokes.Task{Chat: tr.chat, Query: tr.query, Data: quote(view), Fresh: true, NoLog: true,
		OnChunk: func(c llm.Chunk) {
			if c.Content != "" {
				stream.write(c.Content)
			}
		}})
	stream.flush()
	answer := rf.parts(res.Text)
	res.Text = answer.Text()
	tr.setAnswer(answer)
	return res, err
}

const synthesisSystem = spokes.Preamble + " Answer the user's request from the typed results of the apps that worked on it, given as JSON data. Report numbers and values exactly as they are; say plainly when a step failed. Texts the apps wrote are not shown to you: each appears as a reference such as {{r1}}. When your answer needs one, write the reference exactly as it appears and bulkhead will show the app's text in its place; never guess what a reference says."

// judgedResult is a step's result as the judgement reads it.
func judgedResult(r StepResult) judge.Result {
	return judge.Result{Step: r.Step, App: r.App, Value: r.Value}
}

// judgedResults are the results of the plan's app steps (the vanilla
// spoke's words are the plan's own).
func judgedResults(rs []StepResult) []judge.Result {
	var out []judge.Result
	for _, r := range rs {
		if r.App != VanillaApp {
			out = append(out, judgedResult(r))
		}
	}
	return out
}
