package hub

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// instructionPatterns spot text that addresses a model instead of
// describing the world: imperatives to "the assistant", overrides, role and
// system markers, tool-call syntax and prompt delimiters.
var instructionPatterns = []struct {
	name string
	re   *regexp.Regexp
}{
	{"addresses the assistant", regexp.MustCompile(`(?i)\b(?:dear |hello |hi )?(?:assistant|ai|model|chatbot|llm)\s*[,:!]|\b(?:instruction|note|message)s? to the (?:assistant|ai|model)\b|\bthe assistant (?:must|should|shall|needs to)\b`)},
	{"overrides instructions", regexp.MustCompile(`(?i)\b(?:ignore|disregard|forget|override)\b.{0,30}\b(?:previous|prior|above|earlier|all|any|your)\b.{0,20}\b(?:instructions?|rules?|prompts?|directions?)`)},
	{"claims a role", regexp.MustCompile(`(?i)(?:^|\n)\s*(?:system|assistant|developer)\s*:|<\|?(?:system|im_start|im_end|assistant|user)\|?>|\[/?(?:INST|SYS)\]`)},
	{"tool-call syntax", regexp.MustCompile(`(?i)<tool_call>|"(?:function|tool)_?(?:call|name)"\s*:|\brequest_functionality\s*\(`)},
	{"prompt delimiter", regexp.MustCompile(`(?m)^\s*(?:#{3,}|={5,}|-{5,})\s*(?:new |end of )?(?:instructions?|prompt|system)`)},
	{"adaptive phrase", regexp.MustCompile(`(?i)there are no (?:conflicting|contradicting) instructions`)},
	{"standing order", regexp.MustCompile(`(?i)\b(?:from now on|for all future|in every later|always)\b.{0,60}\b(?:answer|respond|reply|include|add|cc|send|forward)\b`)},
	{"directs an action", regexp.MustCompile(`(?i)\b(?:fetch|forward|email|send|delete|remove|transfer|pay|wire)\b.{0,80}\b(?:to [\w.+-]+@[\w-]+\.[\w.]+|this email|both emails|the email you sent)`)},
}

// instructionLike names the kinds of instruction-like text found in s.
func instructionLike(s string) []string {
	var out []string
	for _, p := range instructionPatterns {
		if p.re.MatchString(s) {
			out = append(out, p.name)
		}
	}
	return out
}

// foreignValues lists string values in a JSON value that the user did not
// type: an address, a path or a sum that came from somewhere else.
func foreignValues(args json.RawMessage, query string) []string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return nil
	}
	q := strings.ToLower(query)
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(k, t[k])
			}
		case []any:
			for _, x := range t {
				walk(key, x)
			}
		case string:
			s := strings.TrimSpace(t)
			if len(s) >= 3 && len(s) <= 200 && !strings.Contains(q, strings.ToLower(s)) {
				out = append(out, fmt.Sprintf("%s=%q", key, s))
			}
		}
	}
	walk("", v)
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("and %d more", len(out)-4))
	}
	return out
}

// assessment is the hub's warning line for a dialog.
type assessment struct {
	expected     bool
	irreversible bool
	labels       []string // labels the receiver is not cleared for
	receiver     string
	instructions []string
	foreign      []string
	extra        string
}

func (a assessment) String() string {
	var parts []string
	if a.expected {
		parts = append(parts, "expected by the plan")
	} else {
		parts = append(parts, "NOT expected by the plan")
	}
	if a.irreversible {
		parts = append(parts, "cannot be undone")
	}
	if len(a.labels) > 0 {
		parts = append(parts, fmt.Sprintf("carries %s data, which %s is not cleared for", strings.Join(a.labels, ", "), a.receiver))
	}
	if len(a.instructions) > 0 {
		parts = append(parts, "instruction-like content ("+strings.Join(a.instructions, ", ")+")")
	}
	if len(a.foreign) > 0 {
		parts = append(parts, "values you did not type: "+strings.Join(a.foreign, ", "))
	}
	if a.extra != "" {
		parts = append(parts, a.extra)
	}
	return strings.Join(parts, "; ")
}

// uncleared returns the labels not covered by a clearance.
func uncleared(labels, clearance []string) []string {
	var out []string
	for _, l := range labels {
		ok := false
		for _, c := range clearance {
			if c == l {
				ok = true
			}
		}
		if !ok {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}
