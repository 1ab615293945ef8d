package guard

import (
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// What the rules read is not the text itself but a normalised copy of it,
// made in three passes, each with a map back to its input:
//
//  1. prepare: invisible characters go (zero-width, soft hyphen, bidi
//     controls, BOM and the other format characters, variation
//     selectors, Hangul fillers, control characters, terminal escape
//     sequences); tag characters (U+E0020–E007E), which spell ASCII that
//     a model reads and a person does not see, become that ASCII; every
//     character takes its compatibility decomposition (NFKD: fullwidth,
//     mathematical, circled and ligature forms become plain letters).
//     Case is kept: encoded runs are looked for in this text.
//  2. fold: combining marks go, look-alike letters from other scripts
//     become the Latin letters they imitate, dashes, dots and quotes
//     their ASCII forms, and the rest is lower-cased.
//  3. collapse: a run of blanks becomes one space (one line break if it
//     holds one), and letters spaced out one by one ("i g n o r e",
//     "I.g.n.o.r.e", "i-g-n-o-r-e") become words again.

// prepare is pass 1. Each span in skip (sorted, apart) is replaced by a
// NUL, which no rule matches across.
func prepare(text string, skip [][]int) (string, spanMap) {
	w := newBuilder(len(text))
	for i := 0; i < len(text); {
		for len(skip) > 0 && i > skip[0][0] { // begun inside what was dropped
			skip = skip[1:]
		}
		next := len(text)
		if len(skip) > 0 {
			if i == skip[0][0] {
				w.putByte(0, skip[0][0], skip[0][1])
				i = skip[0][1]
				skip = skip[1:]
				continue
			}
			next = skip[0][0]
		}
		c := text[i]
		if c < utf8.RuneSelf {
			if !plain(c) {
				if c == 0x1b {
					i = escapeEnd(text, i)
				} else {
					i++ // other control characters are dropped
				}
				continue
			}
			j := i + 1
			for j < next && text[j] < utf8.RuneSelf && plain(text[j]) {
				j++
			}
			w.copyOf(text, i, j)
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case r == utf8.RuneError && n == 1: // not UTF-8: dropped
		case r >= 0xe0020 && r <= 0xe007e:
			w.putByte(byte(r-0xe0000), i, i+n)
		case invisible(r):
		default:
			if d := norm.NFKD.PropertiesString(text[i:]).Decomposition(); d != nil {
				w.m.add(len(w.b), len(d), i, n, false)
				w.b = append(w.b, d...)
			} else {
				w.copyOf(text, i, i+n)
			}
		}
		i += n
	}
	return string(w.b), w.m
}

// plain is an ASCII byte kept as it is: printable, or a blank.
func plain(c byte) bool {
	return (c >= 0x20 && c < 0x7f) || (c >= '\t' && c <= '\r')
}

// escapeEnd is just past the terminal escape sequence at text[i] (ESC).
func escapeEnd(text string, i int) int {
	j := i + 1
	if j >= len(text) {
		return j
	}
	switch text[j] {
	case '[': // CSI: parameters, intermediates, a final byte
		j++
		for j < len(text) && text[j] >= 0x20 && text[j] <= 0x3f {
			j++
		}
		for j < len(text) && text[j] >= 0x20 && text[j] <= 0x2f {
			j++
		}
		if j < len(text) && text[j] >= 0x40 && text[j] <= 0x7e {
			j++
		}
		return j
	case ']': // OSC: up to BEL or ST, on one line
		for j++; j < len(text) && text[j] != '\n'; j++ {
			if text[j] == 0x07 {
				return j + 1
			}
			if text[j] == 0x1b && j+1 < len(text) && text[j+1] == '\\' {
				return j + 2
			}
		}
		return j
	}
	return j + 1
}

// invisible is a character that takes no room on screen but may be read by
// a model, or that breaks a word without being seen.
func invisible(r rune) bool {
	switch {
	case r == 0x85: // NEL is a line break (fold)
		return false
	case unicode.Is(unicode.Cf, r), unicode.IsControl(r):
		return true
	case r >= 0xfe00 && r <= 0xfe0f, r >= 0xe0100 && r <= 0xe01ef: // variation selectors
		return true
	}
	switch r {
	case 0x034f, 0x115f, 0x1160, 0x3164, 0xffa0: // grapheme joiner, Hangul fillers
		return true
	}
	return false
}

// fold is pass 2.
func fold(s string) (string, spanMap) {
	w := newBuilder(len(s))
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			j := i + 1
			for j < len(s) && s[j] < utf8.RuneSelf {
				j++
			}
			k := len(w.b)
			w.copyOf(s, i, j)
			for ; k < len(w.b); k++ {
				if c := w.b[k]; c >= 'A' && c <= 'Z' {
					w.b[k] = c + 'a' - 'A'
				}
			}
			i = j
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if x, ok := lookalike[r]; ok {
			w.putByte(x, i, i+n)
		} else if unicode.In(r, unicode.Mn, unicode.Me) {
			// a combining mark: dropped
		} else if l := unicode.ToLower(r); l != r {
			w.m.add(len(w.b), utf8.RuneLen(l), i, n, false)
			w.b = utf8.AppendRune(w.b, l)
		} else {
			w.copyOf(s, i, i+n)
		}
		i += n
	}
	return string(w.b), w.m
}

