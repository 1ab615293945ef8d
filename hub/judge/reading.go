package judge

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
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

// vocabulary is every word the hub reads around a value: the imperative
// verbs of requests (requestVerbs), determiners, pronouns, prepositions, "please", the
// conjunctions that join requests, a few words of asking, and the nouns
// of what the apps act on. It is closed on purpose: a word it lacks
// makes the step ask, never refuse. Words that open a question (what,
// when, …) are read only there (questionOpeners).
// requestVerbs are the verbs of requests.
var requestVerbs = wordSet(
	"add", "answer", "append", "attach", "book", "bring", "buy", "calculate", "check",
	"compare", "compute", "convert", "copy", "count", "create", "describe", "draft",
	"edit", "email", "e-mail", "estimate", "evaluate", "explain", "fetch", "find",
	"forward", "get", "give", "go", "help", "list", "look", "mail", "make", "move",
	"open", "order", "pay", "plan", "post", "print", "put", "read", "remind", "rename",
	"reply", "reserve", "respond", "run", "save", "schedule", "search", "see", "send",
	"set", "share", "show", "sort", "store", "summarise", "summarize", "take", "tell",
	"translate", "update", "upload", "use", "view", "write",
)

var vocabulary = wordSet(append(slices.Collect(maps.Keys(requestVerbs)),
	"let", "keep", "want", "need", "know", "work",
	// asking
	"please", "kindly", "can", "could", "would", "will", "is", "are", "be", "do", "does",
	"'s", "it's", "there", "hello", "hi", "hey", "thanks", "thank",
	// determiners and pronouns
	"a", "an", "the", "this", "that", "these", "those", "my", "your", "our", "their",
	"his", "her", "its", "some", "any", "all", "each", "every", "both", "i", "me", "you",
	"it", "them", "him", "us", "we", "they", "myself", "one",
	// prepositions
	"to", "from", "in", "into", "on", "onto", "at", "for", "of", "with", "by", "as",
	"after", "before", "until", "via", "within", "near", "per", "through", "up",
	"according", "over",
	// conjunctions that join requests
	"and", "then", "also", "too", "now",
	// nouns of what the apps act on
	"email", "emails", "mail", "mails", "message", "messages", "inbox", "note", "notes",
	"file", "files", "folder", "folders", "directory", "workspace", "document",
	"documents", "doc", "docs", "drive", "page", "pages", "subject", "title", "body",
	"text", "content", "contents", "summary", "report", "reports", "draft", "reply",
	"list", "entry", "entries", "journal", "fare", "fares", "price", "prices", "ride",
	"rides", "trip", "trips", "booking", "flight", "hotel", "appointment",
	"appointments", "doctor", "calendar", "event", "events", "meeting", "meetings",
	"team", "reminder", "command", "commands", "shell", "output", "result", "results",
	"expression", "sum", "weather", "forecast", "time", "times", "zone", "timezone",
	"date", "dates", "day", "days", "week", "weeks", "month", "months", "year",
	"years", "hour", "hours", "minute", "minutes", "contact", "address", "link",
	"website", "site", "payment", "amount", "invoice", "bill", "number", "airport",
	"downtown", "city", "station", "home", "office", "place", "destination",
	"location", "here", "lunch", "dinner", "breakfast", "dentist", "harbour", "harbor",
	"port", "beach", "park", "centre", "center", "museum", "hospital", "school",
	"university", "restaurant", "café", "cafe", "shop", "store", "market",
	// words of what a request is about
	"what", "which", "have", "has", "quarterly", "monthly", "weekly", "daily",
	"latest", "new", "final", "recent", "same",
)...)

// questionOpeners are the words that open a question the hub reads as a
// request of the assistant ("What time is it in Tokyo?"), at the start of
// a sentence or of a clause within it.
var questionOpeners = wordSet("what", "what's", "whats", "when", "where", "which", "who", "how")

// askOpeners open a request put as a question: "can you …?", "could
// you please …?".
var askOpeners = wordSet("can", "could", "would", "will")

