// Package termtext makes text that an app or a model wrote safe to print
// on a terminal. Such text is untrusted (DESIGN.md §1): written raw, an
// escape sequence in it could write the clipboard (OSC 52), retitle the
// window, clear the screen or move the cursor, and a CR, a bidi override
// or a zero-width character could make the line read other than it is.
//
// Nothing is removed. Every rune that a terminal would act on or hide is
// replaced by a visible escape, so the reader sees that it was there and
// what it was; because ESC itself becomes the four characters `\x1b`,
// every ESC, CSI, OSC or DCS sequence turns into harmless visible text.
//
// Escaped: C0 controls except '\n' and '\t' (CR, BS, BEL and ESC
// included), DEL, C1 controls (U+0080–U+009F), format characters
// (unicode.Cf: bidi controls such as U+202E and U+2066–U+2069, zero-width
// characters U+200B–U+200D and U+2060–U+2064, U+FEFF, U+00AD, U+180E,
// tag characters), the line and paragraph separators U+2028 and U+2029,
// and bytes that are not valid UTF-8. Everything else — letters of any
// script, combining marks, emoji, spaces, newlines and tabs — is kept as
// it is. A zero-width joiner is escaped too, so an emoji ZWJ sequence
// shows as its parts joined by `\u200d`.
//
// The notation is that of a Go string literal, as strconv.Quote writes
// it: `\a` `\b` `\f` `\n` `\r` `\t` `\v` for those seven controls, `\xNN`
// for any other ASCII control and DEL and for a byte that is not valid
// UTF-8, `\uNNNN` for any other rune, `\UNNNNNNNN` above U+FFFF; hex digits
// are lower case. A backslash already in the text is left alone, so the
// escapes are for the eye, not for decoding back.
//
// Sanitize and OneLine are for whole strings, Writer for output that
// arrives in pieces (a streamed answer), and JSON for encoded JSON.
// The functions are safe for concurrent use; a Writer is not.
package termtext

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sanitize returns s with every rune a terminal would act on or hide
// replaced by a visible escape (see the package doc). Newlines and tabs
// stay; text with nothing to escape is returned as it is.
func Sanitize(s string) string {
	return sanitize(s, false)
}

// OneLine is Sanitize for a value shown on one line of a listing: a
// newline or tab in it is escaped too (`\n`, `\t`), so it cannot break
// the line or forge a line of its own.
func OneLine(s string) string {
	return sanitize(s, true)
}

func sanitize(s string, oneLine bool) string {
	i := firstUnsafe(s, oneLine)
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	b.WriteString(s[:i])
	b.Write(appendSanitized(nil, s[i:], oneLine))
	return b.String()
}

// firstUnsafe is the index of the first byte of s that needs an escape,
// or len(s).
func firstUnsafe(s string, oneLine bool) int {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiUnsafe(c, oneLine) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return i
		}
		i += n
	}
	return len(s)
}

// appendSanitized appends s to b with the escapes applied.
func appendSanitized(b []byte, s string, oneLine bool) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if asciiUnsafe(c, oneLine) {
				b = appendEscape(b, rune(c))
			} else {
				b = append(b, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = appendByteEscape(b, c)
		case unsafeRune(r):
			b = appendEscape(b, r)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// asciiUnsafe reports whether the ASCII byte c is escaped.
func asciiUnsafe(c byte, oneLine bool) bool {
	switch {
	case c == '\n' || c == '\t':
		return oneLine
	case c < 0x20 || c == 0x7f:
		return true
	}
	return false
}

// unsafeRune reports whether a non-ASCII rune is escaped: C1 controls,
// format characters (bidi, zero-width, soft hyphen, tags) and the line
// and paragraph separators.
func unsafeRune(r rune) bool {
	switch {
	case r >= 0x80 && r <= 0x9f:
		return true
	case r == '\u2028' || r == '\u2029':
		return true
	}
	return unicode.Is(unicode.Cf, r)
}

const hex = "0123456789abcdef"

// appendEscape appends the visible escape of rune r.
func appendEscape(b []byte, r rune) []byte {
	switch r {
	case '\a':
		return append(b, `\a`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	case '\v':
		return append(b, `\v`...)
	}
	switch {
	case r < utf8.RuneSelf:
		return appendByteEscape(b, byte(r))
	case r <= 0xffff:
		b = append(b, `\u`...)
		return appendHex(b, uint32(r), 4)
	default:
		b = append(b, `\U`...)
		return appendHex(b, uint32(r), 8)
	}
}

// appendByteEscape appends `\xNN` for one byte.
func appendByteEscape(b []byte, c byte) []byte {
	return append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
}

func appendHex(b []byte, v uint32, digits int) []byte {
	for shift := 4 * (digits - 1); shift >= 0; shift -= 4 {
		b = append(b, hex[v>>uint(shift)&0xf])
	}
	return b
}
