package judge

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// reAtom finds values that decide where something goes: e-mail
// addresses, URLs and paths (any script's letters).
var reAtom = lazyRegexp(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+|[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s"'<>]+|(?:~|\.{1,2})?/[\p{L}\p{N}._@%+~\-]+(?:/[\p{L}\p{N}._@%+~\-]+)*`)

var (
	reEmail = lazyRegexp(`^[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+$`)
	reURL   = lazyRegexp(`^([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/?#\s]*)(.*)$`)
	rePath  = lazyRegexp(`^(?:~|\.{1,2})?/[^\s]*$|^[\p{L}\p{N}._\-]+(?:/[\p{L}\p{N}._\-]+)+$`)
)

// atomKey is the one form of an address, a URL or a path that equality
// compares (equal.go): two atoms have one key exactly when SameValue
// calls them equal — an address's local part and a URL's path, query and
// fragment as written, a domain by IDNA (domainKey), a path by its bytes.
// Nothing around the value is trimmed (a trailing dot, a slash, a "./"
// are the value's own: atomsOf takes a sentence's punctuation off what
// it finds in a text); ok is false for anything else.
func atomKey(s string) (string, bool) {
	if k, ok := mailKey(s); ok {
		return "mail:" + k, true
	}
	if k, ok := urlKey(s); ok {
		return "url:" + k, true
	}
	if rePath().MatchString(s) {
		return "path:" + s, true
	}
	return "", false
}

// wrapsAtom reports whether s is an address, a URL or a path with
// something around it — spaces, quotes, brackets, a sentence's closing
// punctuation, a mailto: — and so not that value.
func wrapsAtom(s string) bool {
	t := s
	for {
		u := strings.TrimSpace(t)
		u = strings.TrimPrefix(u, "mailto:")
		u = strings.TrimLeft(u, openers)
		u = trimAtom(u)
		if u == t {
			break
		}
		t = u
	}
	if t == s {
		return false
	}
	_, ok := atomKey(t)
	return ok
}

// openers and closers are the quotes and brackets around a value.
const (
	openers = "\"'`“‘«([{<"
	closers = "\"'`”’»]}>"
)

// trimAtom takes off what follows an atom in a sentence: its closing
// punctuation, quotes and brackets (a closing parenthesis only where the
// atom opens none: a URL's "(bar)" is its own).
func trimAtom(a string) string {
	for {
		b := strings.TrimRight(a, ".,;:!?"+closers)
		if strings.HasSuffix(b, ")") && strings.Count(b, ")") > strings.Count(b, "(") {
			b = b[:len(b)-1]
		}
		if b == a {
			return a
		}
		a = b
	}
}

// reAtoms finds at most n addresses, URLs and paths in a text, as its
// writer meant them: a sentence's punctuation after one is not part of
// it, and a path is found from the start of its word (the "/plan.md" of
// docs/plan.md is not one).
func reAtoms(text string, n int) []string {
	var out []string
	for _, ix := range reAtom().FindAllStringIndex(text, n) {
		start, a := ix[0], text[ix[0]:ix[1]]
		if !reEmail().MatchString(a) && !reURL().MatchString(a) {
			for start > 0 {
				r, size := utf8.DecodeLastRuneInString(text[:start])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-~", r) {
					break
				}
				start -= size
			}
		}
		out = append(out, trimAtom(text[start:ix[1]]))
	}
	return out
}