// contentMarkers are the words after which the rest of a sentence is the
// content of what is written, not a target ("with the subject …",
// "saying …", "titled …", "about …"); a colon is one too.
var contentMarkers = wordSet("saying", "say", "says", "containing", "contains", "titled",
	"named", "called", "about", "subject", "mentioning", "quoting", "reads")

// contentArgs are arguments whose value is the content itself: a value
// there in the content's role is its own.
var contentArgs = []string{"body", "subject", "text", "message", "content", "note", "title", "query", "memo", "description", "summary", "question", "prompt", "comment", "caption", "notes", "reason"}

// placePrepositions are the words after which a capitalised word is read
// as the name of a place or a person ("to Lisbon", "in Tokyo").
var placePrepositions = wordSet("to", "in", "from", "for", "at", "near", "via", "with", "of")

func wordSet(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// isContentArg reports whether arg takes the content's words as its
// value ("" is a role the caller does not know: the content's too).
func isContentArg(arg string) bool {
	return arg == "" || slices.Contains(contentArgs, strings.ToLower(arg))
}

// Reading says whether value, a literal of query for argument arg, has
// one reading there (the rules above): ok, or why not; and the user's
// own sentence around it, for the dialog. arg "" is a value whose role
// the caller does not know (the Ledger's): it may be content.
func Reading(query, value, arg string) (ok bool, why, sentence string) {
	return parseRequest(query).reading(value, arg)
}

// tkind is the kind of a token of the request.
type tkind uint8

const (
	tWord  tkind = iota // a word: the vocabulary may hold it
	tValue              // a value: an address, a URL, a path, a number, …
	tQuote              // a span in recognised quote marks
	tComma              // , - – — inside a sentence
	tColon              // a colon: what follows is content
	tEnd                // . ! ? ; … or a line break: a sentence ends
	tOpen               // (
	tClose              // )
	tOdd                // anything the hub does not read
)

// Kinds of value tokens; the countable ones (countable) make another of
// their kind in the request a second candidate.
const (
	vMail   = "address"
	vURL    = "URL"
	vPath   = "path"
	vNumber = "number"
	vDate   = "date"
	vTime   = "time"
	vExpr   = "expression"
	vID     = "identifier"
	vRange  = "range"
	vName   = "name"
)

var countable = []string{vMail, vURL, vPath, vNumber, vDate, vTime}

type token struct {
	k     tkind
	vk    string // a value's kind
	s, e  int    // its bytes in the text
	sub   []token
	raw   string // as written
	w     string // a word: lower case, ’ as '
	isVal bool   // the value being read (reading's own)
}

// parsed is a request cut into tokens.
type parsed struct {
	text string
	toks []token
	mu   sync.Mutex
	nfc  *parsed // the same in NFC, for a text value written otherwise
	flat *parsed // the same with runs of spaces collapsed
}

// variant is the request written otherwise (NFC, spaces collapsed),
// cut into tokens once.
func (p *parsed) variant(slot **parsed, text func(string) string) *parsed {
	p.mu.Lock()
	defer p.mu.Unlock()
	if *slot == nil {
		*slot = parseRequest(text(p.text))
	}
	return *slot
}

func parseRequest(query string) *parsed {
	text := strings.ReplaceAll(query, "\r\n", "\n")
	return &parsed{text: text, toks: tokenize(text, 0, len(text))}
}

var (
	reISODay   = lazyRegexp(`^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2})?)?$|^\d{1,2}/\d{1,2}(?:/\d{2,4})?$`)
	reClock    = lazyRegexp(`(?i)^\d{1,2}:\d{2}(?::\d{2})?(?:am|pm)?$|^\d{1,2}(?:am|pm)$`)
	reRange    = lazyRegexp(`^\d+[-–]\d+$`)
	reOrdinal  = lazyRegexp(`(?i)^\d{1,2}(?:st|nd|rd|th)$`)
	reWord     = lazyRegexp(`^\p{L}[\p{L}\p{M}]*(?:['’\-]\p{L}[\p{L}\p{M}]*)*['’]?$`)
	reIdent    = lazyRegexp(`^[A-Za-z0-9][A-Za-z0-9_.\-]*$`)
	reUnit     = lazyRegexp(`^\d[\d.,]*\p{L}+$`)
	reFlag     = lazyRegexp(`^--?[A-Za-z0-9][A-Za-z0-9\-]*$`)
	reExprHead = lazyRegexp(`^(?:\(\s*)*[$€£¥]?\d[\d.,]*(?:\s*\))*(?:\s*[+\-*/×÷^%]\s*(?:\(\s*)*[$€£¥]?\d[\d.,]*(?:\s*\))*)+`)
	months     = wordSet("january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december",
		"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
	dayWords     = wordSet("today", "tonight", "tomorrow", "yesterday")
	weekdayWords = wordSet("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
	dayQualifier = wordSet("next", "this", "coming", "last")
	periodWords  = wordSet("week", "month", "year", "weekend")
)

// tokenize cuts text[from:to] into tokens (positions in text).
func tokenize(text string, from, to int) []token {
	var out []token
	// noCloser[c] is where a search for the closing mark c found none
	// before: an opener of it before there closes nothing either (each
	// byte is read a bounded number of times, however the marks fall).
	noCloser := map[rune]int{}
	i := from
	for i < to {
		r, size := utf8.DecodeRuneInString(text[i:to])
		switch {
		case r == '\n':
			out = append(out, token{k: tEnd, s: i, e: i + size, raw: "\n"})
			i += size
			continue
		case unicode.IsSpace(r):
			i += size
			continue
		case r == '(' || r == ')':
			if t, n, ok := exprAt(text, i, to); ok && r == '(' {
				out = append(out, t)
				i = n
				continue
			}
			k := tOpen
			if r == ')' {
				k = tClose
			}
			out = append(out, token{k: k, s: i, e: i + size, raw: string(r)})
			i += size
			continue
		case r == '—' || r == '–':
			out = append(out, token{k: tComma, s: i, e: i + size, raw: string(r)})
			i += size
			continue
		}
		if closer, ok := quoteCloser(text, from, i, to, r, noCloser); ok {
			out = append(out, closer)
			i = closer.e
			continue
		}
		if mark(text, i, r) {
			out = append(out, token{k: tOdd, s: i, e: i + size, raw: string(r)})
			i += size
			continue
		}
		if unicode.IsDigit(r) || r == '$' || r == '€' || r == '£' || r == '¥' {
			if t, n, ok := exprAt(text, i, to); ok {
				out = append(out, t)
				i = n
				continue
			}
		}
		// a run: up to a space, a quote mark or a bracket
		j := i
		for j < to {
			r2, s2 := utf8.DecodeRuneInString(text[j:to])
			if unicode.IsSpace(r2) || r2 == '"' || r2 == '“' || r2 == '”' || r2 == '‘' || r2 == '(' || r2 == ')' || r2 == '—' || r2 == '–' || (r2 != '\'' && mark(text, j, r2)) {
				break
			}
			j += s2
		}
		if j == i { // a mark that opens nothing it closes
			out = append(out, token{k: tOdd, s: i, e: i + size, raw: string(r)})
			i += size
			continue
		}
		out = append(out, runTokens(text, i, j)...)
		i = j
	}
	return mergeTokens(text, out)
}

// mark reports whether r at i is a quote mark or bracket the hub does
// not read as a word's (’ between two letters is an apostrophe).
func mark(text string, i int, r rune) bool {
	if r == '’' || r == '\'' {
		before, _ := utf8.DecodeLastRuneInString(text[:i])
		after, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):])
		if unicode.IsLetter(before) && (unicode.IsLetter(after) || !unicode.IsLetter(after) && !unicode.IsDigit(after)) {
			return false // don’t, users’
		}
		return r == '’'
	}
	if r == '`' || r == '<' || r == '>' || r == '[' || r == ']' || r == '{' || r == '}' {
		return true
	}
	return unicode.In(r, unicode.Ps, unicode.Pe, unicode.Pi, unicode.Pf)
}

