package guard

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
)

// Marker replaces each masked span.
const Marker = "[masked: instruction-like text]"

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

// Finding is one span of instruction-like text: Text is text[Start:End].
type Finding struct {
	Kind  string `json:"kind"`
	Start int    `json:"start"`
	End   int    `json:"end"`
	Text  string `json:"text"`

	scope scope // set by Find: how far Apply widens the span
}

type scope int

const (
	sentence  scope = iota
	paragraph       // masked to the end of its paragraph
)

type pattern struct {
	kind  string
	scope scope
	re    *regexp.Regexp
}

var patterns = []pattern{
	{KindAddresses, paragraph, regexp.MustCompile(`(?i)\b(?:dear|hello|hi|hey)\s+(?:the\s+)?(?:assistant|ai|model|chatbot|llm|agent)\b|\b(?:instruction|note|message)s?\s+(?:to|for)\s+the\s+(?:assistant|ai|model|agent)\b`)},
	{KindAddresses, sentence, regexp.MustCompile(`(?i)\b(?:assistant|ai|model|chatbot|llm)\s*[,:!]|\bthe assistant (?:must|should|shall|needs to)\b`)},
	{KindOverrides, sentence, regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override)\b.{0,30}\b(?:previous|prior|above|earlier|all|any|your)\b.{0,20}\b(?:instructions?|rules?|prompts?|directions?)|\bdo not follow\b.{0,30}\b(?:previous|prior|original|earlier)\b.{0,20}\b(?:instructions?|rules?)`)},
	{KindRole, sentence, regexp.MustCompile(`(?i)(?:^|\n)\s*(?:system|assistant|developer)\s*:|<\|?(?:system|im_start|im_end|assistant|user)\|?>|\[/?(?:INST|SYS)\]|<</?SYS>>`)},
	{KindToolCall, sentence, regexp.MustCompile(`(?i)</?tool_calls?>|\[TOOL_CALLS\]|"(?:function|tool)_?(?:call|name)"\s*:|\brequest_functionality\s*\(`)},
	{KindDelimiter, sentence, regexp.MustCompile(`(?im)^\s*(?:#{3,}|={5,}|-{5,})\s*(?:new |end of )?(?:instructions?|prompt|system)|\b(?:begin|end) (?:of )?(?:the )?(?:system prompt|instructions)\b`)},
	{KindAdaptive, sentence, regexp.MustCompile(`(?i)there are no (?:conflicting|contradicting) instructions`)},
	{KindStanding, sentence, regexp.MustCompile(`(?i)\b(?:from now on|for all future|in every later|always)\b.{0,60}\b(?:answer|respond|reply|include|add|b?cc|send|forward|copy|mention)\b|\bremember (?:this |that )?for (?:all )?(?:future|later|subsequent)\b|\b(?:in|for) (?:all|every) (?:future|later|subsequent) (?:sessions?|conversations?|chats?|queries|requests|emails?)\b`)},
	{KindDirects, sentence, regexp.MustCompile(`(?i)\b(?:fetch|forward|email|send|delete|remove|transfer|pay|wire)\b.{0,80}\b(?:to [\w.+-]+@[\w-]+\.[\w.]+|this email|both emails|the email you sent)`)},
}

// Find returns every instruction-like span in text, by start.
func Find(text string) []Finding {
	var out []Finding
	for _, p := range patterns {
		for _, m := range p.re.FindAllStringIndex(text, -1) {
			for m[0] < m[1] && isSpace(text[m[0]]) { // "(?:^|\n)" patterns
				m[0]++
			}
			out = append(out, Finding{Kind: p.kind, Start: m[0], End: m[1], Text: text[m[0]:m[1]], scope: p.scope})
		}
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return a.Start - b.Start })
	return out
}

// Kinds names the kinds of instruction-like text in s, in a fixed order,
// each once: the hub's dialog warning.
func Kinds(s string) []string {
	var out []string
	for _, p := range patterns {
		if !slices.Contains(out, p.kind) && p.re.MatchString(s) {
			out = append(out, p.kind)
		}
	}
	return out
}

// Mask replaces the instruction-like text in text with Marker and returns
// the spans it masked (widened as the package doc says; Kind lists the
// kinds found in each, Text what was removed).
func Mask(text string) (string, []Finding) {
	return Apply(text, Find(text))
}

// Apply masks the given findings of text (as Find or a Detector returns
// them); findings of a report-only kind, or outside text, are skipped.
func Apply(text string, fs []Finding) (string, []Finding) {
	type span struct {
		start, end int
		kinds      []string
	}
	var spans []span
	for _, f := range fs {
		if f.Kind == KindDirects || f.Start < 0 || f.End > len(text) || f.Start >= f.End {
			continue
		}
		start, end := sentenceStart(text, f.Start), sentenceEnd(text, f.End)
		if f.scope == paragraph {
			end = paragraphEnd(text, f.End)
		}
		spans = append(spans, span{start, end, []string{f.Kind}})
	}
	if len(spans) == 0 {
		return text, nil
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
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
	var out []Finding
	prev := 0
	for _, s := range merged {
		b.WriteString(text[prev:s.start])
		b.WriteString(Marker)
		out = append(out, Finding{Kind: strings.Join(s.kinds, ", "), Start: s.start, End: s.end, Text: text[s.start:s.end]})
		prev = s.end
	}
	b.WriteString(text[prev:])
	return b.String(), out
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func isStop(c byte) bool { return c == '.' || c == '!' || c == '?' }

// sentenceStart is where the sentence holding text[i] begins.
func sentenceStart(text string, i int) int {
	for j := i; j > 0; j-- {
		if text[j-1] == '\n' || (j >= 2 && isSpace(text[j-1]) && isStop(text[j-2])) {
			for j < i && (text[j] == ' ' || text[j] == '\t') {
				j++
			}
			return j
		}
	}
	return 0
}

// sentenceEnd is just past the end of the sentence holding text[i-1].
func sentenceEnd(text string, i int) int {
	if i > 0 && isStop(text[i-1]) && (i == len(text) || isSpace(text[i])) {
		return i // the span ends its sentence
	}
	for j := i; j < len(text); j++ {
		switch {
		case text[j] == '\n':
			return j
		case isStop(text[j]) && (j+1 == len(text) || isSpace(text[j+1])):
			return j + 1
		}
	}
	return len(text)
}

// paragraphEnd is the end of the paragraph holding text[i-1].
func paragraphEnd(text string, i int) int {
	if k := strings.Index(text[i:], "\n\n"); k >= 0 {
		return i + k
	}
	return len(text)
}

// Detector finds instruction-like spans in a text.
type Detector interface {
	Detect(ctx context.Context, text string) ([]Finding, error)
}

// Rules is the deterministic detector: Find.
type Rules struct{}

// Detect returns Find(text).
func (Rules) Detect(_ context.Context, text string) ([]Finding, error) { return Find(text), nil }

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
