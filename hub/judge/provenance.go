package judge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

// ledger is what the hub knows, during one turn, of where values came
// from: the user's words (this request, and the chat's earlier ones), what
// the hub's planner wrote for each step (it reads only the user's words),
// values the user let flow to an app (data and collab answers), and
// everything an app authored (its outputs, its errors, its description,
// its memory of earlier turns). Consequential requests are traced against
// it value by value (trace), so a dialog can say, truthfully, where each
// value came from. Whether a decisive value is the user's own for a step
// is not the ledger's to say: only a binding of the plan makes it that
// (bind.go). It is safe for concurrent use: spokes of one turn record
// into it at once.
//
// Values are matched whole and by equality's rules (equal.go): an
// address, a URL or a path is held by an origin when one of its texts
// holds the same value of its kind (atomKey: an address's local part
// and a URL's path as written, a domain by IDNA, a path by its bytes);
// any other string when one of its texts contains it between value
// boundaries ("b@example.com" is not in "bob@example.com"), as written or
// in the same PRECIS (NFC) form, runs of spaces aside; a value that is an
// address, a URL or a path with something around it (a sentence's dot,
// quotes, "mailto:") is none the user typed. A JSON number matches a
// number that stands as a whole token of a text ("2024" is not in
// "2024-05-12"), a string never matches numerically ("020" is not "20").
// A value no origin holds whole is composed: it is attributed to an app
// whose text it embeds, else unknown — never to the user.
type Ledger struct {
	mu      sync.Mutex
	origins []*origin
	size    int // bytes of text held, bounded by maxLedger
}