// quoteCloser reads a span in recognised quote marks opening at i: "…",
// “…”, ‘…’, and '…' at a word's start. A mark that opens none it can
// close is odd (ok false: the caller reads it as a mark).
func quoteCloser(text string, from, i, to int, r rune, noCloser map[rune]int) (token, bool) {
	var closer rune
	switch r {
	case '"':
		closer = '"'
	case '“':
		closer = '”'
	case '‘':
		closer = '’'
	case '\'':
		if before, _ := utf8.DecodeLastRuneInString(text[from:i]); i > from && (unicode.IsLetter(before) || unicode.IsDigit(before)) {
			return token{}, false
		}
		closer = '\''
	default:
		return token{}, false
	}
	if h, ok := noCloser[closer]; ok && i < h {
		return token{}, false
	}
	in := i + utf8.RuneLen(r)
	j := in
	for j < to {
		c, size := utf8.DecodeRuneInString(text[j:to])
		if c == '\n' {
			break // a quotation does not cross a line
		}
		if c == closer {
			after, _ := utf8.DecodeRuneInString(text[j+size : to])
			before, _ := utf8.DecodeLastRuneInString(text[:j])
			if closer == '"' || closer == '”' || !(unicode.IsLetter(after) || unicode.IsDigit(after)) && !unicode.IsSpace(before) && j > in {
				return token{k: tQuote, s: i, e: j + size, sub: tokenize(text, in, j), raw: text[i : j+size]}, true
			}
		}
		j += size
	}
	noCloser[closer] = j
	return token{}, false
}

