package judge

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/bulkhead-dev/bulkhead/permissions"
)

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