// collapse is pass 3.
func collapse(s string) (string, spanMap) {
	w := newBuilder(len(s))
	var run spacedRun
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case isBlank(c):
			j, nl := i, false
			for j < len(s) && isBlank(s[j]) {
				nl = nl || s[j] == '\n' || s[j] == '\r'
				j++
			}
			out := byte(' ')
			if nl {
				out = '\n'
			}
			if j-i == 1 && c == out {
				w.copyOf(s, i, j)
			} else {
				w.putByte(out, i, j)
			}
			i = j
		case spacedAt(s, i):
			if j := run.take(s, i); j > i {
				run.emit(w, s)
				i = j
				continue
			}
			w.copyOf(s, i, i+1)
			i++
		default:
			j := i + 1
			for j < len(s) && !isBlank(s[j]) && !spacedAt(s, j) {
				j++
			}
			w.copyOf(s, i, j)
			i = j
		}
	}
	return string(w.b), w.m
}

// spacedAt says whether a run of spaced letters may begin at s[i].
func spacedAt(s string, i int) bool {
	return isLetter(s[i]) && (i == 0 || !isAlnum(s[i-1])) && i+1 < len(s) && isSep(s[i+1])
}

// spacedRun is a run of single letters with a separator between each two
// ("i g n o r e   a l l"): the separator that occurs most joins letters,
// any other separates words.
type spacedRun struct {
	letters []int    // where each letter is
	gaps    [][2]int // gaps[k] is between letters[k] and letters[k+1]
}

const (
	minSpaced = 3 // letters in a spaced-out run
	maxGap    = 5 // bytes between two of its letters
)

// take reads the run of spaced letters that begins at s[i]; it returns
// just past its last letter, or i if there is none.
func (r *spacedRun) take(s string, i int) int {
	r.letters = append(r.letters[:0], i)
	r.gaps = r.gaps[:0]
	j := i + 1
	for {
		k := j
		for k < len(s) && isSep(s[k]) && k-j < maxGap {
			k++
		}
		if k == j || k >= len(s) || !isLetter(s[k]) || (k+1 < len(s) && isAlnum(s[k+1])) {
			break
		}
		r.letters = append(r.letters, k)
		r.gaps = append(r.gaps, [2]int{j, k})
		j = k + 1
	}
	if len(r.letters) < minSpaced {
		return i
	}
	return j
}

// emit writes the run as words.
func (r *spacedRun) emit(w *builder, s string) {
	// The joining separator is the commonest; counting only the first few
	// distinct ones keeps this linear.
	type count struct {
		gap string
		n   int
	}
	var seen [8]count
	ns := 0
	for _, g := range r.gaps {
		gap := s[g[0]:g[1]]
		k := 0
		for k < ns && seen[k].gap != gap {
			k++
		}
		if k == ns {
			if ns == len(seen) {
				continue
			}
			seen[k].gap, seen[k].n = gap, 0
			ns++
		}
		seen[k].n++
	}
	unit := seen[0]
	for _, c := range seen[1:ns] {
		if c.n > unit.n {
			unit = c
		}
	}
	// Each word maps as a whole: from its first letter to its last.
	word := func(from, to int) { // letters[from:to]
		d := len(w.b)
		for _, l := range r.letters[from:to] {
			w.b = append(w.b, s[l])
		}
		w.m.add(d, to-from, r.letters[from], r.letters[to-1]+1-r.letters[from], false)
	}
	from := 0
	for k, g := range r.gaps {
		if s[g[0]:g[1]] != unit.gap {
			word(from, k+1)
			w.putByte(' ', g[0], g[1])
			from = k + 1
		}
	}
	word(from, len(r.letters))
}

func isBlank(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

// isSep separates the letters of a spaced-out word.
func isSep(c byte) bool {
	switch c {
	case ' ', '\t', '.', '-', '_', '*', '|', '/', '~', '+':
		return true
	}
	return false
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' }

// isAlnum is part of a word; a byte of a non-ASCII character counts.
func isAlnum(c byte) bool {
	return isLetter(c) || (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || c >= utf8.RuneSelf
}
