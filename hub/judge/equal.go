package judge

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"
)

// Equality is exact, by kind (invariant 13; issue: a trailing dot made
// bob@example.com. the bound bob@example.com). A call's value equals a
// bound one only as the same value of its kind, and each kind has one
// rule, used wherever a decisive value is compared — SameValue (a call
// against its bindings), atomKey and inRequest (what stands in the
// request), the Ledger (whose words a value is):
//
//   - a number equals a number (a bound "17" is 17, "1,250" is 1250);
//     a number written any other way ("１７", "١٧", "1.250", "1e3",
//     "$17") is text, and text is not a number;
//   - an e-mail address: its local part byte for byte ("Bob" is not
//     "bob"), its domain by IDNA (domainKey);
//   - a URL: its scheme in any ASCII case, its host as a domain is, its
//     user, port, path, query and fragment byte for byte ("/pay/" is not
//     "/pay");
//   - a path — anything with a slash that is no URL, or one word with an
//     extension (notes.md) — byte for byte: a file system compares names
//     by their bytes, so two canonically equivalent names (NFC "café.md",
//     NFD "cafe\u0301.md") are two files, and the dialog shows them as
//     two values (Shown);
//   - any other text (a name, an identifier, a command, a message) by
//     PRECIS (textForm): NFC, and nothing else — no case, no width, no
//     space is folded; a text PRECIS refuses equals only its bytes.
//
// Whatever the kind, a value with a character outside ASCII never equals
// one without: no rule may turn a look-alike (Cyrillic а, Greek ο, a
// letter of any other script, a fullwidth ｅ, U+0130 İ, U+212A KELVIN SIGN)
// or an invisible character (a zero-width joiner) into what the user
// typed. A normalisation may make a value unexpected, never expected.

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
		return sameString(ls, b)
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

// shape is the kind of a text value, as equality reads it.
type shape int

const (
	shapeText shape = iota
	shapeMail
	shapeURL
	shapePath
)

// reFileName is one word with an extension: a file's name.
var reFileName = lazyRegexp(`^[^\s/\\]+\.[\p{L}\p{N}]{1,12}$`)

