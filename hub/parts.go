package hub

import "strings"

// Who wrote each word of an answer is structure, not text (DESIGN.md §3,
// invariant 12): an answer is a list of parts, each with its author —
// the hub's own words, the assistant's (a model that read only the
// user's words and typed values), or an app's (its words, or a model's
// that read them). Every channel draws a part as its author's: an app's
// framed and labelled, each of its lines marked, so that nothing inside
// it can end it or read as another author's; no quote mark or other
// character inside a part carries meaning.

// By is who wrote a part.
type By string

// The authors of parts.
const (
	ByAssistant By = "assistant"
	ByHub       By = "hub"
	ByApp       By = "app"
)

// Part is one author's run of an answer.
type Part struct {
	By By `json:"author"`
	// App names the app of a part By an app.
	App  string `json:"app,omitempty"`
	Text string `json:"text"`
}

// Parts is an answer, in order.
type Parts []Part

// Text is the answer's words, the parts joined: what the planner and
// the spokes remember of it.
func (ps Parts) Text() string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Text)
	}
	return b.String()
}

// Add appends text by an author; it joins the last part when that is
// the same author's.
func (ps *Parts) Add(by By, app, text string) {
	if text == "" {
		return
	}
	if by != ByApp {
		app = ""
	}
	if n := len(*ps); n > 0 && (*ps)[n-1].By == by && (*ps)[n-1].App == app {
		(*ps)[n-1].Text += text
		return
	}
	*ps = append(*ps, Part{By: by, App: app, Text: text})
}

// Words say who wrote p, as every channel labels it: "the assistant",
// "bulkhead", "weather, an app — its words, not the assistant's".
func (p Part) Words() string {
	switch p.By {
	case ByAssistant:
		return "the assistant"
	case ByHub:
		return "bulkhead"
	}
	return Author(p.App)
}

// byOf is who writes what a spoke of app streams: the plain spoke is the
// assistant; any other (an app's, the --vanilla baseline's) is the app.
func byOf(app string) By {
	if app == VanillaApp || app == "" {
		return ByAssistant
	}
	return ByApp
}

// partsOf is an answer stored before it had parts: one part, by the
// author the turn names.
func partsOf(answer, by string) Parts {
	var ps Parts
	switch by {
	case "", VanillaApp, SynthesisApp:
		ps.Add(ByAssistant, "", answer)
	default:
		ps.Add(ByApp, by, answer)
	}
	return ps
}

// setAnswer keeps the answer's parts as the step that answers wrote
// them.
func (t *turnRun) setAnswer(ps Parts) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.answer = ps
}

// answerParts are the answer's parts: as the step that answered kept
// them, or text by author where it kept none (a draft, a cut answer).
func (t *turnRun) answerParts(text, by string) Parts {
	t.mu.Lock()
	ps := t.answer
	t.mu.Unlock()
	if len(ps) > 0 && ps.Text() == text {
		return ps
	}
	return partsOf(text, by)
}
