package judge

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// One reading, or ask (DESIGN.md invariant 13; issue 39). A literal of
// the request binds as the user's value for an argument only where the
// request leaves it one reading, and the hub decides that by what it
// positively recognises, never by a list of forms to refuse:
//
//  1. the value stands in the request as a whole value by its kind's
//     rule (an address, a URL or a path by atomKey, a number as a number,
//     any other text between value boundaries): once, or, where it
//     stands more than once (at most maxOccurrences), every place reads
//     as asked for by the rules below ("Never write to eve@… . Write to
//     eve@…" does not);
//  2. for a value of a countable kind (an address, a URL, a path, a
//     number or an amount, a date, a time), the request holds no other
//     candidate of that kind — no other such value of its own, nor a
//     quotation that is one (a value inside a quotation that holds more
//     than it never binds, so it is none): the user's words give one;
//  3. the sentence that holds it is one the hub reads: the request is
//     cut into tokens — each address, URL, path, number, amount, date,
//     time, arithmetic expression, identifier and place name, and each
//     span in recognised quote marks (" and ', “ ” and ‘ ’), is one —
//     and into sentences at . ! ? ; and line breaks outside them; the
//     value is not in a parenthesis, nor inside a quotation that holds
//     more than it (a value that is the whole quoted span, titled
//     "Call", is the user's), nor in a question other than the forms
//     that ask something of the assistant (a question opened by what,
//     when, which, where, who or how; "can you …?"); every word of the
//     sentence around it is a word of the vocabulary below or another
//     value, up to a content marker (saying, titled, about, a colon …)
//     after which the rest is the content — and a value there is the
//     content's, which only a content argument (a body, a title, a
//     query) takes; after a line that ends in a colon, the rest of the
//     request is a pasted block, content too.
//
// Anything else — a negation, a condition, "instead", "formerly", a
// number written as a word or with its unit after it ("fifty", "50
// dollars"), a word of another language or script, a quote mark or a
// bracket the hub does not know — is a sentence the hub cannot read, and
// the step asks, showing the user's own sentence around the value. The
// vocabulary decides only what binds as routine: what it lacks asks, it
// never refuses.

// Reading says whether value, a literal of query for argument arg, has
// one reading there (the rules above): ok, or why not; and the user's
// own sentence around it, for the dialog. arg "" is a value whose role
// the caller does not know (the Ledger's): it may be content.
func Reading(query, value, arg string) (ok bool, why, sentence string) {
	return parseRequest(query).reading(value, arg)
}

// reading applies the rules to value for arg.
func (p *parsed) reading(value, arg string) (bool, string, string) {
	if NormValue(value) == "" {
		return false, "it is empty", ""
	}
	occ := p.find(value)
	if len(occ) == 0 && (NormSpace(value) != value || strings.ContainsAny(p.text, "\t\n\r\v\f") || strings.Contains(p.text, "  ")) {
		// The Ledger matches values runs of spaces aside: so does this.
		flat := p.variant(&p.flat, NormSpace)
		if nv := NormSpace(value); len(flat.find(nv)) > 0 {
			return flat.reading(nv, arg)
		}
	}
	if len(occ) == 0 && !isASCII(value) {
		if _, ok := textForm(value); ok && composable(p.text) {
			nfc := p.variant(&p.nfc, norm.NFC.String)
			nv := norm.NFC.String(value)
			if occ = nfc.find(nv); len(occ) > 0 {
				return nfc.readAt(occ, nv, arg)
			}
		}
	}
	return p.readAt(occ, value, arg)
}

// readAt reads the value's occurrences.
func (p *parsed) readAt(occ []occurrence, value, arg string) (bool, string, string) {
	if len(occ) == 0 {
		return false, fmt.Sprintf("%q stands in it only as a part of another value", clip(value, 60)), clip(NormSpace(p.text), 160)
	}
	// Said more than once, it has one reading only where every place it
	// stands reads as asked for ("Never write to eve@… . Write to eve@…"
	// does not).
	if len(occ) > maxOccurrences {
		return false, fmt.Sprintf("it stands in your request more than %d times", maxOccurrences), clip(NormSpace(p.text), 160)
	}
	var spans [][2]int
	for _, o := range occ {
		spans = append(spans, p.span(o))
	}
	first := ""
	for _, o := range occ {
		ok, why, sentence := p.readOne(o, spans, arg)
		if !ok {
			if len(occ) > 1 {
				why = "it stands in your request more than once; " + why
			}
			return false, why, sentence
		}
		if first == "" {
			first = sentence
		}
	}
	return true, "", first
}