// shapeOf is the kind of s: an address, a URL, a path, or text.
func shapeOf(s string) shape {
	switch {
	case reEmail().MatchString(s):
		return shapeMail
	case reURL().MatchString(s):
		return shapeURL
	case rePath().MatchString(s), strings.ContainsAny(s, `/\`), reFileName().MatchString(s):
		return shapePath
	}
	return shapeText
}

// sameString reports whether two text values are one value of their
// kind (the rules above).
func sameString(a, b string) bool {
	if a == b {
		return true
	}
	if isASCII(a) != isASCII(b) {
		return false
	}
	sa := shapeOf(a)
	if sa != shapeOf(b) {
		return false
	}
	switch sa {
	case shapeMail:
		ka, _ := mailKey(a)
		kb, _ := mailKey(b)
		return ka == kb
	case shapeURL:
		ka, _ := urlKey(a)
		kb, _ := urlKey(b)
		return ka == kb
	case shapeText:
		fa, oka := textForm(a)
		fb, okb := textForm(b)
		return oka && okb && fa == fb
	}
	return false // a path: its bytes, compared above
}

// mailKey is the one form of an e-mail address that equality compares:
// its local part as written, its domain's domainKey (or, for a domain
// IDNA refuses, its bytes). ok is false for anything that is not an
// address.
func mailKey(s string) (string, bool) {
	if !reEmail().MatchString(s) {
		return "", false
	}
	at := strings.LastIndexByte(s, '@')
	return strconv.Quote(s[:at]) + hostKey(s[at+1:]), true
}

// urlKey is the one form of a URL that equality compares: its scheme in
// lower case, its host's domainKey (or its bytes), everything else as
// written. ok is false for anything that is not a URL.
func urlKey(s string) (string, bool) {
	m := reURL().FindStringSubmatch(s)
	if m == nil {
		return "", false
	}
	auth := m[2]
	user := ""
	if i := strings.LastIndexByte(auth, '@'); i >= 0 {
		user, auth = auth[:i+1], auth[i+1:]
	}
	host, port := auth, ""
	if !strings.HasPrefix(host, "[") { // an IPv6 literal: its bytes
		if i := strings.LastIndexByte(host, ':'); i >= 0 && allDigits(host[i+1:]) {
			host, port = host[:i], host[i:]
		}
	}
	return strconv.Quote(asciiLower(m[1])) + strconv.Quote(user) + hostKey(host) + strconv.Quote(port) + strconv.Quote(m[3]), true
}

// hostKey is a domain's domainKey, or its bytes where IDNA refuses it;
// the two never coincide.
func hostKey(d string) string {
	if k, ok := domainKey(d); ok {
		return "~" + strconv.Quote(k)
	}
	return "=" + strconv.Quote(d)
}

// domainKey is a domain as equality compares it: its IDNA ASCII form
// (idna.Registration.ToASCII), each label written in Unicode marked as
// such, so that a domain equals another only when they are written
// alike up to the case of their ASCII letters.
//
//   - ASCII case is the only thing folded: EXAMPLE.com is example.com.
//   - The Registration profile refuses every character that IDNA's
//     mapping would change (a fullwidth ｅ, U+0130 İ — which Go's
//     strings.ToLower turns into a plain i —, a capital Ü, an ideographic
//     full stop), every invalid label (a zero-width joiner out of its
//     context, an underscore, "--" in the third and fourth places), and a
//     form that is not NFC: such a domain equals nothing but its bytes.
//   - A label that mixes scripts (Latin and Cyrillic: exаmple) equals
//     nothing but its bytes either.
//   - A domain written in Unicode and its punycode are two values here
//     (bücher.example is not xn--bcher-kva.example, whichever the user
//     typed): a person compares what they see, and the dialog shows each
//     in the other form (Shown).
//
// ok is false where the domain equals only its bytes.
func domainKey(d string) (string, bool) {
	low := asciiLower(d)
	ascii, err := idna.Registration.ToASCII(low)
	if err != nil || ascii == "" {
		return "", false
	}
	labels, keys := strings.Split(low, "."), strings.Split(ascii, ".")
	if len(labels) != len(keys) {
		return "", false
	}
	for i, l := range labels {
		if isASCII(l) {
			continue
		}
		if mixesScripts(l) {
			return "", false
		}
		keys[i] = "*" + keys[i]
	}
	return strings.Join(keys, "."), true
}

// textProfile is PRECIS's freeform class with NFC and nothing else: the
// OpaqueString profile without its mapping of every space to U+0020 (a
// no-break space inside a command is no separator), and none of the
// width, case or compatibility folding of the other profiles (a
// fullwidth ｂｏｂ is not bob).
var textProfile = precis.NewFreeform(precis.Norm(norm.NFC), precis.DisallowEmpty)

// textForm is the form a text value compares in: its PRECIS (NFC) form,
// where the freeform class allows each of its characters (no control,
// no invisible format character such as a zero-width space or joiner)
// and none of them is one that NFC replaces on its own (a singleton such
// as U+212A KELVIN SIGN, whose canonical form is a plain K, or U+037E,
// a Greek question mark that NFC makes a semicolon). ok is false for a
// text that compares by its bytes alone, and for any value that is not
// text (an address, a URL, a path).
func textForm(s string) (string, bool) {
	if shapeOf(s) != shapeText || !composable(s) {
		return "", false
	}
	f, err := textProfile.String(s)
	return f, err == nil
}

// composable reports whether NFC changes no character of s on its own:
// s differs from its NFC form only in how accents are composed.
func composable(s string) bool {
	var buf [utf8.UTFMax]byte
	for _, r := range s {
		if r < utf8.RuneSelf {
			continue
		}
		n := utf8.EncodeRune(buf[:], r)
		if !norm.NFC.IsNormal(buf[:n]) {
			return false
		}
	}
	return true
}

// mixesScripts reports whether a label's letters come from more than
// one script (the Common and Inherited ones — digits, a hyphen,
// combining marks — belong to any).
func mixesScripts(label string) bool {
	first := ""
	for _, r := range label {
		s := scriptOf(r)
		if s == "" || s == "Common" || s == "Inherited" {
			continue
		}
		if first == "" {
			first = s
		} else if s != first {
			return true
		}
	}
	return false
}

// scriptOf is the Unicode script of r ("" when it has none).
func scriptOf(r rune) string {
	if r < utf8.RuneSelf {
		if 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' {
			return "Latin"
		}
		return "Common"
	}
	for name, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return name
		}
	}
	return ""
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// asciiLower is s with its ASCII capitals in lower case, and nothing
// else changed (strings.ToLower also maps U+0130 İ to i, U+212A to k).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
