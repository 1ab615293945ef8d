package guard

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// refStart and refEnd are the widening rules read one span at a time,
// the plain way: what sentences, which reads each byte once for many
// spans, must agree with.
func refStart(text string, i, lo int) int {
	limit := max(lo, i-maxWiden)
	j := i
	for j > limit && !startsSentence(text, j) {
		j--
	}
	if j == limit && j > lo && !startsSentence(text, j) {
		for k := j; k < min(i, j+maxWord); k++ {
			if isBlank(text[k]) {
				j = k
				break
			}
		}
		for j < i && !utf8.RuneStart(text[j]) {
			j++
		}
	}
	for j < i && isBlank(text[j]) {
		j++
	}
	return j
}

func refEnd(text string, i, hi int) int {
	if i > 0 && isStop(text[i-1]) && (i == len(text) || isBlank(text[i])) {
		return i
	}
	limit := min(len(text), i+maxWiden)
	j := -1
	for p := i; p < limit; p++ {
		if e, ok := endsAt(text, p); ok {
			j = min(e, hi)
			break
		}
	}
	if j < 0 && hi <= limit {
		j = hi
	}
	if j < 0 {
		j = limit
		for k := j; k > max(i, j-maxWord); k-- {
			if isBlank(text[k-1]) {
				j = k
				break
			}
		}
		for j > i && !utf8.RuneStart(text[j]) {
			j--
		}
	}
	for j > i && isBlank(text[j-1]) {
		j--
	}
	return j
}

func TestSentencesAgreeWithTheirDefinition(t *testing.T) {
	t.Parallel()
	pieces := []string{"a", "word", " ", " ", ".", "!", "?", "\n", "\"", ")", "。", "é", "  ", "evil.example", strings.Repeat("x", 40), "\t"}
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		var b strings.Builder
		for n := r.IntN(400); n > 0; n-- {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		text := b.String()
		if text == "" {
			continue
		}
		var at []int // rune starts
		for i := range text {
			at = append(at, i)
		}
		type span struct{ s, e, lo, hi int }
		var spans []span
		for n := 1 + r.IntN(20); n > 0; n-- {
			s := at[r.IntN(len(at))]
			e := min(len(text), s+1+r.IntN(30))
			for e < len(text) && !utf8.RuneStart(text[e]) {
				e++
			}
			lo, hi := 0, len(text)
			if r.IntN(3) == 0 {
				lo = r.IntN(s + 1)
				hi = e + r.IntN(len(text)-e+1)
			}
			spans = append(spans, span{s, e, lo, hi})
		}
		slices.SortFunc(spans, func(a, b span) int { return a.s - b.s })
		sn := newSentences(text)
		byEnd := slices.Clone(spans)
		slices.SortStableFunc(byEnd, func(a, b span) int { return a.e - b.e })
		for _, sp := range byEnd {
			if got, want := sn.end(sp.e, sp.hi), refEnd(text, sp.e, sp.hi); got != want {
				t.Fatalf("end(%d, %d) = %d, want %d in %q", sp.e, sp.hi, got, want, text)
			}
		}
		for _, sp := range spans {
			if got, want := sn.start(sp.s, sp.lo), refStart(text, sp.s, sp.lo); got != want {
				t.Fatalf("start(%d, %d) = %d, want %d in %q", sp.s, sp.lo, got, want, text)
			}
		}
	}
}
