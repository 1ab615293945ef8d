package judge

import (
	"strconv"
	"strings"

	"golang.org/x/text/unicode/norm"
)

// Equality is exact (issue: a trailing dot made bob@example.com. the
// bound bob@example.com). A call's value equals a bound one only as the
// same value of its kind: a number as a number (a bound "17" is 17,
// "1,250" is 1250), an address with its domain in any case, a URL with
// its scheme and host in any case, and any text up to Unicode canonical
// equivalence (NFC: "café" composed or not is one value). Nothing else
// is folded — not spaces, not quotes, not a trailing dot, not the case
// of an address's local part: a normalisation may make a value
// unexpected, never expected.

// SameValue reports whether a call's value leaf equals a bound one.
func SameValue(leaf, bound any) bool {
	if m, ok := bound.(meant); ok {
		return sameMeaning(leaf, m)
	}
	if f, isNum := leaf.(float64); isNum {
		b, ok := number(bound)
		return ok && f == b
	}
	ls, ok := leaf.(string)
	if !ok {
		return JSONEqual(leaf, bound)
	}
	switch b := bound.(type) {
	case float64:
		a, ok := number(ls)
		return ok && a == b
	case string:
		return canonical(ls) == canonical(b)
	}
	return false
}

// number reads a number of a bound value: a JSON number, or a string
// that is one number and nothing else ("17", "1,250", "12.5").
func number(x any) (float64, bool) {
	switch t := x.(type) {
	case float64:
		return t, true
	case string:
		m := reWholeNumber().FindStringSubmatch(t)
		if m == nil || m[0] != t || strings.ContainsAny(t, "$€£¥%") {
			return 0, false
		}
		f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64)
		return f, err == nil
	}
	return 0, false
}

// canonical is the one form of a text value that its kind allows.
func canonical(s string) string {
	s = norm.NFC.String(s)
	if reEmail().MatchString(s) {
		at := strings.LastIndexByte(s, '@')
		return s[:at] + "@" + strings.ToLower(s[at+1:])
	}
	if m := reURL().FindStringSubmatch(s); m != nil {
		return strings.ToLower(m[1]+m[2]) + m[3]
	}
	return s
}
