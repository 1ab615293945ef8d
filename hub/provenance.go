package hub

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// ledger is what the hub knows, during one turn, of where values came
// from: the user's words, what the hub's planner wrote (it reads only the
// user's words), values the user let flow across a bulkhead (data and
// collab answers), and everything an app authored (its outputs, its
// errors, its description, its memory of earlier turns). Consequential
// requests are traced against it value by value (trace), so a dialog can
// say, truthfully, where each value came from. It is safe for concurrent
// use: spokes of one turn record into it at once.
type ledger struct {
	mu      sync.Mutex
	origins []*origin
	size    int // bytes of text held, bounded by maxLedger
}

// origin is one source of values: its texts (normalised) and the numbers
// in them.
type origin struct {
	source string // permissions.Provenance* or "<app>.<function>" / "<app>"
	via    string // for allowed values: where they came from before
	rank   int    // match order: user, plan, allowed, apps
	texts  []string
	nums   map[string]bool
}

// Ranks of origins: a value found in several is attributed to the most
// trusted (a value the user typed stays the user's even when an app
// repeats it).
const (
	rankUser = iota
	rankPlan
	rankAllowed
	rankApp
)

// maxLedger bounds the text one turn's ledger holds; what comes after is
// not traced (its values read as unknown, which only adds warnings).
const maxLedger = 4 << 20

func newLedger() *ledger { return &ledger{} }

// user records the user's own words.
func (l *ledger) user(text string) { l.add(permissions.ProvenanceUser, "", rankUser, text) }

// plan records what the hub's planner wrote for a step.
func (l *ledger) plan(text string) { l.add(permissions.ProvenancePlan, "", rankPlan, text) }

// allowed records values the user let flow (a data or collab answer);
// via is where they came from ("<app>.<function>"). What the user allowed
// is data, not directions: a value that is a whole typed field of it (a
// contact's address, a fare) is "allowed", but one found only inside a
// longer text of it (an address in a document's body) is attributed to
// via — the data chose it, not the user.
func (l *ledger) allowed(via string, value json.RawMessage) {
	l.add(permissions.ProvenanceAllowed, via, rankAllowed, leafTexts(value)...)
	l.add(via, "", rankApp, leafTexts(value)...)
}

// app records what an app authored: a call's output (source
// "<app>.<function>") or text outside a call ("<app>").
func (l *ledger) app(source string, value json.RawMessage) {
	l.add(source, "", rankApp, leafTexts(value)...)
}

// appText records app-authored text that is not JSON.
func (l *ledger) appText(source, text string) { l.add(source, "", rankApp, text) }

func (l *ledger) add(source, via string, rank int, texts ...string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var o *origin
	for _, x := range l.origins {
		if x.source == source && x.via == via {
			o = x
			break
		}
	}
	if o == nil {
		o = &origin{source: source, via: via, rank: rank, nums: map[string]bool{}}
		l.origins = append(l.origins, o)
		sort.SliceStable(l.origins, func(i, j int) bool { return l.origins[i].rank < l.origins[j].rank })
	}
	for _, t := range texts {
		n := normValue(t)
		if n == "" || l.size+len(n) > maxLedger {
			continue
		}
		l.size += len(n)
		o.texts = append(o.texts, n)
		if rank == rankAllowed {
			if num, ok := numberValue(n); ok {
				o.nums[num] = true // a whole numeric field
			}
			continue
		}
		for _, num := range numbersIn(n) {
			o.nums[num] = true
		}
	}
}

// maxTraced bounds the values one request's provenance lists.
const maxTraced = 64

// trace says where each value of args came from; keys names the decisive
// top-level arguments (apps.KeyArgs), marked Key.
func (l *ledger) trace(args json.RawMessage, keys []string) []permissions.Provenance {
	var v any
	if len(args) == 0 || json.Unmarshal(args, &v) != nil {
		return nil
	}
	var out []permissions.Provenance
	walkLeaves(v, "", func(path, top string, leaf any) {
		if len(out) >= maxTraced {
			return
		}
		source, via := l.sourceOf(leaf)
		if source == "" {
			return
		}
		out = append(out, permissions.Provenance{Path: path, Source: source, Via: via, Key: slices.Contains(keys, top)})
	})
	return out
}

// walkLeaves calls fn for every string and number in v, with its path
// ("to", "items[0].id") and the top-level property it sits under.
func walkLeaves(v any, path string, fn func(path, top string, leaf any)) {
	var walk func(v any, path, top string)
	walk = func(v any, path, top string) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				p, tp := k, top
				if path != "" {
					p = path + "." + k
				} else {
					tp = k
				}
				walk(t[k], p, tp)
			}
		case []any:
			for i, x := range t {
				walk(x, fmt.Sprintf("%s[%d]", path, i), top)
			}
		case string, float64:
			fn(path, top, t)
		}
	}
	walk(v, path, "")
}

// sourceOf attributes one value: the most trusted origin that holds it as
// a whole value; else, for a composite text, the least trusted origin
// whose text it embeds; else unknown.
func (l *ledger) sourceOf(leaf any) (source, via string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch t := leaf.(type) {
	case float64:
		num := canonNumber(t)
		for _, o := range l.origins {
			if o.nums[num] {
				return o.source, o.via
			}
		}
		return permissions.ProvenanceUnknown, ""
	case string:
		n := normValue(t)
		if n == "" {
			return "", ""
		}
		if num, ok := numberValue(n); ok {
			for _, o := range l.origins {
				if o.nums[num] {
					return o.source, o.via
				}
			}
		}
		for _, o := range l.origins {
			for _, text := range o.texts {
				if o.rank == rankAllowed && text != n {
					continue // only a whole field of allowed data is allowed
				}
				if containsValue(text, n) {
					return o.source, o.via
				}
			}
		}
		// Not found whole: a text a model composed. It is attributed to
		// what it embeds, least trusted first (an app's address inside a
		// body the model wrote is that app's value).
		for i := len(l.origins) - 1; i >= 0; i-- {
			o := l.origins[i]
			for _, text := range o.texts {
				if embeds(n, text) {
					return o.source, o.via
				}
			}
		}
		return permissions.ProvenanceUnknown, ""
	}
	return "", ""
}