// readOne reads one place the value stands; spans are all of them.
func (p *parsed) readOne(o occurrence, spans [][2]int, arg string) (bool, string, string) {
	// Up to the top-level list: a quotation that holds more than the
	// value is not the user asking for it.
	toks := p.toks
	var lists [][]token
	for _, k := range o.path {
		lists = append(lists, toks)
		toks = toks[k].sub
	}
	i, j := o.i, o.j
	if len(o.path) > 0 {
		if i != 0 || j != len(toks) || len(o.path) > 1 {
			return false, "it stands inside a quotation that holds more than it", p.sentenceOf(p.toks, o.path[0], o.path[0]+1)
		}
		// The value is the whole quoted span: the quotation is its token.
		toks, i, j = lists[0], o.path[0], o.path[0]+1
	}
	kind := ""
	if j-i == 1 {
		kind = valueKind(toks[i])
		if toks[i].k == tOdd {
			// a number with its unit after it ("50k"), a mark: not one
			// value the hub reads
			return false, fmt.Sprintf("the hub does not read %q as one value", clip(toks[i].raw, 60)), p.sentenceOf(toks, i, j)
		}
	}
	sentence := p.sentenceOf(toks, i, j)
	// Another value of the same countable kind: a second candidate for
	// the argument (a value whose role the caller does not know has no
	// candidates to choose among: only its sentence decides).
	if arg != "" && slices.Contains(countable, kind) {
		if other := p.another(kind, spans); other != "" {
			return false, fmt.Sprintf("it holds another %s, %q", kind, clip(other, 60)), sentence
		}
	}
	// The sentence, with the value as one token.
	sent := append(append(slices.Clone(toks[:i]), token{k: tValue, vk: kind, s: toks[i].s, e: toks[j-1].e, isVal: true}), toks[j:]...)
	v := i
	a, b := v, v
	for a > 0 && sent[a-1].k != tEnd {
		a--
	}
	for b < len(sent) && sent[b].k != tEnd {
		b++
	}
	// after a line that ends in a colon, the rest is a pasted block
	for k := 0; k+1 < a; k++ {
		if sent[k].k == tColon && sent[k+1].k == tEnd && sent[k+1].raw == "\n" {
			if !isContentArg(arg) {
				return false, fmt.Sprintf("it stands in the text you pasted after %q, not as the %s", clip(NormSpace(p.text[lineStart(p.text, sent[k].s):sent[k].e]), 40), arg), sentence
			}
			return true, "", sentence
		}
	}
	if b < len(sent) && sent[b].raw == "?" {
		if !p.asks(sent[a:b]) {
			return false, "it stands in a question the hub does not read as a request", sentence
		}
	}
	question := b < len(sent) && sent[b].raw == "?"
	// Where the value stands: in a parenthesis, in the content.
	depth, content, marker := 0, "", -1
	for k := a; k < v; k++ {
		switch t := sent[k]; {
		case t.k == tOpen:
			depth++
		case t.k == tClose:
			depth--
		case marker < 0 && t.k == tColon:
			content, marker = ":", k
		case marker < 0 && isMarker(sent, a, k):
			content, marker = t.raw, k
		}
	}
	if depth > 0 {
		return false, "it stands in a parenthesis", sentence
	}
	// A value that is the whole of what a colon introduces, to the
	// sentence's end ("run: make test"), is what the words before the
	// colon ask for, not words of a content.
	if content == ":" && marker == v-1 && v+1 == b && slices.ContainsFunc(sent[a:marker], func(t token) bool { return t.k == tWord && requestVerbs[t.w] }) {
		content = ""
	}
	if content != "" && !isContentArg(arg) {
		return false, fmt.Sprintf("it stands in the words of the content (after %q), not as the %s", content, arg), sentence
	}
	// Every word around it, up to the content, is one the hub reads.
	end := b
	if marker >= 0 {
		end = marker
	} else {
		for k := v + 1; k < b; k++ {
			if t := sent[k]; t.k == tColon || isMarker(sent, a, k) {
				end = k
				break
			}
		}
	}
	var unread []string
	note := func(w string) {
		if !slices.Contains(unread, w) {
			unread = append(unread, w)
		}
	}
	depth = 0
	for k := a; k < end; k++ {
		t := sent[k]
		if k == v {
			continue
		}
		switch t.k {
		case tOpen:
			depth++
		case tClose:
			if depth--; depth < 0 {
				note(t.raw)
			}
		case tOdd:
			note(t.raw)
		case tWord:
			if vocabulary[strings.TrimSuffix(t.w, "'s")] || vocabulary[t.w] {
				continue
			}
			if questionOpeners[t.w] && opensClause(sent, a, k) && (question || k == a && k+1 < b && sent[k+1].k == tWord && (sent[k+1].w == "is" || sent[k+1].w == "are")) {
				continue
			}
			note(t.raw)
		}
	}
	if len(unread) > 0 {
		if len(unread) > 3 {
			unread = append(unread[:3], "…")
		}
		return false, "the hub does not read " + quoteAll(unread), sentence
	}
	if depth != 0 && end == b {
		return false, "its sentence opens a parenthesis it does not close", sentence
	}
	return true, "", sentence
}

