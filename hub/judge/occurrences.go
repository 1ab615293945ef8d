package judge

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxOccurrences bounds the places a value may stand in a request and
// still bind: each is read on its own.
const maxOccurrences = 8

// occurrence is where a value stands whole: a run of tokens of one list
// (the request's, or a quotation's), or a quotation it fills.
type occurrence struct {
	path []int // indices of the quotations it is inside, from the top
	i, j int   // its tokens [i, j) in the innermost list
}

// span is the bytes an occurrence covers.
func (p *parsed) span(o occurrence) [2]int {
	toks := p.toks
	for _, k := range o.path {
		toks = toks[k].sub
	}
	return [2]int{toks[o.i].s, toks[o.j-1].e}
}

// find lists where value stands whole in the request: by its kind's
// rule, at the edges of tokens of one list (the request's or a
// quotation's).
func (p *parsed) find(value string) []occurrence {
	var out []occurrence
	key, isAtom := atomKey(value)
	num, isNum := number(value)
	var walk func(ts []token, path []int)
	walk = func(ts []token, path []int) {
		for k, t := range ts {
			if t.k == tQuote {
				walk(t.sub, append(slices.Clone(path), k))
			}
		}
		switch {
		case isAtom:
			for k, t := range ts {
				if t.k == tValue { // "30/7" is a path by atomKey, a date here
					if tk, ok := atomKey(t.raw); ok && tk == key {
						out = append(out, occurrence{path, k, k + 1})
					}
				}
			}
		case isNum:
			for k, t := range ts {
				if t.k == tValue && t.vk == vNumber {
					if m := reWholeNumber().FindStringSubmatch(t.raw); m != nil {
						if f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil && f == num {
							out = append(out, occurrence{path, k, k + 1})
						}
					}
				}
			}
		default:
			for _, sp := range spansOf(p.text, value, ts) {
				out = append(out, occurrence{path, sp[0], sp[1]})
			}
		}
	}
	walk(p.toks, nil)
	return out
}

// spansOf lists the runs of tokens of ts that value covers exactly, as
// written between value boundaries (or, with its quote marks, a whole
// quotation).
func spansOf(text, value string, ts []token) [][2]int {
	if len(ts) == 0 {
		return nil
	}
	starts, ends := make(map[int]int, len(ts)), make(map[int]int, len(ts))
	for k, t := range ts {
		starts[t.s], ends[t.e] = k, k
	}
	var out [][2]int
	lo, hi := ts[0].s, ts[len(ts)-1].e
	for off := lo; off <= hi-len(value) && len(out) <= maxOccurrences; {
		i := strings.Index(text[off:hi], value)
		if i < 0 {
			break
		}
		s, e := off+i, off+i+len(value)
		if boundaryBefore(text, s, value) && boundaryAfter(text, e, value) {
			a, okA := starts[s]
			b, okB := ends[e]
			if okA && okB && b >= a {
				out = append(out, [2]int{a, b + 1})
			}
		}
		_, size := utf8.DecodeRuneInString(text[s:])
		off = s + size
	}
	return out
}
