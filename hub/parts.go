package hub

import (
	"strings"
	"unicode/utf8"
)

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

// TokenBy is who wrote a token or a draft piece: its By, or, from a
// serving process that did not say, the spoke's app.
func TokenBy(e Event) (By, string) {
	by := e.By
	if by == "" {
		by = byOf(e.App)
	}
	if by != ByApp {
		return by, ""
	}
	return by, e.App
}

// Lines splits a part's text into the lines a channel marks one by
// one: at every line break Unicode knows (\n, \r, \v, \f, NEL, the line
// and paragraph separators), so that no character of an app's can start
// a line its mark does not begin.
func Lines(text string) []string {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	var out []string
	start := 0
	for i, r := range text {
		if isBreak(r) {
			out = append(out, text[start:i])
			start = i + utf8.RuneLen(r)
		}
	}
	return append(out, text[start:])
}

// isBreak reports whether r ends a line anywhere a text may be shown.
func isBreak(r rune) bool {
	switch r {
	case '\n', '\r', '\v', '\f', 0x85, 0x2028, 0x2029:
		return true
	}
	return false
}

// Plain draws an answer's parts for a channel of plain lines (`ask`,
// accessible mode, `chats show`): the assistant's words as they are; the
// hub's each line led by "bulkhead: "; an app's between a line that
// names it ("┌ weather, an app — …") and a closing line ("└"), every
// line of it led by "│ " — so nothing an app wrote can end its part or
// start a line of another author's. quote leads every line of a part
// that is not the assistant's ("> " for Markdown, "" for text); all
// labels the assistant's parts too ("the assistant:"), for a channel
// where no author goes unnamed (accessible mode).
func (ps Parts) Plain(quote string, all bool) string {
	var b strings.Builder
	pw := NewPartWriter(func(s string) { b.WriteString(s) }, quote, all)
	for _, p := range ps {
		pw.Write(p.By, p.App, p.Text)
	}
	pw.Close()
	return b.String()
}

// Markdown draws the parts as Plain does for a Markdown document (the
// export): every line of a part that is not the assistant's quoted
// ("> "), and in it every character Markdown or HTML would act on
// escaped, so that an app's text renders as its text, inside its quote.
func (ps Parts) Markdown() string {
	var b strings.Builder
	pw := NewPartWriter(func(s string) { b.WriteString(s) }, "> ", true)
	pw.esc, pw.assistant = mdEscape, "**the assistant:**\n\n"
	for _, p := range ps {
		pw.Write(p.By, p.App, p.Text)
	}
	pw.Close()
	return b.String()
}

// mdEscape is r as Markdown shows it literally.
func mdEscape(r rune) string {
	switch r {
	case '<':
		return "&lt;"
	case '>':
		return "&gt;"
	case '&':
		return "&amp;"
	case '\\', '`', '*', '_', '[', ']', '|', '~':
		// (every line of such a part starts with its mark: nothing at
		// a line's start — a heading, a list — can act)
		return "\\" + string(r)
	}
	return string(r)
}

// PartWriter draws parts as Plain does, piece by piece as they stream.
type PartWriter struct {
	esc       func(rune) string // escapes an app's and the hub's characters (Markdown)
	assistant string            // labels the assistant's parts (all); "" for the plain label
	out       func(string)
	quote     string
	all       bool
	by        By
	app       string
	open      bool // a part has begun
	lineStart bool // the next rune starts a line (its mark first)
	text      bool // the part has written a rune (leading breaks are dropped)
	last      byte // the last byte written
}

// NewPartWriter writes to out.
func NewPartWriter(out func(string), quote string, all bool) *PartWriter {
	return &PartWriter{out: out, quote: quote, all: all}
}

func (w *PartWriter) put(s string) {
	if s != "" {
		w.out(s)
		w.last = s[len(s)-1]
	}
}

// Write writes a piece of a part by by (app naming an app).
func (w *PartWriter) Write(by By, app, text string) {
	if by != ByApp {
		app = ""
	}
	if !w.open || by != w.by || app != w.app {
		w.end()
		w.begin(by, app)
	}
	if by == ByAssistant {
		w.put(text)
		return
	}
	var b strings.Builder
	for _, r := range text {
		if isBreak(r) {
			if !w.text {
				continue // leading breaks: the part's frame has its own
			}
			b.WriteString("\n")
			w.lineStart = true
			continue
		}
		if w.lineStart {
			b.WriteString(w.mark())
			w.lineStart = false
		}
		w.text = true
		if w.esc != nil {
			b.WriteString(w.esc(r))
		} else {
			b.WriteRune(r)
		}
	}
	w.put(b.String())
}

func (w *PartWriter) mark() string {
	if w.by == ByHub {
		return w.quote + "bulkhead: "
	}
	return w.quote + "│ "
}

func (w *PartWriter) newline() {
	if w.last != 0 && w.last != '\n' {
		w.put("\n")
	}
}

func (w *PartWriter) begin(by By, app string) {
	w.by, w.app, w.open, w.text, w.lineStart = by, app, true, false, true
	switch by {
	case ByAssistant:
		if w.all {
			w.newline()
			if w.assistant != "" {
				w.put(w.assistant)
			} else {
				w.put("the assistant:\n")
			}
		}
	case ByHub:
		w.newline()
	default:
		w.newline()
		w.put(w.quote + "┌ " + (Part{By: by, App: app}).Words() + "\n")
	}
}

func (w *PartWriter) end() {
	if !w.open {
		return
	}
	switch w.by {
	case ByHub:
		w.newline()
	case ByApp:
		w.newline()
		w.put(w.quote + "└\n")
	}
	w.open = false
}

// Close ends the last part, and the line it ends on.
func (w *PartWriter) Close() {
	w.end()
	w.newline()
}

// AnswerParts are the turn's answer by its authors: as kept, or, for a
// turn kept before parts were, its text by the author it names.
func (t Turn) AnswerParts() Parts {
	if len(t.Parts) > 0 {
		return t.Parts
	}
	return partsOf(t.Answer, t.AnsweredBy())
}
