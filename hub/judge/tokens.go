package judge

import (
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

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