// origin is one source of values.
type origin struct {
	source string // permissions.Provenance* or "<app>.<function>" / "<app>"
	via    string // for allowed values: where they came from before
	rank   int    // match order: user, plan, allowed, apps
	// scope narrows where the origin counts: for the user, "query" (this
	// request) or "history"; for the plan, the step id; for allowed
	// values, the app they were allowed to.
	scope string
	texts []string
	atoms map[string]string // addresses, URLs and paths in the texts: atomKey -> as first written
	nums  map[string]bool   // numbers standing as whole tokens (or whole JSON numbers)
	// wholeOnly: only whole fields count (allowed data: a value found
	// inside one of its texts is the data's choice, not the user's).
	wholeOnly bool
	// requests are this request's words as typed, line breaks and all,
	// cut into tokens (reading.go): a value found there is the user's
	// only where they leave it one reading (doubt).
	requests []*parsed
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

// Scopes of the user's words.
const (
	ScopeQuery   = "query"
	ScopeHistory = "history"
)

// maxLedger bounds the text one turn's ledger holds; what comes after is
// not traced (its values read as unknown, which only adds warnings).
const maxLedger = 4 << 20

func NewLedger() *Ledger { return &Ledger{} }

// user records the user's own words: this request (ScopeQuery) or an
// earlier one of the chat (ScopeHistory, attributed as such: words of an
// earlier turn are not this request's).
func (l *Ledger) User(scope, text string) {
	source := permissions.ProvenanceUser
	if scope == ScopeHistory {
		source = permissions.ProvenanceHistory
	}
	l.add(source, "", scope, rankUser, text)
}

// plan records what the hub's planner wrote for a step.
func (l *Ledger) Plan(step, text string) {
	l.add(permissions.ProvenancePlan, "", step, rankPlan, text)
}

// allowed records values the user let flow to app (a data or collab
// answer); via is where they came from ("<app>.<function>"). They count
// as allowed only for that app; for anyone else, and inside their texts,
// they are via's.
func (l *Ledger) Allowed(app, via string, value json.RawMessage) {
	texts, nums := leafValues(value)
	l.addValues(permissions.ProvenanceAllowed, via, app, rankAllowed, texts, nums)
	l.addValues(via, "", "", rankApp, texts, nums)
}

// app records what an app authored: a call's output (source
// "<app>.<function>").
func (l *Ledger) App(source string, value json.RawMessage) {
	texts, nums := leafValues(value)
	l.addValues(source, "", "", rankApp, texts, nums)
}

// appText records app-authored text that is not JSON: an error, a
// description, a summary.
func (l *Ledger) AppText(source, text string) {
	l.add(source, "", "", rankApp, text)
	if strings.Contains(text, `\`) {
		// A model reads JSON escapes in it as the characters they stand for.
		if u := unescapeJSON(text); u != text {
			l.add(source, "", "", rankApp, u)
		}
	}
}

func (l *Ledger) add(source, via, scope string, rank int, texts ...string) {
	l.addValues(source, via, scope, rank, texts, nil)
}

func (l *Ledger) addValues(source, via, scope string, rank int, texts []string, nums []string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	var o *origin
	for _, x := range l.origins {
		if x.source == source && x.via == via && x.scope == scope {
			o = x
			break
		}
	}
	if o == nil {
		o = &origin{source: source, via: via, scope: scope, rank: rank, atoms: map[string]string{}, nums: map[string]bool{}, wholeOnly: rank == rankAllowed}
		l.origins = append(l.origins, o)
		sort.SliceStable(l.origins, func(i, j int) bool { return l.origins[i].rank < l.origins[j].rank })
	}
	for _, n := range nums {
		o.nums[n] = true
	}
	for _, t := range texts {
		n := NormSpace(t)
		if n == "" || l.size+len(n) > maxLedger {
			continue
		}
		l.size += len(n)
		o.texts = append(o.texts, n)
		if rank == rankUser && scope == ScopeQuery {
			o.requests = append(o.requests, parseRequest(t))
		}
		if k, ok := atomKey(n); ok {
			o.addAtom(k, n) // the whole text is an address, a URL or a path
		}
		if o.wholeOnly {
			continue
		}
		for _, a := range atomsOf(n) { // relative paths with a slash too
			if k, ok := atomKey(a); ok {
				o.addAtom(k, a)
			}
		}
		for _, num := range TokenNumbers(n) {
			o.nums[num] = true
		}
	}
}

func (o *origin) addAtom(key, written string) {
	if _, ok := o.atoms[key]; !ok {
		o.atoms[key] = written
	}
}

// holds reports whether o holds leaf (a string or a float64) whole.
func (o *origin) holds(leaf any) bool {
	switch t := leaf.(type) {
	case float64:
		return o.nums[CanonNumber(t)]
	case string:
		if NormValue(t) == "" {
			return false
		}
		if k, ok := atomKey(t); ok {
			_, held := o.atoms[k]
			return held
		}
		if wrapsAtom(t) {
			return false // "bob@example.com.", "mailto:bob@example.com", " /etc/passwd"
		}
		n := NormSpace(t)
		for _, text := range o.texts {
			if sameString(text, n) || !o.wholeOnly && textIn(text, n) {
				return true
			}
		}
	}
	return false
}

// doubt says why the request's words leave leaf no single reading for
// arg (doubted true), for the origin of this request's words; a value
// one of its requests reads is the user's.
func (o *origin) doubt(leaf any, arg string) (string, bool) {
	if len(o.requests) == 0 {
		return "", false
	}
	var v string
	switch t := leaf.(type) {
	case string:
		v = t
	case float64:
		v = CanonNumber(t)
	default:
		return "", false
	}
	first := ""
	for _, p := range o.requests {
		ok, why, sentence := p.reading(v, arg)
		if ok {
			return "", false
		}
		if first == "" {
			first = fmt.Sprintf("%s — you wrote “%s”", why, sentence)
		}
	}
	return first, true
}

// embedded reports whether a composed value n carries text of o: a whole
// text of 16 or more characters, or one of its addresses, URLs or paths.
func (o *origin) embedded(n string) bool {
	for _, text := range o.texts {
		if len(text) >= 16 && strings.Contains(n, text) {
			return true
		}
	}
	for _, a := range reAtoms(n, 16) {
		if k, ok := atomKey(a); ok && o.atoms[k] != "" {
			return true
		}
	}
	return false
}

// maxTraced bounds the values one request's provenance lists besides its
// decisive ones, which are always all traced.
const maxTraced = 64

// trace says where each value of args came from, as app (the receiver of
// allowed values) would be told: decisive arguments (keys, top-level
// names) first and always whole, then the others up to maxTraced.
// Booleans and nulls are traced too: they read as the schema's default
// (params) or as a model's choice.
func (l *Ledger) Trace(args json.RawMessage, keys []string, app string, params json.RawMessage) []permissions.Provenance {
	var v any
	if len(args) == 0 || json.Unmarshal(args, &v) != nil {
		return nil
	}
	defaults := SchemaDefaults(params)
	var keyed, rest []permissions.Provenance
	WalkLeaves(v, "", func(path, top string, leaf any) {
		key := containsString(keys, top)
		if !key && len(rest) >= maxTraced {
			return
		}
		var p permissions.Provenance
		switch leaf.(type) {
		case bool, nil:
			p = permissions.Provenance{Path: path, Source: permissions.ProvenanceUnknown}
			if d, ok := defaults[top]; ok && path == top && JSONEqual(d, leaf) {
				p.Source = permissions.ProvenanceDefault
			}
		default:
			arg := "" // a value that is not decisive may be the content's
			if key {
				arg = top
			}
			source, via := l.SourceFor(leaf, arg, app)
			if source == "" {
				return
			}
			p = permissions.Provenance{Path: path, Source: source, Via: via}
			if str, ok := leaf.(string); ok {
				p.Shown = Shown(str)
				if typed := l.LookAlike(str); typed != "" {
					p.Shown = strings.TrimSpace(p.Shown + "; not " + clip(typed, 80) + ", which you typed")
				}
			}
		}
		if key {
			p.Key = true
			keyed = append(keyed, p)
		} else {
			rest = append(rest, p)
		}
	})
	return append(keyed, rest...)
}

// SourceOf attributes one value whose argument the caller does not name
// (SourceFor with arg "": it may be the words of the content).
func (l *Ledger) SourceOf(leaf any, app string) (source, via string) {
	return l.SourceFor(leaf, "", app)
}

// SourceFor attributes one value of argument arg: the most trusted
// origin that holds it whole (allowed values count only for the app they
// went to); else, for a composed text, the least trusted app origin
// whose text it embeds; else unknown. A value this request holds, but
// with no single reading there for arg (reading.go: the words rule it
// out, ask about it, quote it, give another of its kind), is not typed
// by the user: it is doubted, and via says why, with the user's own
// sentence.
func (l *Ledger) SourceFor(leaf any, arg, app string) (source, via string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if s, ok := leaf.(string); ok && NormValue(s) == "" {
		return "", ""
	}
	for _, o := range l.origins {
		if o.rank == rankAllowed && o.scope != app {
			continue
		}
		if o.holds(leaf) {
			if why, doubted := o.doubt(leaf, arg); doubted {
				return permissions.ProvenanceDoubted, why
			}
			return o.source, o.via
		}
	}
	if s, ok := leaf.(string); ok {
		n := NormSpace(s)
		for i := len(l.origins) - 1; i >= 0; i-- {
			if o := l.origins[i]; o.rank == rankApp && o.embedded(n) {
				return o.source, ""
			}
		}
	}
	return permissions.ProvenanceUnknown, ""
}

// untypedAtoms lists the addresses, URLs and paths inside a text value
// that are not in this request or the plan's texts (an earlier turn's
// words do not count, nor words of this request that rule the value out
// or otherwise leave it no single reading: reading.go), with where each
// came from: what a message, a file or a command would carry to a place
// the user never named.
//
// An atom outside plain ASCII is shown as Shown shows it, and, where it
// differs from one the user typed only in such characters, says so.
func (l *Ledger) UntypedAtoms(s, app string) []string {
	var out []string
	for _, a := range reAtoms(NormSpace(s), 16) {
		k, ok := atomKey(a)
		if !ok {
			continue
		}
		typed := false
		l.mu.Lock()
		for _, o := range l.origins {
			if (o.rank == rankUser && o.scope == ScopeQuery || o.rank == rankPlan) && o.atoms[k] != "" {
				if _, doubted := o.doubt(a, ""); !doubted {
					typed = true
				}
			}
		}
		l.mu.Unlock()
		if !typed {
			src, via := l.SourceOf(a, app)
			if src != permissions.ProvenanceDoubted {
				via = "" // only a doubt's reason is said here
			}
			out = append(out, fmt.Sprintf("%s (%s%s)", ValueWords(a, 120), DescribeSource(permissions.Provenance{Source: src, Via: via}), l.lookAlikeWords(a)))
		}
	}
	return out
}

// WalkLeaves calls fn for every string, number, boolean and null in v,
// with its path ("to", "items[0].id") and the top-level property it sits
// under.
func WalkLeaves(v any, path string, fn func(path, top string, leaf any)) {
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
		default:
			fn(path, top, t)
		}
	}
	walk(v, path, "")
}

// reAtom finds values that decide where something goes: e-mail
// addresses, URLs and paths (any script's letters).
var reAtom = lazyRegexp(`[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+|[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s"'<>]+|(?:~|\.{1,2})?/[\p{L}\p{N}._@%+~\-]+(?:/[\p{L}\p{N}._@%+~\-]+)*`)

var (
	reEmail = lazyRegexp(`^[\p{L}\p{N}._%+\-]+@[\p{L}\p{N}\-]+(?:\.[\p{L}\p{N}\-]+)+$`)
	reURL   = lazyRegexp(`^([a-zA-Z][a-zA-Z0-9+.\-]*://)([^/?#\s]*)(.*)$`)
	rePath  = lazyRegexp(`^(?:~|\.{1,2})?/[^\s]*$|^[\p{L}\p{N}._\-]+(?:/[\p{L}\p{N}._\-]+)+$`)
)

// atomKey is the one form of an address, a URL or a path that equality
// compares (equal.go): two atoms have one key exactly when SameValue
// calls them equal — an address's local part and a URL's path, query and
// fragment as written, a domain by IDNA (domainKey), a path by its bytes.
// Nothing around the value is trimmed (a trailing dot, a slash, a "./"
// are the value's own: atomsOf takes a sentence's punctuation off what
// it finds in a text); ok is false for anything else.
func atomKey(s string) (string, bool) {
	if k, ok := mailKey(s); ok {
		return "mail:" + k, true
	}
	if k, ok := urlKey(s); ok {
		return "url:" + k, true
	}
	if rePath().MatchString(s) {
		return "path:" + s, true
	}
	return "", false
}

// wrapsAtom reports whether s is an address, a URL or a path with
// something around it — spaces, quotes, brackets, a sentence's closing
// punctuation, a mailto: — and so not that value.
func wrapsAtom(s string) bool {
	t := s
	for {
		u := strings.TrimSpace(t)
		u = strings.TrimPrefix(u, "mailto:")
		u = strings.TrimLeft(u, openers)
		u = trimAtom(u)
		if u == t {
			break
		}
		t = u
	}
	if t == s {
		return false
	}
	_, ok := atomKey(t)
	return ok
}

// openers and closers are the quotes and brackets around a value.
const (
	openers = "\"'`“‘«([{<"
	closers = "\"'`”’»]}>"
)

// trimAtom takes off what follows an atom in a sentence: its closing
// punctuation, quotes and brackets (a closing parenthesis only where the
// atom opens none: a URL's "(bar)" is its own).
func trimAtom(a string) string {
	for {
		b := strings.TrimRight(a, ".,;:!?"+closers)
		if strings.HasSuffix(b, ")") && strings.Count(b, ")") > strings.Count(b, "(") {
			b = b[:len(b)-1]
		}
		if b == a {
			return a
		}
		a = b
	}
}

// reAtoms finds at most n addresses, URLs and paths in a text, as its
// writer meant them: a sentence's punctuation after one is not part of
// it, and a path is found from the start of its word (the "/plan.md" of
// docs/plan.md is not one).
func reAtoms(text string, n int) []string {
	var out []string
	for _, ix := range reAtom().FindAllStringIndex(text, n) {
		start, a := ix[0], text[ix[0]:ix[1]]
		if !reEmail().MatchString(a) && !reURL().MatchString(a) {
			for start > 0 {
				r, size := utf8.DecodeLastRuneInString(text[:start])
				if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune("._-~", r) {
					break
				}
				start -= size
			}
		}
		out = append(out, trimAtom(text[start:ix[1]]))
	}
	return out
}

// NormSpace collapses runs of spaces.
func NormSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// NormValue is a value with spaces collapsed, surrounding space and
// quotes trimmed, a mailto: or ./ prefix dropped: what decides whether a
// value is empty, and what a claim or an exclusion reads. Never what
// decides equality (equal.go): "./docs/plan.md" is not docs/plan.md.
func NormValue(s string) string {
	s = strings.Trim(NormSpace(s), " \"'`")
	s = strings.TrimPrefix(s, "mailto:")
	s = strings.TrimPrefix(s, "./")
	return s
}

// ContainsValue reports whether text holds v as a whole value: at an
// occurrence, neither neighbour continues a word, an address, a URL or a
// path ("b@example.com" is not in "bob@example.com"); a sentence's
// closing punctuation after it does not count as continuing it.
func ContainsValue(text, v string) bool {
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

// textIn reports whether text holds v whole, as written or — for a value
// that compares as text (textForm) — in the same PRECIS (NFC) form: the
// containment that agrees with SameValue. A text with a character NFC
// replaces on its own (U+212A for K) is searched as written only.
func textIn(text, v string) bool {
	if ContainsValue(text, v) {
		return true
	}
	if isASCII(v) || norm.NFC.IsNormalString(text) && norm.NFC.IsNormalString(v) {
		return false
	}
	f, ok := textForm(v)
	if !ok || !composable(text) {
		return false
	}
	return ContainsValue(norm.NFC.String(text), f)
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
	if r == '.' || r == ':' || r == ',' {
		// "x.bob@example.com", "12,50": the value goes on.
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
		// Closing punctuation ends the value; a dot, colon or comma that
		// goes on into more of it ("bob@example.com.evil", "12,50") does
		// not.
		rest := text[end+size:]
		return rest == "" || !valueRune(firstRune(rest))
	}
	return !valueRune(r)
}

func firstRune(s string) rune { r, _ := utf8.DecodeRuneInString(s); return r }
func lastRune(s string) rune  { r, _ := utf8.DecodeLastRuneInString(s); return r }

// reToken splits a text into tokens for numbers: runs without spaces or
// brackets and quotes.
var reToken = lazyRegexp(`[^\s()\[\]{}<>"'“”‘’]+`)

// reWholeNumber is a token that is one number: "85", "$1,250.50", "-3",
// "12.5", "85€", "31%"; thousands separated by commas in groups of three.
var reWholeNumber = lazyRegexp(`^[$€£¥]?(-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)[€$£¥%]?$`)

// TokenNumbers lists the canonical form of every number that stands as a
// whole token of a text ("2024" is not one in "2024-05-12", nor "3" in
// "Q3").
func TokenNumbers(s string) []string {
	var out []string
	for _, tok := range reToken().FindAllString(s, 512) {
		tok = strings.TrimRight(tok, ".,;:!?")
		m := reWholeNumber().FindStringSubmatch(tok)
		if m == nil {
			continue
		}
		if f, err := strconv.ParseFloat(strings.ReplaceAll(m[1], ",", ""), 64); err == nil {
			out = append(out, CanonNumber(f))
		}
	}
	return out
}

func CanonNumber(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// leafValues lists the strings of a JSON value (a value that is not JSON
// is one string) and its numbers in canonical form.
func leafValues(value json.RawMessage) (texts, nums []string) {
	var v any
	if json.Unmarshal(value, &v) != nil {
		return []string{string(value)}, nil
	}
	WalkLeaves(v, "", func(_, _ string, leaf any) {
		switch t := leaf.(type) {
		case string:
			texts = append(texts, t)
		case float64:
			nums = append(nums, CanonNumber(t))
		}
	})
	return texts, nums
}

// reJSONEscape is one escape of a JSON string.
var reJSONEscape = lazyRegexp(`\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])`)

// unescapeJSON decodes the JSON escapes in text, as a model reading it
// would.
func unescapeJSON(text string) string {
	return reJSONEscape().ReplaceAllStringFunc(text, func(m string) string {
		var s string
		if json.Unmarshal([]byte(`"`+m+`"`), &s) != nil {
			return m
		}
		return s
	})
}

// SchemaDefaults are the defaults a params schema declares for its
// top-level properties.
func SchemaDefaults(params json.RawMessage) map[string]any {
	out := map[string]any{}
	var raw struct {
		Properties map[string]map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(params, &raw) != nil {
		return out
	}
	for name, p := range raw.Properties {
		if d, ok := p["default"]; ok {
			var v any
			if json.Unmarshal(d, &v) == nil {
				out[name] = v
			}
		}
	}
	return out
}

func JSONEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// DescribeSource says in words where a value came from, for a dialog.
func DescribeSource(p permissions.Provenance) string {
	switch p.Source {
	case permissions.ProvenanceUser:
		return "typed by you"
	case permissions.ProvenanceBound:
		if p.Via != "" {
			return p.Via
		}
		return "bound by the plan"
	case permissions.ProvenanceHistory:
		return "from your words in an earlier turn, not this request"
	case permissions.ProvenanceDoubted:
		if p.Via != "" {
			return "in your words, but not as what you asked for: " + p.Via
		}
		return "in your words, but not as what you asked for"
	case permissions.ProvenancePlan:
		return "from the hub's plan of your request"
	case permissions.ProvenanceDefault:
		return "the function's default"
	case permissions.ProvenanceAllowed:
		if p.Via != "" {
			return "from data you let " + p.Via + " share"
		}
		return "from data you let an app share"
	case permissions.ProvenanceUnknown:
		return "written by a model, from nothing you typed"
	}
	return "from " + p.Source
}