// embeds reports whether a composed value n carries text of an origin: a
// whole origin text of 16 or more characters, or an address, URL or path
// found in that text.
func embeds(n, text string) bool {
	if len(text) >= 16 && strings.Contains(n, text) {
		return true
	}
	for _, a := range reAtom.FindAllString(text, 8) {
		if containsValue(n, normValue(a)) {
			return true
		}
	}
	return false
}

// reAtom finds values that decide where something goes: e-mail
// addresses, URLs and paths.
var reAtom = regexp.MustCompile(`[\w.+-]+@[\w-]+(?:\.[\w-]+)+|[a-z][a-z0-9+.-]*://[^\s"'<>]+|(?:~|\.{1,2})?/[\w.@%+~-]+(?:/[\w.@%+~-]+)+`)

// normValue is a value as provenance compares it: lower case, spaces
// collapsed, surrounding space and quotes trimmed, a mailto: or ./
// prefix dropped.
func normValue(s string) string {
	s = strings.ToLower(strings.Join(strings.Fields(s), " "))
	s = strings.Trim(s, " \"'`")
	s = strings.TrimPrefix(s, "mailto:")
	s = strings.TrimPrefix(s, "./")
	return s
}

// containsValue reports whether text holds v as a whole value: at an
// occurrence, neither neighbour continues a word, an address, a URL or a
// path ("b@example.com" is not in "bob@example.com"); a sentence's
// closing punctuation after it does not count as continuing it.
func containsValue(text, v string) bool {
	if v == "" {
		return false
	}
	for off := 0; off <= len(text)-len(v); {
		i := strings.Index(text[off:], v)
		if i < 0 {
			return false
		}
		start, end := off+i, off+i+len(v)
		if boundaryBefore(text, start, v) && boundaryAfter(text, end, v) {
			return true
		}
		_, size := utf8.DecodeRuneInString(text[start:])
		off = start + size
	}
	return false
}

// valueRune reports whether r can be part of a value: a letter, a digit,
// or a character of addresses, URLs and paths.
func valueRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || strings.ContainsRune("@_-+/%~#=&", r)
}

func boundaryBefore(text string, start int, v string) bool {
	if start == 0 {
		return true
	}
	first, _ := utf8.DecodeRuneInString(v)
	if !valueRune(first) && first != '.' {
		return true
	}
	r, _ := utf8.DecodeLastRuneInString(text[:start])
	if r == '.' || r == ':' {
		// "x.bob@example.com", "https:" before "//...": the value goes on.
		return start < 2 || !valueRune(lastRune(text[:start-1]))
	}
	return !valueRune(r)
}

func boundaryAfter(text string, end int, v string) bool {
	if end == len(text) {
		return true
	}
	last, _ := utf8.DecodeLastRuneInString(v)
	if !valueRune(last) {
		return true
	}
	r, size := utf8.DecodeRuneInString(text[end:])
	if r == '.' || r == ':' || r == ',' || r == ';' || r == '!' || r == '?' {
		// Closing punctuation ends the value; a dot or colon that goes on
		// into more of it ("bob@example.com.evil") does not.
		rest := text[end+size:]
		return rest == "" || !valueRune(firstRune(rest))
	}
	return !valueRune(r)
}

func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }
func lastRune(s string) rune  { r, _ := utf8.DecodeLastRuneInString(s); return r }

// reNumber finds numbers in text: "85", "$1,250.50", "-3", "12.5".
var reNumber = regexp.MustCompile(`-?\d[\d,]*(?:\.\d+)?`)

// numbersIn lists the canonical form of every number in a text.
func numbersIn(s string) []string {
	var out []string
	for _, m := range reNumber.FindAllString(s, 256) {
		if num, ok := numberValue(m); ok {
			out = append(out, num)
		}
	}
	return out
}

// numberValue reads s as one number ("$85.00", "1,250") in canonical form.
func numberValue(s string) (string, bool) {
	s = strings.TrimSpace(strings.TrimLeft(s, "$€£¥"))
	s = strings.ReplaceAll(s, ",", "")
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return "", false
	}
	return canonNumber(f), true
}

func canonNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// leafTexts lists every string and number in a JSON value as text; a
// value that is not JSON is one text.
func leafTexts(value json.RawMessage) []string {
	var v any
	if json.Unmarshal(value, &v) != nil {
		return []string{string(value)}
	}
	var out []string
	walkLeaves(v, "", func(_, _ string, leaf any) {
		switch t := leaf.(type) {
		case string:
			out = append(out, t)
		case float64:
			out = append(out, canonNumber(t))
		}
	})
	return out
}

// describeSource says in words where a value came from, for a dialog.
func describeSource(p permissions.Provenance) string {
	switch p.Source {
	case permissions.ProvenanceUser:
		return "typed by you"
	case permissions.ProvenancePlan:
		return "from the hub's plan of your request"
	case permissions.ProvenanceAllowed:
		if p.Via != "" {
			return "shared with your permission, from " + p.Via
		}
		return "shared with your permission"
	case permissions.ProvenanceUnknown:
		return "written by a model, from nothing you typed"
	}
	return "from " + p.Source
}
