package termtext

import (
	"unicode/utf16"
	"unicode/utf8"
)

// JSON returns encoded JSON whose strings carry, in place of every rune
// Sanitize would escape, that rune's visible escape as text: what a
// consumer decodes holds no C0 or C1 control (but newline and tab), no
// DEL, bidi or zero-width character — an ESC decodes as the four
// characters `\x1b`, never as ESC. (encoding/json writes an ESC as
// `\u001b`, which decodes back to ESC; and leaves C1 controls, bidi and
// zero-width characters raw in strings; a json.RawMessage may carry
// anything.) Everything else decodes as it was. A byte that is not UTF-8
// becomes the escape `\xNN`; a raw CR, which valid JSON only has as
// whitespace between tokens, becomes a space. Newlines and tabs are kept
// (whitespace of indented JSON, and `\n` `\t` in strings). b is returned
// as it is when there is nothing to do, and is never modified.
func JSON(b []byte) []byte {
	i := firstUnsafeJSON(b)
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	return appendJSON(out, b[i:])
}

// firstUnsafeJSON is the index of the first byte that needs rewriting: a
// raw unsafe rune, or a backslash (an escape, which may stand for one).
func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if c == '\\' || asciiUnsafe(c, false) {
				return i
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 || unsafeRune(r) {
			return i
		}
		i += n
	}
	return len(b)
}

func appendJSON(out, b []byte) []byte {
	for i := 0; i < len(b); {
		c := b[i]
		if c == '\\' && i+1 < len(b) {
			r, n := jsonEscape(b[i:])
			switch {
			case n == 0: // not an escape we know: as it is
				out = append(out, b[i:i+2]...)
				i += 2
			case r < utf8.RuneSelf && asciiUnsafe(byte(r), false) || r >= utf8.RuneSelf && unsafeRune(r):
				out = appendVisible(out, r)
				i += n
			default:
				out = append(out, b[i:i+n]...)
				i += n
			}
			continue
		}
		if c < utf8.RuneSelf {
			switch {
			case c == '\r':
				out = append(out, ' ')
			case asciiUnsafe(c, false):
				out = appendVisible(out, rune(c))
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = append(out, '\\')
			out = appendByteEscape(out, b[i])
		case unsafeRune(r):
			out = appendVisible(out, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// jsonEscape reads the escape at the start of b (a backslash): the rune
// it stands for and its length; a surrogate pair is one rune. n is 0 for
// what is not an escape.
func jsonEscape(b []byte) (rune, int) {
	if len(b) < 2 {
		return 0, 0
	}
	switch b[1] {
	case '"', '\\', '/':
		return rune(b[1]), 2
	case 'b':
		return '\b', 2
	case 'f':
		return '\f', 2
	case 'n':
		return '\n', 2
	case 'r':
		return '\r', 2
	case 't':
		return '\t', 2
	case 'u':
		r, ok := hex4(b[2:])
		if !ok {
			return 0, 0
		}
		if utf16.IsSurrogate(r) && len(b) >= 12 && b[6] == '\\' && b[7] == 'u' {
			if lo, ok := hex4(b[8:]); ok {
				if pair := utf16.DecodeRune(r, lo); pair != utf8.RuneError {
					return pair, 12
				}
			}
		}
		return r, 6
	}
	return 0, 0
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		var v byte
		switch {
		case c >= '0' && c <= '9':
			v = c - '0'
		case c >= 'a' && c <= 'f':
			v = c - 'a' + 10
		case c >= 'A' && c <= 'F':
			v = c - 'A' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(v)
	}
	return r, true
}

// appendVisible appends, as JSON string content, the visible escape of
// r: its backslash escaped, so that it decodes as text.
func appendVisible(out []byte, r rune) []byte {
	for _, c := range appendEscape(nil, r) {
		if c == '\\' {
			out = append(out, '\\')
		}
		out = append(out, c)
	}
	return out
}
