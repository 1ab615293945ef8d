package judge

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"sync"

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
