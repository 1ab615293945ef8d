package guard

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// A rule is one way of writing instruction-like text, matched against the
// normalised text (normalize.go: lower case, one blank between words) at
// the places it can begin: a line start, a word, or a byte. Matching a
// rule anchored there, on a bounded window, is what keeps Find linear: a
// rule is tried only where the text holds its first word, and never reads
// more than reach bytes.
type rule struct {
	kind   string
	line   bool     // tried at the start of each line
	words  []string // tried where one of these words begins
	bytes  string   // tried at each of these bytes
	must   []string // if set, tried only where one of these begins
	near   []string // if set, tried only where one of these is within nearIn
	nearIn int      // bytes near looks at (reach if 0)
	reach  int      // bytes it reads at most (more than it can match), if not short
	expr   string   // what it matches, anchored where it is tried
	re     *regexp.Regexp
}

// short is the reach of a rule with no dot{0,n} in it: what it matches is
// a few words.
const short = 96

// Pieces of the rules. dot is '.' that crosses neither a line break nor
// a NUL (what a marker becomes, normalize.go).
const (
	dot    = `[^\n\x00]`
	lead   = `[ \t]?(?:>[ \t]?){0,8}(?:#{1,6}[ \t]?|[-*+][ \t]|\d{1,3}[.)][ \t]?)?` // quote, heading, list item
	deco   = "[*_~`]{0,3}"                                                          // markdown emphasis
	who    = `(?:system|assistant|developer)(?:[ \t](?:prompt|message|instructions?|note|override|update|mode))?`
	target = `(?:assistant|ai|model|chatbot|llm|agent|bot)`
)

// roles are the words a role marker holds; orders, what an override
// overrides.
var (
	roles  = []string{"system", "assistant", "developer"}
	orders = []string{"instruction", "rule", "prompt", "direction", "guideline", "directive", "guardrail"}
)

