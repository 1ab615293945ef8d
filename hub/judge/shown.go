package judge

import (
	"fmt"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/text/unicode/norm"
	"golang.org/x/text/unicode/runenames"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// A value a person could misread is shown as browsers show a suspicious
// host: an address's domain or a URL's host in its other IDNA form (the
// punycode of a domain written in Unicode, the Unicode of one written in
// punycode), and every character outside plain ASCII by its code point
// and name — a look-alike letter of any script, an invisible joiner, a
// combining accent, a fullwidth form. The dialog shows it next to the
// value; equality never reads it.

// maxShownRunes bounds the code points Shown lists.
const maxShownRunes = 8

// Shown is how a dialog shows v beside it when v is not plain printable
// ASCII (or is a punycode domain): "bob@xn--exmple-4nf.com (U+0430
// CYRILLIC SMALL LETTER A)", "bob@аррӏе.com (U+0430 CYRILLIC SMALL LETTER
// A, …)" for bob@xn--80ak6aa92e.com, "U+0301 COMBINING ACUTE ACCENT" for
// an NFD file name. It is "" for a value with nothing to show.
func Shown(v string) string {
	other := otherForm(v)
	cps := v
	if isASCII(v) {
		cps = other // a punycode domain: its Unicode form's characters
	}
	points := codePoints(cps)
	switch {
	case other != "" && len(points) > 0:
		return other + " (" + strings.Join(points, ", ") + ")"
	case other != "":
		return other
	}
	return strings.Join(points, ", ")
}

// ValueWords is a value as a dialog's words say it: clipped to limit
// runes, with how it shows (Shown) where it is not plain ASCII.
func ValueWords(v any, limit int) string {
	s, ok := v.(string)
	if !ok {
		return clip(fmt.Sprint(v), limit)
	}
	if sh := Shown(s); sh != "" {
		return fmt.Sprintf("%s [%s]", clip(s, limit), sh)
	}
	return clip(s, limit)
}

// otherForm is v with its address's domain or its URL's host in the
// other IDNA form: punycode for a domain with characters outside ASCII,
// Unicode for a punycode one ("" when v has neither, or IDNA refuses it).
func otherForm(v string) string {
	pre, host, post := "", "", ""
	switch {
	case reURL().MatchString(v):
		m := reURL().FindStringSubmatch(v)
		auth := m[2]
		if i := strings.LastIndexByte(auth, '@'); i >= 0 {
			pre, auth = auth[:i+1], auth[i+1:]
		}
		host = auth
		if i := strings.LastIndexByte(auth, ':'); i >= 0 && allDigits(auth[i+1:]) && !strings.HasPrefix(auth, "[") {
			host, post = auth[:i], auth[i:]
		}
		pre, post = m[1]+pre, post+m[3]
	case !strings.ContainsFunc(v, unicode.IsSpace) && strings.Contains(v, "@"):
		at := strings.LastIndexByte(v, '@')
		pre, host = v[:at+1], v[at+1:]
		if !strings.Contains(host, ".") || strings.ContainsAny(host, `/\`) {
			return ""
		}
	default:
		return ""
	}
	var out string
	var err error
	switch {
	case !isASCII(host):
		out, err = idna.Punycode.ToASCII(host)
	case strings.Contains(asciiLower(host), "xn--"):
		out, err = idna.Punycode.ToUnicode(host)
	default:
		return ""
	}
	if err != nil || out == host {
		return ""
	}
	return pre + out + post
}

// codePoints lists, in order and once each, the characters of s outside
// printable ASCII: "U+0430 CYRILLIC SMALL LETTER A".
func codePoints(s string) []string {
	var out []string
	seen := map[rune]bool{}
	more := 0
	for _, r := range s {
		if r >= 0x20 && r < 0x7f || seen[r] {
			continue
		}
		seen[r] = true
		if len(out) == maxShownRunes {
			more++
			continue
		}
		p := fmt.Sprintf("U+%04X", r)
		if name := runenames.Name(r); name != "" {
			p += " " + name
		}
		out = append(out, p)
	}
	if more > 0 {
		out = append(out, fmt.Sprintf("and %d more", more))
	}
	return out
}

// LookAlike is what the user typed in this request that v imitates: a
// value of it that v is not (by equality's rules) but that v differs
// from only in characters outside ASCII — a look-alike letter of any
// script, an invisible one, a fullwidth form, an accent composed another
// way, a domain in punycode ("" when none). A value in plain ASCII
// imitates nothing: what differs there (a case, a dot) a person can see.
func (l *Ledger) LookAlike(v string) string {
	if l == nil || isASCII(v) && otherForm(v) == "" {
		return ""
	}
	sv := skeleton(v)
	words := len(strings.Fields(v))
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, o := range l.origins {
		if o.rank != rankUser || o.scope != ScopeQuery {
			continue
		}
		var cands []string
		for _, a := range o.atoms {
			cands = append(cands, a)
		}
		for _, t := range o.texts {
			f := strings.Fields(t)
			for i := 0; i+words <= len(f) && words > 0; i++ {
				c := strings.Join(f[i:i+words], " ")
				cands = append(cands, c, trimAtom(strings.TrimLeft(c, openers)))
			}
		}
		best := ""
		for _, c := range cands {
			if c != "" && !sameString(v, c) && skeletonsMatch(sv, skeleton(c)) && (best == "" || c < best) {
				best = c // the same answer whatever order the map gave
			}
		}
		if best != "" {
			return best
		}
	}
	return ""
}

// lookAlikeWords say, for a dialog, what of the user's request v
// imitates: "; it is not bob@example.com, which you typed: it differs
// from it only in characters outside plain ASCII" ("" when nothing).
func (l *Ledger) lookAlikeWords(v any) string {
	s, ok := v.(string)
	if !ok {
		return ""
	}
	c := l.LookAlike(s)
	if c == "" {
		return ""
	}
	return fmt.Sprintf("; it is not %s, which you typed: it differs from it only in characters outside plain ASCII", clip(c, 80))
}

// describeValue says where a value came from and, where it is not plain
// ASCII, how it shows and what of the request it imitates.
func (l *Ledger) describeValue(v any, src, via string) string {
	return DescribeSource(permissions.Provenance{Source: src, Via: via}) + l.lookAlikeWords(v)
}

// skeleton is a value as a person glances at it: its domain in Unicode,
// decomposed, without combining marks and invisible format characters.
func skeleton(s string) []rune {
	if o := otherForm(s); o != "" && isASCII(s) {
		s = o
	}
	var out []rune
	for _, r := range norm.NFD.String(s) {
		if unicode.In(r, unicode.Mn, unicode.Me, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point) {
			continue
		}
		out = append(out, r)
	}
	return out
}

// skeletonsMatch reports whether two skeletons differ only where one of
// them has a character outside ASCII, and agree on at least one ASCII
// letter or digit: the ASCII a person reads is the same.
func skeletonsMatch(a, b []rune) bool {
	if len(a) != len(b) {
		return false
	}
	agree := false
	for i := range a {
		switch {
		case a[i] == b[i]:
			if a[i] < 0x80 && (unicode.IsLetter(a[i]) || unicode.IsDigit(a[i])) {
				agree = true
			}
		case a[i] < 0x80 && b[i] < 0x80:
			return false
		}
	}
	return agree
}
