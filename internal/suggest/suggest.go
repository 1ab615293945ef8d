// Package suggest names what a mistyped word most likely meant: a
// command, a config key, a model. One implementation for every "did you
// mean".
package suggest

import (
	"strings"
	"unicode/utf8"
)

// Closest are the names word most likely meant: those it begins (up to
// three, when prefix is set), else those nearest by edit distance, when
// near enough (at most max(2, a third of the name)).
func Closest(word string, names []string, prefix bool) []string {
	w := strings.ToLower(word)
	var out []string
	if prefix && w != "" {
		for _, n := range names {
			if strings.HasPrefix(strings.ToLower(n), w) {
				out = append(out, n)
			}
		}
		if len(out) > 0 {
			return out[:min(len(out), 3)]
		}
	}
	best := -1
	for _, n := range names {
		d := Distance(w, strings.ToLower(n))
		if d > max(2, utf8.RuneCountInString(n)/3) {
			continue
		}
		switch {
		case best < 0 || d < best:
			best, out = d, []string{n}
		case d == best:
			out = append(out, n)
		}
	}
	return out
}

// Distance is the Levenshtein distance of a and b, by runes.
func Distance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
