package guard

import (
	"strings"
	"unicode/utf8"
)

// A sentence ends at '.', '!' or '?' (a closing quote or bracket may
// follow) before a blank or the end of the text, at an ideographic stop,
// or at a line break; so "evil.example" does not end one. A span is
// widened to its sentence, but never more than maxWiden bytes either
// side of what was found: a text with no sentence ends (one long line, a
// JSON value) loses no more than that around it.

const (
	maxWiden = 320
	maxWord  = 32 // how far a cut widening looks for a blank, to cut between words
)

func isStop(c byte) bool   { return c == '.' || c == '!' || c == '?' }
func isCloser(c byte) bool { return c == '"' || c == '\'' || c == ')' || c == ']' }

// cjkStops end a sentence with no blank after them.
var cjkStops = []string{"。", "！", "？"}

// startsSentence says whether a sentence may begin at text[j]: also
// after a colon and a blank before a capital, or inside an opening quote
// after a colon or a blank ("subject "Hi": Hello assistant…", {"body":"Hello assistant…"}),
// so that the words that introduce a quoted text — a sender, a subject, a
// key — are not masked with it.
func startsSentence(text string, j int) bool {
	if j == 0 || text[j-1] == '\n' {
		return true
	}
	if j >= 2 && text[j-1] == '"' && (text[j-2] == ':' || isBlank(text[j-2])) {
		return true
	}
	if j >= 2 && isBlank(text[j-1]) && text[j-2] == ':' && j < len(text) && (text[j] >= 'A' && text[j] <= 'Z' || text[j] == '"') {
		return true
	}
	if text[j-1] >= utf8.RuneSelf {
		for _, s := range cjkStops {
			if strings.HasSuffix(text[:j], s) {
				return true
			}
		}
		return false
	}
	if !isBlank(text[j-1]) || j < 2 {
		return false
	}
	k := j - 2
	if isCloser(text[k]) && k > 0 {
		k--
	}
	return isStop(text[k])
}

// endsAt says whether a sentence ends at text[p], and just past where:
// also at a closing quote that a comma or a brace follows (the end of a
// JSON string), before the quote.
func endsAt(text string, p int) (int, bool) {
	c := text[p]
	switch {
	case c == '\n':
		return p, true
	case c == '"' && p > 0 && text[p-1] != '\\' && p+1 < len(text) && (text[p+1] == ',' || text[p+1] == '}' || text[p+1] == ']'):
		return p, true
	case isStop(c):
		k := p + 1
		if k < len(text) && isCloser(text[k]) {
			k++
		}
		return k, k == len(text) || isBlank(text[k])
	case c >= utf8.RuneSelf:
		for _, s := range cjkStops {
			if strings.HasPrefix(text[p:], s) {
				return p + len(s), true
			}
		}
	}
	return 0, false
}

// sentences finds where sentences begin and end in text for positions
// asked in increasing order (starts in one order, ends in another), so
// that widening many spans reads each byte once, not once per span.
type sentences struct {
	text string
	at   int // starts: read up to here
	last int // the last place at or before at where a sentence may begin
	scan int // ends: the next place to read
	endP int // where the end read last is (-1: none)
	endE int // and just past it
}

func newSentences(text string) *sentences { return &sentences{text: text, endP: -1} }

// start is where the sentence holding text[i] begins, not before lo nor
// more than maxWiden before i.
func (s *sentences) start(i, lo int) int {
	t := s.text
	for s.at < i {
		s.at++
		if startsSentence(t, s.at) {
			s.last = s.at
		}
	}
	j := max(s.last, lo)
	if j < i-maxWiden { // cut off: begin at a word
		j = i - maxWiden
		for k := j; k < min(i, j+maxWord); k++ {
			if isBlank(t[k]) {
				j = k
				break
			}
		}
		for j < i && !utf8.RuneStart(t[j]) {
			j++
		}
	}
	for j < i && isBlank(t[j]) {
		j++
	}
	return j
}

// end is just past the end of the sentence holding text[i-1], not past hi
// nor more than maxWiden past i.
func (s *sentences) end(i, hi int) int {
	t := s.text
	if i > 0 && isStop(t[i-1]) && (i == len(t) || isBlank(t[i])) {
		return i // the span ends its sentence
	}
	limit := min(len(t), i+maxWiden)
	if s.endP < i {
		s.endP = -1
		p := max(i, s.scan)
		for ; p < limit; p++ {
			if e, ok := endsAt(t, p); ok {
				s.endP, s.endE = p, e
				p++
				break
			}
		}
		s.scan = p
	}
	var j int
	switch {
	case s.endP >= 0:
		j = min(s.endE, hi)
	case hi <= limit:
		j = hi
	default: // cut off: end at a word
		j = limit
		for k := j; k > max(i, j-maxWord); k-- {
			if isBlank(t[k-1]) {
				j = k
				break
			}
		}
		for j > i && !utf8.RuneStart(t[j]) {
			j--
		}
	}
	for j > i && isBlank(t[j-1]) {
		j--
	}
	return j
}