var rules = []rule{
	// addresses the assistant
	{kind: KindAddresses, words: []string{"dear", "hello", "hi", "hey", "greetings"},
		expr: `(?:dear|hello|hi|hey|greetings),?\s(?:the\s)?` + target + `\b`},
	{kind: KindAddresses, words: []string{"instruction", "instructions", "note", "notes", "message", "messages"},
		expr: `(?:instruction|note|message)s?\s(?:to|for)\sthe\s(?:assistant|ai|model|agent)\b`},
	{kind: KindAddresses, words: []string{"assistant", "ai", "model", "chatbot", "llm"},
		expr: `(?:assistant|ai|model|chatbot|llm)\s?[,:!]`},
	{kind: KindAddresses, words: []string{"the"}, must: []string{"the assistant "},
		expr: `the assistant (?:must|should|shall|needs to)\b`},
	{kind: KindAddresses, words: []string{"you"}, must: []string{"you are now ", "you now ", "you will now ", "you must ", "you shall "},
		expr: `you (?:are now|now|will now|must now|must|shall) (?:obey\b|act as (?:an? |the )?(?:ai|assistant|model|agent|system|admin|root|developer|dan)\b|(?:in|entering) (?:developer|dan|god|jailbreak|unrestricted) mode|jailbroken|unrestricted|free (?:from|of) (?:all |any |your )?(?:rules|restrictions|guidelines|filters))`},

	// overrides instructions
	{kind: KindOverrides, words: []string{"ignore", "ignoring", "disregard", "disregarding", "forget", "forgetting", "override", "overriding"}, reach: 320, near: orders,
		expr: `(?:ignor(?:e|ing)|disregard(?:ing)?|forget(?:ting)?|overrid(?:e|ing))\b` + dot + `{0,30}\b(?:previous|prior|above|earlier|all|any|your|preceding|former|system|original|initial)\b` + dot + `{0,20}\b(?:instructions?|rules?|prompts?|directions?|guidelines?|directives?|guardrails?)`},
	{kind: KindOverrides, words: []string{"do", "don", "never"}, must: []string{"do not ", "don't ", "dont ", "never "}, reach: 320, near: orders,
		expr: `(?:do not|don'?t|never) (?:follow|obey)\b` + dot + `{0,30}\b(?:previous|prior|original|earlier|above|your|system)\b` + dot + `{0,20}\b(?:instructions?|rules?|prompts?)`},

	// claims a role
	{kind: KindRole, line: true, near: roles, nearIn: 48, expr: lead + deco + `[ \t]?[\[(<]?` + who + `[\])>]?` + deco + `[ \t]?` + deco + `:`},
	{kind: KindRole, line: true, near: roles, nearIn: 48, expr: `[ \t]?(?:>[ \t]?){0,8}#{1,6}[ \t]?` + deco + who + deco + `[ \t]?:?[ \t]?\z`},
	{kind: KindRole, line: true, near: roles, nearIn: 48, expr: lead + deco + `[\[(]` + who + `[\])]`},
	{kind: KindRole, reach: 48, bytes: "[", near: []string{"inst", "sys", "developer", "assistant"}, expr: `\[/?(?:inst|sys|system|developer|assistant)(?:[ \t](?:prompt|message|instructions?|note|override))?\]`},
	{kind: KindRole, reach: 48, bytes: "<", near: []string{"sys", "developer", "im_", "assistant", "user", "endoftext", "begin_of", "header_id", "eot_id", "eom_id", "_turn"}, expr: `</?\|?(?:system|developer|im_start|im_end|im_sep|assistant|user|endoftext|begin_of_text|start_header_id|end_header_id|eot_id|eom_id)\|?>|</?(?:start_of_turn|end_of_turn)>|<</?sys>>`},
	{kind: KindRole, reach: 48, bytes: "(", expr: `\((?:system|developer|assistant)(?:[ \t](?:prompt|message))?\)\s?:`},
	{kind: KindRole, words: []string{"system", "developer"},
		expr: `(?:system|developer) (?:prompt|message|instructions?|override|update|note|mode)\s?:`},

	// tool-call syntax
	{kind: KindToolCall, reach: 48, bytes: "<", must: []string{"<tool", "</tool", "<function", "</function"}, expr: `</?(?:tool_calls?|function_calls?|tool_use)>`},
	{kind: KindToolCall, reach: 48, bytes: "[", expr: `\[tool_calls\]`},
	{kind: KindToolCall, reach: 48, bytes: `"`, must: []string{`"function`, `"tool`}, expr: `"(?:function|tool)_?(?:call|name)s?"\s?:`},
	{kind: KindToolCall, words: []string{"request_functionality"}, expr: `request_functionality\s?\(`},

	// prompt delimiter
	{kind: KindDelimiter, line: true, near: []string{"instruction", "prompt", "system"}, must: []string{"###", "=====", "-----", "*****", "~~~~~", " ###", " =====", " -----", " *****", " ~~~~~"}, expr: `[ \t]?(?:#{3,}|={5,}|-{5,}|\*{5,}|~{5,})[ \t]?(?:new |end of |begin |updated )?(?:instructions?|prompt|system)`},
	{kind: KindDelimiter, words: []string{"begin", "end"}, expr: `(?:begin|end) (?:of )?(?:the )?(?:system prompt|instructions)\b`},

	// adaptive phrase
	{kind: KindAdaptive, words: []string{"there"}, must: []string{"there are no ", "there is no "}, expr: `there (?:are|is) no (?:conflicting|contradicting|contradictory) instructions?`},

	// standing order
	{kind: KindStanding, words: []string{"from", "for", "in", "always", "remember"}, reach: 384,
		must: []string{"from now on", "for all ", "for every ", "in every ", "in all ", "always", "remember "},
		near: []string{"answer", "respond", "reply", "include", "add", "cc", "send", "forward", "copy", "mention", "future", "later", "subsequent"},
		expr: `(?:from now on|for all future|in every later|always)\b` + dot + `{0,60}\b(?:answer|respond|reply|include|add|b?cc|send|forward|copy|mention)\b|remember (?:this |that )?for (?:all )?(?:future|later|subsequent)\b|(?:in|for) (?:all|every) (?:future|later|subsequent) (?:sessions?|conversations?|chats?|queries|requests|emails?)\b`},

	// directs an action (reported, never masked)
	{kind: KindDirects, words: []string{"fetch", "forward", "email", "send", "delete", "remove", "transfer", "pay", "wire"}, reach: 640,
		near: []string{"@", "email"},
		expr: `(?:fetch|forward|email|send|delete|remove|transfer|pay|wire)\b` + dot + `{0,80}\b(?:to [\w.+-]{1,64}@[\w-]{1,63}\.[\w.]{1,63}|this email|both emails|the email you sent)`},
}

// squeezed finds an override written as one word ("ignoreallpreviousinstructions",
// or letters spaced out with no wider gap between the words); it is tried
// on long words that hold one of squeezedHints.
const squeezed = `(?:ignor(?:e|ing)|disregard|forget|overrid(?:e|ing))(?:all|any|your|the|my|previous|prior|above|earlier|preceding|system|original)+(?:instructions?|rules?|prompts?|directions?|guidelines?)`

