package guard

import (
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
)

// MarkerPrefix begins every marker, the text that replaces a masked span.
const MarkerPrefix = "[masked: "

// Marker is the marker that replaces a span holding instruction-like text
// of the given kinds: "[masked: overrides instructions]", several kinds
// joined by "; ". A kind is kept to letters, digits, spaces and "-()."
// so a marker cannot be mistaken for more than one; with no kind it reads
// "[masked: instruction-like text]", the marker of earlier versions.
func Marker(kinds ...string) string {
	var names []string
	size := 0
	for _, k := range kinds {
		k = markerName(k)
		if k == "" || slices.Contains(names, k) || size+len(k) > maxMarker {
			continue
		}
		names = append(names, k)
		size += len(k) + 2
	}
	if len(names) == 0 {
		names = []string{"instruction-like text"}
	}
	return MarkerPrefix + strings.Join(names, "; ") + "]"
}

// maxMarker bounds what a marker names.
const maxMarker = 240

// markerRE is any marker, of this version or an earlier one.
var markerRE = lazyRegexp(`\[masked: [^\[\]\n]{1,400}\]`)

// IsMasked says whether s holds a marker: whether part of it was masked.
func IsMasked(s string) bool {
	return strings.Contains(s, MarkerPrefix) && markerRE().MatchString(s)
}

// Markers returns where each marker in s is, as pairs of byte offsets
// (as regexp's FindAllStringIndex does).
func Markers(s string) [][]int {
	if !strings.Contains(s, MarkerPrefix) {
		return nil
	}
	return markerRE().FindAllStringIndex(s, -1)
}

// markerName is kind as a marker may name it.
func markerName(kind string) string {
	var b strings.Builder
	space := false
	for _, r := range kind {
		ok := (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') || r == '-' || r == '(' || r == ')' || r == '.'
		if !ok {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
		if b.Len() >= 64 {
			break
		}
	}
	return b.String()
}

// Mask replaces the instruction-like text in text with markers and returns
// the spans it masked (widened as the package doc says; Kind lists the
// kinds found in each, Text what was removed).
func Mask(text string) (string, []Finding) {
	return Apply(text, Find(text))
}

// Apply masks the given findings of text (as Find or a Detector returns
// them); findings of a report-only kind, or outside text, are skipped.
// Each span is widened to its sentence, never past a line break, an
// earlier marker or maxWiden bytes, and overlapping spans merge; each is
// replaced by the Marker of its kinds.
func Apply(text string, fs []Finding) (string, []Finding) {
	type span struct {
		start, end int
		kinds      []string
	}
	var spans []span
	for _, f := range fs {
		if reportOnly(f.Kind) || f.Start < 0 || f.End > len(text) || f.Start >= f.End {
			continue
		}
		spans = append(spans, span{f.Start, f.End, []string{f.Kind}})
	}
	if len(spans) == 0 {
		return text, nil
	}
	// Widen each span to its sentence. The sentence reader wants starts,
	// and ends, in increasing order.
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	marks := Markers(text)
	his := make([]int, len(spans))
	byEnd := make([]int, len(spans))
	for k := range spans {
		byEnd[k] = k
	}
	slices.SortStableFunc(byEnd, func(a, b int) int { return spans[a].end - spans[b].end })
	sn := newSentences(text)
	for _, k := range byEnd {
		_, hi := between(marks, spans[k].start, spans[k].end, len(text))
		his[k] = sn.end(spans[k].end, hi)
	}
	for k := range spans {
		lo, _ := between(marks, spans[k].start, spans[k].end, len(text))
		spans[k].start, spans[k].end = sn.start(spans[k].start, lo), his[k]
	}
	slices.SortStableFunc(spans, func(a, b span) int { return a.start - b.start })
	merged := spans[:1]
	for _, s := range spans[1:] {
		last := &merged[len(merged)-1]
		if s.start <= last.end {
			last.end = max(last.end, s.end)
			for _, k := range s.kinds {
				if !slices.Contains(last.kinds, k) {
					last.kinds = append(last.kinds, k)
				}
			}
			continue
		}
		merged = append(merged, s)
	}
	var b strings.Builder
	b.Grow(len(text))
	var out []Finding
	prev := 0
	for _, s := range merged {
		b.WriteString(text[prev:s.start])
		b.WriteString(Marker(s.kinds...))
		out = append(out, Finding{Kind: strings.Join(s.kinds, ", "), Start: s.start, End: s.end, Text: text[s.start:s.end]})
		prev = s.end
	}
	b.WriteString(text[prev:])
	return b.String(), out
}

// between is the stretch of text between the markers around [start, end):
// a span is not widened over an earlier masking.
func between(marks [][]int, start, end, n int) (lo, hi int) {
	hi = n
	i := sort.Search(len(marks), func(i int) bool { return marks[i][1] > start })
	if i > 0 {
		lo = marks[i-1][1]
	}
	j := sort.Search(len(marks), func(i int) bool { return marks[i][0] >= end })
	if j < len(marks) {
		hi = marks[j][0]
	}
	return max(0, min(lo, start)), min(n, max(hi, end))
}

// lazyRegexp compiles expr on first use, so that a process that never
// needs it does not pay for it at start.
func lazyRegexp(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}