// exprAt reads an arithmetic expression at i ("0.175 * 2340", "17*23",
// "(1+2)*3"): numbers joined by operators, its parentheses balanced.
func exprAt(text string, i, to int) (token, int, bool) {
	m := reExprHead().FindString(text[i:to])
	if m == "" {
		return token{}, 0, false
	}
	m = strings.TrimRight(m, ".,")
	// a date, a time, a range or a number with a unit is no expression
	if reISODay().MatchString(m) || reRange().MatchString(m) || reClock().MatchString(m) {
		return token{}, 0, false
	}
	if strings.Count(m, "(") != strings.Count(m, ")") {
		m = strings.TrimRight(m, ")")
		if strings.Count(m, "(") != strings.Count(m, ")") {
			return token{}, 0, false
		}
	}
	end := i + len(m)
	if end < to {
		if r, _ := utf8.DecodeRuneInString(text[end:to]); unicode.IsLetter(r) || unicode.IsDigit(r) || r == '/' || r == '@' {
			return token{}, 0, false // part of a longer word or value
		}
	}
	return token{k: tValue, vk: vExpr, s: i, e: end, raw: m}, end, true
}

// runTokens classifies a run of text without spaces: a value, a word, or
// something the hub does not read, with the punctuation after it.
func runTokens(text string, i, j int) []token {
	run := text[i:j]
	core := strings.TrimRight(run, ".,;:!?…")
	var tail []token
	for k := len(core); k < len(run); {
		r, size := utf8.DecodeRuneInString(run[k:])
		t := token{s: i + k, e: i + k + size, raw: string(r)}
		switch r {
		case ',':
			t.k = tComma
		case ':':
			t.k = tColon
		default:
			t.k = tEnd
		}
		tail = append(tail, t)
		k += size
	}
	if core == "" {
		return tail
	}
	t, ok := classify(core)
	if !ok {
		for _, s := range []string{"'s", "’s"} {
			if base, cut := strings.CutSuffix(core, s); cut && base != "" {
				if bt, ok := classify(base); ok && bt.k == tValue {
					bt.s, bt.e, bt.raw = i, i+len(base), base
					poss := token{k: tWord, s: i + len(base), e: i + len(core), raw: s, w: "'s"}
					return append([]token{bt, poss}, tail...)
				}
			}
		}
	}
	t.s, t.e, t.raw = i, i+len(core), core
	return append([]token{t}, tail...)
}