var squeezedHints = []string{"ignor", "disregard", "forget", "overrid"}

const minSqueezed = 16

// ruleSet is the rules compiled, and where each is tried.
type ruleSet struct {
	rules     []rule
	lineRules []int
	wordRules map[string][]int
	byteRules [256][]int
	squeezed  *regexp.Regexp
}

// compiled builds the rule set on first use: compiling the rules takes
// milliseconds that a process which never reads an app's output (bulkhead
// version, doctor) should not pay at start.
var compiled = sync.OnceValue(func() *ruleSet {
	rs := &ruleSet{rules: slices.Clone(rules), wordRules: map[string][]int{}, squeezed: regexp.MustCompile(squeezed)}
	for i := range rs.rules {
		r := &rs.rules[i]
		r.re = regexp.MustCompile(`\A(?:` + r.expr + `)`)
		if r.reach == 0 {
			r.reach = short
		}
		if r.nearIn == 0 {
			r.nearIn = r.reach
		}
		if r.line {
			rs.lineRules = append(rs.lineRules, i)
		}
		for _, w := range r.words {
			rs.wordRules[w] = append(rs.wordRules[w], i)
		}
		for _, b := range []byte(r.bytes) {
			rs.byteRules[b] = append(rs.byteRules[b], i)
		}
	}
	return rs
})

// checkEvery is how many bytes match reads between looks at its context.
const checkEvery = 64 << 10

// match calls found for each span of s (normalised) that a rule matches;
// a rule's matches do not overlap, and none crosses a line break. It
// stops when ctx ends.
func match(ctx context.Context, s string, found func(kind string, start, end int)) error {
	rs := compiled()
	rules := rs.rules
	state := make([]ruleState, len(rules))
	for i := range state {
		state[i].occ = make([]int, len(rules[i].near))
		for k := range state[i].occ {
			state[i].occ[k] = -1
		}
	}
	try := func(ri, at int) {
		r, st := &rules[ri], &state[ri]
		if at < st.next || (r.must != nil && !hasAnyPrefix(s[at:], r.must)) {
			return
		}
		window := s[at:min(len(s), at+r.reach)]
		if nl := strings.IndexByte(window, '\n'); nl >= 0 {
			window = window[:nl]
		}
		if r.near != nil && !st.near(s, r.near, at, at+min(len(window), r.nearIn)) {
			return
		}
		m := r.re.FindStringIndex(window)
		if m == nil || m[1] == 0 {
			return
		}
		st.next = at + m[1]
		found(r.kind, at, at+m[1])
	}
	check := checkEvery
	for i := 0; i < len(s); {
		if i >= check {
			if err := ctx.Err(); err != nil {
				return err
			}
			check = i + checkEvery
		}
		if i == 0 || s[i-1] == '\n' {
			for _, ri := range rs.lineRules {
				try(ri, i)
			}
		}
		c := s[i]
		if !isWordByte(c) {
			for _, ri := range rs.byteRules[c] {
				try(ri, i)
			}
			i++
			continue
		}
		j := i + 1
		for j < len(s) && isWordByte(s[j]) {
			j++
		}
		w := s[i:j]
		for _, ri := range rs.wordRules[w] {
			try(ri, i)
		}
		if len(w) >= minSqueezed && containsAny(w, squeezedHints) {
			for _, m := range rs.squeezed.FindAllStringIndex(w, -1) {
				found(KindOverrides, i+m[0], i+m[1])
			}
		}
		i = j
	}
	return ctx.Err()
}

// ruleState is what match keeps of one rule as it reads.
type ruleState struct {
	next int   // where the rule may match again
	occ  []int // where each of its near words next occurs (len(s): nowhere)
}

// near says whether one of words occurs within s[at:to]. The tries of a
// rule come in order, so each word's next place is looked for once per
// place: reading stays linear however often the rule is tried.
func (st *ruleState) near(s string, words []string, at, to int) bool {
	for k, w := range words {
		if st.occ[k] < at {
			if i := strings.Index(s[at:], w); i >= 0 {
				st.occ[k] = at + i
			} else {
				st.occ[k] = len(s)
			}
		}
		if st.occ[k]+len(w) <= to {
			return true
		}
	}
	return false
}

// isWordByte is a byte of a word as the rules' \b sees it.
func isWordByte(c byte) bool {
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || (c >= 'A' && c <= 'Z')
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}
