package guard

import (
	"context"
	"errors"
	"slices"
	"strings"
)

// The kinds of instruction-like text Find reports.
const (
	KindAddresses = "addresses the assistant"
	KindOverrides = "overrides instructions"
	KindRole      = "claims a role"
	KindToolCall  = "tool-call syntax"
	KindDelimiter = "prompt delimiter"
	KindAdaptive  = "adaptive phrase"
	KindStanding  = "standing order"
	// KindDirects is reported but never masked (see the package doc).
	KindDirects = "directs an action"
)

// What a kind found inside an encoded run is followed by: "overrides
// instructions (base64)".
const (
	viaBase64 = " (base64)"
	viaHex    = " (hex)"
)

// kindOrder is the order Kinds reports kinds in.
var kindOrder = []string{KindAddresses, KindOverrides, KindRole, KindToolCall, KindDelimiter, KindAdaptive, KindStanding, KindDirects}

// Finding is one span of instruction-like text: Text is text[Start:End],
// in the text as the caller gave it (whatever was normalised to find it).
type Finding struct {
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Text  string `json:"text"`
}

// Find returns every instruction-like span in text, by start.
func Find(text string) []Finding {
	fs, _ := scan(context.Background(), text, true)
	return fs
}

// Kinds names the kinds of instruction-like text in s, in a fixed order,
// each once: the hub's dialog warning.
func Kinds(s string) []string {
	seen := map[string]bool{}
	for _, f := range Find(s) {
		seen[f.Kind] = true
	}
	var out []string
	for _, k := range kindOrder {
		for _, v := range []string{k, k + viaBase64, k + viaHex} {
			if seen[v] {
				out = append(out, v)
			}
		}
	}
	return out
}

// reportOnly is a kind that is reported but never masked.
func reportOnly(kind string) bool {
	return strings.TrimSuffix(strings.TrimSuffix(kind, viaBase64), viaHex) == KindDirects
}

// scan finds the instruction-like spans of text; decode says whether it
// also decodes encoded runs and scans what they say (one level deep), and
// leaves alone the markers of earlier maskings.
func scan(ctx context.Context, text string, decode bool) ([]Finding, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var skip [][]int
	if decode {
		skip = neutralMarkers(ctx, text)
	}
	s1, m1 := prepare(text, skip)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, mf := fold(s1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s2, m2 := collapse(f)
	var out []Finding
	add := func(kind string, start, end int) {
		for start < end && isBlank(text[start]) {
			start++
		}
		for end > start && isBlank(text[end-1]) {
			end--
		}
		if start < end {
			out = append(out, Finding{Kind: kind, Start: start, End: end})
		}
	}
	err := ctx.Err()
	if err == nil {
		err = match(ctx, s2, func(kind string, a, b int) {
			add(kind, m1.start(mf.start(m2.start(a))), m1.end(mf.end(m2.end(b))))
		})
	}
	if err == nil && decode {
		err = scanEncoded(ctx, s1, func(kind string, a, b int) {
			add(kind, m1.start(a), m1.end(b))
		})
	}
	out = merge(out)
	for i := range out {
		out[i].Text = text[out[i].Start:out[i].End]
	}
	return out, err
}

// merge sorts fs by start and joins the findings of one kind that
// overlap (several rules may match one role tag) into one.
func merge(fs []Finding) []Finding {
	slices.SortStableFunc(fs, func(a, b Finding) int { return a.Start - b.Start })
	last := map[string]int{} // kind → index in out of its last finding
	out := fs[:0]
	for _, f := range fs {
		if i, ok := last[f.Kind]; ok && out[i].End >= f.Start {
			if f.End > out[i].End {
				out[i].End = f.End
			}
			continue
		}
		last[f.Kind] = len(out)
		out = append(out, f)
	}
	return out
}

// neutralMarkers are the markers in text that name nothing a rule would
// find: an earlier masking's, or a copy of one. A marker that holds
// instruction-like text is scanned like any other text.
func neutralMarkers(ctx context.Context, text string) [][]int {
	var out [][]int
	for _, m := range Markers(text) {
		inner := text[m[0]+len(MarkerPrefix) : m[1]-1]
		if fs, err := scan(ctx, inner, false); err == nil && len(fs) == 0 {
			out = append(out, m)
		}
	}
	return out
}

// Detector finds instruction-like spans in a text.
type Detector interface {
	Detect(ctx context.Context, text string) ([]Finding, error)
}

// Rules is the deterministic detector: Find, which stops when ctx ends.
type Rules struct{}

// Detect returns Find(text); when ctx ends first, it returns what it had
// found and ctx's error.
func (Rules) Detect(ctx context.Context, text string) ([]Finding, error) {
	return scan(ctx, text, true)
}

// Func adapts a function to a Detector.
type Func func(ctx context.Context, text string) ([]Finding, error)

// Detect calls f.
func (f Func) Detect(ctx context.Context, text string) ([]Finding, error) { return f(ctx, text) }

// Chain is a detector that reports what every one of ds finds. A detector
// that fails does not hide what the others found: the findings are kept
// and the errors joined.
func Chain(ds ...Detector) Detector {
	return Func(func(ctx context.Context, text string) ([]Finding, error) {
		var all []Finding
		var errs []error
		for _, d := range ds {
			fs, err := d.Detect(ctx, text)
			errs = append(errs, err)
			all = append(all, fs...)
		}
		return all, errors.Join(errs...)
	})
}

// Spans turns phrases that a detector (such as a model) quoted from text
// into findings of kind, keeping only those that occur verbatim in it.
func Spans(text, kind string, phrases []string) []Finding {
	var out []Finding
	for _, p := range phrases {
		p = strings.TrimSpace(p)
		if len(p) < 4 {
			continue
		}
		for off := 0; ; {
			i := strings.Index(text[off:], p)
			if i < 0 {
				break
			}
			out = append(out, Finding{Kind: kind, Start: off + i, End: off + i + len(p), Text: p})
			off += i + len(p)
		}
	}
	return out
}