// classify says what one run without spaces is.
func classify(c string) (token, bool) {
	val := func(k string) (token, bool) { return token{k: tValue, vk: k}, true }
	at, scheme, digit := strings.IndexByte(c, '@') >= 0, strings.Contains(c, "://"), strings.ContainsAny(c, "0123456789")
	switch {
	case at && reEmail().MatchString(c):
		return val(vMail)
	case scheme && reURL().MatchString(c):
		return val(vURL)
	case digit && reISODay().MatchString(c):
		return val(vDate)
	case digit && reClock().MatchString(c):
		return val(vTime)
	case digit && reRange().MatchString(c):
		return val(vRange)
	case digit && reOrdinal().MatchString(c):
		return val(vID)
	case digit && reWholeNumber().MatchString(c):
		return val(vNumber)
	case c[0] == '-' && reFlag().MatchString(c):
		return token{k: tWord, w: strings.ToLower(c)}, true // a command's flag: no word the hub reads
	case strings.ContainsAny(c, `/\`) && (rePath().MatchString(c) || !strings.ContainsAny(c, "*+=")), reFileName().MatchString(c) && !reWord().MatchString(c):
		return val(vPath)
	case reWord().MatchString(c):
		return token{k: tWord, w: strings.ReplaceAll(strings.ToLower(c), "’", "'")}, true
	case c == "-":
		return token{k: tComma}, true
	case c == "&":
		return token{k: tWord, w: "and"}, true
	case digit && reUnit().MatchString(c):
		return token{k: tOdd}, false // a number with its unit after it: "50k", "5min"
	case reIdent().MatchString(c) && strings.ContainsAny(c, "0123456789_"):
		return val(vID)
	}
	return token{k: tOdd}, false
}

// mergeTokens joins the words that make one value: a month and its day
// ("May 3-6", "14 March 2025"), a relative day ("tomorrow", "next
// Friday"), a time in words ("10 am", "noon"), a place or a person's
// name after a preposition ("to Lisbon", "in New York").
func mergeTokens(text string, ts []token) []token {
	var out []token
	isWord := func(t token, set map[string]bool) bool { return t.k == tWord && set[t.w] }
	dayNum := func(t token) bool {
		if t.k != tValue {
			return false
		}
		if t.vk == vRange || t.vk == vID && reOrdinal().MatchString(t.raw) {
			return true
		}
		n, err := strconv.Atoi(t.raw)
		return t.vk == vNumber && err == nil && n >= 1 && n <= 31
	}
	year := func(t token) bool { return t.k == tValue && t.vk == vNumber && len(t.raw) == 4 && allDigits(t.raw) }
	join := func(a, b token, vk string) token {
		return token{k: tValue, vk: vk, s: a.s, e: b.e, raw: text[a.s:b.e]}
	}
	for i := 0; i < len(ts); i++ {
		t := ts[i]
		switch {
		case isWord(t, months) && i+1 < len(ts) && dayNum(ts[i+1]):
			d := join(t, ts[i+1], vDate)
			i++
			if i+2 < len(ts) && ts[i+1].k == tComma && ts[i+1].raw == "," && year(ts[i+2]) {
				d = join(d, ts[i+2], vDate)
				i += 2
			} else if i+1 < len(ts) && year(ts[i+1]) {
				d = join(d, ts[i+1], vDate)
				i++
			}
			out = append(out, d)
			continue
		case dayNum(t) && i+1 < len(ts) && (isWord(ts[i+1], months) || ts[i+1].k == tWord && ts[i+1].w == "of" && i+2 < len(ts) && isWord(ts[i+2], months)):
			end := i + 1
			if ts[end].w == "of" {
				end++
			}
			d := join(t, ts[end], vDate)
			i = end
			if i+1 < len(ts) && year(ts[i+1]) {
				d = join(d, ts[i+1], vDate)
				i++
			}
			out = append(out, d)
			continue
		case isWord(t, dayWords):
			out = append(out, join(t, t, vDate))
			continue
		case isWord(t, weekdayWords) || isWord(t, dayQualifier) && i+1 < len(ts) && (isWord(ts[i+1], weekdayWords) || isWord(ts[i+1], periodWords)):
			if isWord(t, dayQualifier) {
				out = append(out, join(t, ts[i+1], vDate))
				i++
				continue
			}
			out = append(out, join(t, t, vDate))
			continue
		case t.k == tWord && (t.w == "noon" || t.w == "midnight"):
			out = append(out, join(t, t, vTime))
			continue
		case t.k == tValue && t.vk == vNumber && i+1 < len(ts) && ts[i+1].k == tWord && (ts[i+1].w == "am" || ts[i+1].w == "pm"):
			out = append(out, join(t, ts[i+1], vTime))
			i++
			continue
		case t.k == tWord && titleCase(t.raw) && len(out) > 0 && (isWord(out[len(out)-1], placePrepositions) || out[len(out)-1].k == tValue && out[len(out)-1].vk == vName):
			if p := out[len(out)-1]; p.k == tValue && p.vk == vName {
				out[len(out)-1] = join(p, t, vName)
				continue
			}
			out = append(out, join(t, t, vName))
			continue
		}
		out = append(out, t)
	}
	return out
}

// titleCase reports whether a word is written as a name: a capital
// letter of the Latin script, then small letters.
func titleCase(w string) bool {
	r, size := utf8.DecodeRuneInString(w)
	if r >= utf8.RuneSelf || !unicode.IsUpper(r) || len(w) < 2 {
		return false
	}
	for _, c := range w[size:] {
		if c >= utf8.RuneSelf || !unicode.IsLower(c) {
			return false
		}
	}
	return true
}

// maxOccurrences bounds the places a value may stand in a request and
// still bind: each is read on its own.
const maxOccurrences = 8

// occurrence is where a value stands whole: a run of tokens of one list
// (the request's, or a quotation's), or a quotation it fills.
type occurrence struct {
	path []int // indices of the quotations it is inside, from the top
	i, j int   // its tokens [i, j) in the innermost list
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

// span is the bytes an occurrence covers.
func (p *parsed) span(o occurrence) [2]int {
	toks := p.toks
	for _, k := range o.path {
		toks = toks[k].sub
	}
	return [2]int{toks[o.i].s, toks[o.j-1].e}
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

// find lists where value stands whole in the request: by its kind's
// rule, at the edges of tokens of one list (the request's or a
// quotation's).
func (p *parsed) find(value string) []occurrence {
	var out []occurrence
	key, isAtom := atomKey(value)
	num, isNum := number(value)
	var walk func(ts []token, path []int)
	walk = func(ts []token, path []int) {
		for k, t := range ts {
			if t.k == tQuote {
				walk(t.sub, append(slices.Clone(path), k))
			}
		}
		switch {
		case isAtom:
			for k, t := range ts {
				if t.k == tValue { // "30/7" is a path by atomKey, a date here
					if tk, ok := atomKey(t.raw); ok && tk == key {
						out = append(out, occurrence{path, k, k + 1})
					}
				}
			}
		case isNum:
			for k, t := range ts {
				if t.k == tValue && t.vk == vNumber {
					if m := reWholeNumber().FindStringSubmatch(t.raw); m != nil {
						if f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil && f == num {
							out = append(out, occurrence{path, k, k + 1})
						}
					}
				}
			}
		default:
			for _, sp := range spansOf(p.text, value, ts) {
				out = append(out, occurrence{path, sp[0], sp[1]})
			}
		}
	}
	walk(p.toks, nil)
	return out
}

// spansOf lists the runs of tokens of ts that value covers exactly, as
// written between value boundaries (or, with its quote marks, a whole
// quotation).
func spansOf(text, value string, ts []token) [][2]int {
	if len(ts) == 0 {
		return nil
	}
	starts, ends := make(map[int]int, len(ts)), make(map[int]int, len(ts))
	for k, t := range ts {
		starts[t.s], ends[t.e] = k, k
	}
	var out [][2]int
	lo, hi := ts[0].s, ts[len(ts)-1].e
	for off := lo; off <= hi-len(value) && len(out) <= maxOccurrences; {
		i := strings.Index(text[off:hi], value)
		if i < 0 {
			break
		}
		s, e := off+i, off+i+len(value)
		if boundaryBefore(text, s, value) && boundaryAfter(text, e, value) {
			a, okA := starts[s]
			b, okB := ends[e]
			if okA && okB && b >= a {
				out = append(out, [2]int{a, b + 1})
			}
		}
		_, size := utf8.DecodeRuneInString(text[s:])
		off = s + size
	}
	return out
}
