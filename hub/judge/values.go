package judge

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// NormSpace collapses runs of spaces.
func NormSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// NormValue is a value with spaces collapsed, surrounding space and
// quotes trimmed, a mailto: or ./ prefix dropped: what decides whether a
// value is empty, and what a claim or an exclusion reads. Never what
// decides equality (equal.go): "./docs/plan.md" is not docs/plan.md.
func NormValue(s string) string {
	s = strings.Trim(NormSpace(s), " \"'`")
	s = strings.TrimPrefix(s, "mailto:")
	s = strings.TrimPrefix(s, "./")
	return s
}

// ContainsValue reports whether text holds v as a whole value: at an
// occurrence, neither neighbour continues a word, an address, a URL or a
// path ("b@example.com" is not in "bob@example.com"); a sentence's
// closing punctuation after it does not count as continuing it.
func ContainsValue(text, v string) bool {
	if v == "" {
		return false
	}
	for off := 0; off <= len(text)-len(v); {
		i := strings.Index(text[off:], v)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(v)
		if boundaryBefore(text, start, v) && boundaryAfter(text, end, v) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[start:])
		off = start + size
	}
	return false
}

// textIn reports whether text holds v whole, as written or — for a value
// that compares as text (textForm) — in the same PRECIS (NFC) form: the
// containment that agrees with SameValue. A text with a character NFC
// replaces on its own (U+212A for K) is searched as written only.
func textIn(text, v string) bool {
	if ContainsValue(text, v) {
		return true
	}
	if isASCII(v) || norm.NFC.IsNormalString(text) && norm.NFC.IsNormalString(v) {
		return false
	}
	f, ok := textForm(v)
	if !ok || !composable(text) {
		return false
	}
	return ContainsValue(norm.NFC.String(text), f)
}

// valueRune reports whether r can be part of a value: a letter, a digit,
// or a character of addresses, URLs and paths.
func valueRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || strings.ContainsRune("@_-+/%~#=&", r)
}

func boundaryBefore(text string, start int, v string) bool {
	if start == 0 {
		return true
	}
	first, _ := utf8.DecodeRuneInString(v)
	if !valueRune(first) && first != '.' {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:start])
	if r == '.' || r == ':' || r == ',' {
		// "x.bob@example.com", "12,50": the value goes on.
		return start < 2 || !valueRune(lastRune(text[:start-1]))
	}
	return !valueRune(r)
}

func boundaryAfter(text string, end int, v string) bool {
	if end == len(text) {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(v)
	if !valueRune(last) {
		return true
	}
	r, size := utf8.DecodeRuneInString(text[end:])
	if r == '.' || r == ':' || r == ',' || r == ';' || r == '!' || r == '?' {
		// Closing punctuation ends the value; a dot, colon or comma that
		// goes on into more of it ("bob@example.com.evil", "12,50") does
		// not.
		rest := text[end+size:]
		return rest == "" || !valueRune(firstRune(rest))
	}
	return !valueRune(r)
}

func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }
func lastRune(s string) rune  { r, _ := utf8.DecodeLastRuneInString(s); return r }

// reToken splits a text into tokens for numbers: runs without spaces or
// brackets and quotes.
var reToken = lazyRegexp(`[^\s()\[\]{}<>"'“”‘’]+`)

// reWholeNumber is a token that is one number: "85", "$1,250.50", "-3",
// "12.5", "85€", "31%"; thousands separated by commas in groups of three.
var reWholeNumber = lazyRegexp(`^[$€£¥]?(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)[€$£¥%]?$`)

// TokenNumbers lists the canonical form of every number that stands as a
// whole token of a text ("2024" is not one in "2024-05-12", nor "3" in
// "Q3").
func TokenNumbers(s string) []string {
	var out []string
	for _, tok := range reToken().FindAllString(s, 512) {
		tok = strings.TrimRight(tok, ".,;:!?")
		m := reWholeNumber().FindStringSubmatch(tok)
		if m == nil {
			continue
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil {
			out = append(out, CanonNumber(f))
		}
	}
	return out
}

func CanonNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
