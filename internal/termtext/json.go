package termtext

import (
	"unicode/utf16"
	"unicode/utf8"
)

// JSON returns encoded JSON with every rune Sanitize would escape written
// as a JSON `\uNNNN` escape (a surrogate pair above U+FFFF), so the line
// can go to a terminal: encoding/json escapes C0 controls, U+2028 and
// U+2029, but leaves C1 controls, DEL, bidi and zero-width characters raw
// in strings, and a json.RawMessage may carry anything. Valid JSON stays
// valid and decodes to the same data: such runes can only be inside
// strings, a byte that is not UTF-8 becomes `\ufffd` (what a decoder
// reads it as), and a raw CR, which valid JSON only has as whitespace
// between tokens, becomes a space. Newlines and tabs are kept (whitespace
// of indented JSON). b is returned as it is when there is nothing to do,
// and is never modified.
func JSON(b []byte) []byte {
	i := firstUnsafeJSON(b)
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	return appendJSON(out, b[i:])
}

func firstUnsafeJSON(b []byte) int {
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if asciiUnsafe(c, false) {
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
		if c < utf8.RuneSelf {
			switch {
			case c == '\r':
				out = append(out, ' ')
			case asciiUnsafe(c, false):
				out = appendJSONEscape(out, rune(c))
			default:
				out = append(out, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			out = appendJSONEscape(out, utf8.RuneError)
		case unsafeRune(r):
			out = appendJSONEscape(out, r)
		default:
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// appendJSONEscape appends r as `\uNNNN`, or as a surrogate pair.
func appendJSONEscape(out []byte, r rune) []byte {
	if r > 0xffff {
		hi, lo := utf16.EncodeRune(r)
		out = appendJSONEscape(out, hi)
		return appendJSONEscape(out, lo)
	}
	out = append(out, `\u`...)
	return appendHex(out, uint32(r), 4)
}