// quoteAll is words as a list of quotations: "but", "skip".
func quoteAll(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = strconv.Quote(w)
		if w == "…" {
			q[i] = w
		}
	}
	return strings.Join(q, ", ")
}

// isMarker reports whether the word at k makes what follows the
// content: a content marker, or "that" right after a value ("Email
// bob@example.com that I am late").
func isMarker(sent []token, a, k int) bool {
	t := sent[k]
	if t.k != tWord {
		return false
	}
	return contentMarkers[t.w] || t.w == "that" && k > a && (sent[k-1].k == tValue || sent[k-1].k == tQuote)
}

// asks reports whether a sentence that ends in a question mark asks
// something of the assistant: it opens (past the value) with what, when,
// which, where, who or how, or with "can you", "could you", ….
func (p *parsed) asks(sent []token) bool {
	for k, t := range sent {
		if t.isVal || t.k == tComma {
			continue
		}
		if t.k != tWord {
			return false
		}
		if questionOpeners[t.w] {
			return true
		}
		if askOpeners[t.w] {
			for _, n := range sent[k+1:] {
				if n.k == tWord && n.w == "please" {
					continue
				}
				return n.k == tWord && n.w == "you"
			}
		}
		return false
	}
	return false
}

// opensClause reports whether the word at k opens the sentence that
// starts at a, or a clause of it (after a comma, "and" or "then").
func opensClause(sent []token, a, k int) bool {
	for p := k - 1; p >= a; p-- {
		t := sent[p]
		switch {
		case t.isVal:
			continue
		case t.k == tComma:
			return true
		case t.k == tWord && (t.w == "and" || t.w == "then"):
			continue
		default:
			return false
		}
	}
	return true
}

// lineStart is where the line that holds byte i begins.
func lineStart(text string, i int) int {
	return strings.LastIndexByte(text[:i], '\n') + 1
}

// valueKind is the kind of value a token is ("" for words): a
// quotation's, the kind of the one value it holds.
func valueKind(t token) string {
	switch t.k {
	case tValue:
		return t.vk
	case tQuote:
		if len(t.sub) == 1 {
			return valueKind(t.sub[0])
		}
	}
	return ""
}

// another is another candidate of kind in the request than the value at
// spans (its text), or "": a value of the request, or a quotation that
// is one value ("eve@example.com" in quote marks). A value inside a
// quotation that holds more than it is no candidate: it never binds.
func (p *parsed) another(kind string, spans [][2]int) string {
	for _, t := range p.toks {
		if t.k == tQuote && len(t.sub) == 1 {
			t = t.sub[0]
		}
		if t.k != tValue || t.vk != kind {
			continue
		}
		if !slices.ContainsFunc(spans, func(sp [2]int) bool { return sp[0] <= t.s && t.e <= sp[1] }) {
			return t.raw
		}
	}
	return ""
}

// sentenceOf is the user's sentence around toks[i:j], as the dialog
// shows it: from the end of the sentence before to the end of its own.
func (p *parsed) sentenceOf(toks []token, i, j int) string {
	a, b := i, j
	for a > 0 && toks[a-1].k != tEnd {
		a--
	}
	for b < len(toks) && toks[b].k != tEnd {
		b++
	}
	start, end := toks[i].s, toks[j-1].e
	if a < i {
		start = toks[a].s
	}
	if b < len(toks) {
		end = toks[b].e
	} else if b > j {
		end = toks[b-1].e
	}
	s := NormSpace(p.text[start:end])
	if utf8.RuneCountInString(s) <= 160 {
		return s
	}
	// a long sentence: the words around the value
	return "… " + around(s, NormSpace(p.text[toks[i].s:toks[j-1].e])) + " …"
}
