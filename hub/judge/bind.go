package judge

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Binding is what a plan's step declares it expects for one argument of
// its functionality (docs/plan.md): a literal the planner took from the
// current request, a typed field of an earlier step's result, or a hub
// entity the step needs. A decisive value of a call is the user's own for
// the step only when it equals one of the step's bindings for that
// argument; nothing else the user ever typed counts.
type Binding struct {
	Arg string `json:"arg"`
	// Value is a literal of the current request ("bob@example.com").
	Value string `json:"value,omitempty"`
	// From is a field of an earlier step's result ("s1.city",
	// "s1.messages.id": every id of the messages s1 found).
	From string `json:"from,omitempty"`
	// Entity is a hub entity the step needs ("trip.dates").
	Entity string `json:"entity,omitempty"`
	// Quote is the request's words around Value, for the dialog; set by
	// the operator.
	Quote string `json:"quote,omitempty"`
	// Means is what Value means when it is a relative date or time
	// ("tomorrow"): set by the operator, which read it when it checked
	// the plan (relative.go).
	Means *Meaning `json:"means,omitempty"`
	// Why, for a literal the request leaves no single reading (a step's
	// Doubted), says why; Quote is then the user's sentence around it.
	// Set by the operator.
	Why string `json:"why,omitempty"`
}

// maxBindings bounds a step's bindings.
const maxBindings = 8

// BindSchema is the schema of a step's bindings. Each names the argument
// and one of value, from, entity; facts are the entities the hub holds.
func BindSchema(facts []string) map[string]any {
	entity := map[string]any{"type": "string", "maxLength": 0}
	if len(facts) > 0 {
		entity = map[string]any{"type": "string", "enum": append([]string{""}, facts...)}
	}
	return map[string]any{"type": "array", "maxItems": maxBindings, "items": map[string]any{
		"type": "object",
		"properties": map[string]any{
			"arg":    map[string]any{"type": "string", "minLength": 1, "maxLength": 40},
			"value":  map[string]any{"type": "string", "maxLength": 200},
			"from":   map[string]any{"type": "string", "maxLength": 64},
			"entity": entity,
		},
		"required": []string{"arg"},
	}}
}

// reFrom is a reference to a field of a step's result: "s1.city",
// "s1.messages.id".
var reFrom = regexp.MustCompile(`^([A-Za-z0-9_-]{1,24})\.([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*)$`)

// Env is what a plan's bindings are checked against.
type Env struct {
	Query string // the current request, the only source of literals
	// Now is when the request was made, in the user's time zone: what a
	// relative date of it means (zero: none is read).
	Now time.Time
	// Request and Response are the schemas of a functionality's request
	// and response (the hub's catalog).
	Request, Response func(fn string) (json.RawMessage, bool)
}

// CheckBindings keeps the bindings of step s that hold and says why each
// other is dropped: a literal must stand whole in the current request,
// with one reading there (Reading: one that has none is kept in
// s.Doubted, with why and the user's sentence, for the dialog); a
// reference must name a step before s (it becomes a dependency) and a
// field its functionality's result declares; an entity must be one s
// needs (it becomes one); the argument must be one of the
// functionality's (any name for chat, whose bindings are what it gets to
// read).
func CheckBindings(env Env, s *Step, earlier map[string]Step) (dropped []string) {
	var keep []Binding
	s.Doubted = nil
	var request *parsed // the request cut into tokens, once (reading.go)
	for _, b := range s.Bind {
		b.Why = ""
		b.Arg = strings.TrimSpace(b.Arg)
		b.Value, b.From, b.Entity = strings.TrimSpace(b.Value), strings.TrimSpace(b.From), strings.TrimSpace(b.Entity)
		why := ""
		n := 0
		for _, x := range []string{b.Value, b.From, b.Entity} {
			if x != "" {
				n++
			}
		}
		switch {
		case b.Arg == "":
			why = "a binding with no argument"
		case n != 1:
			why = fmt.Sprintf("%s: a binding takes exactly one of value, from, entity", b.Arg)
		case s.Functionality != ChatFunctionality && !hasArg(env, s.Functionality, b.Arg):
			why = fmt.Sprintf("%s: %s takes no argument %q", b.Arg, s.Functionality, b.Arg)
		case b.Value != "":
			q, ok := inRequest(env.Query, b.Value)
			b.Quote = q
			b.Means = nil
			if m, ok := Means(b.Value, env.Now); ok {
				b.Means = &m
			}
			if !ok {
				why = fmt.Sprintf("%s: %q is not in your request", b.Arg, clip(b.Value, 60))
				break
			}
			if request == nil {
				request = parseRequest(env.Query)
			}
			one, not, sentence := request.reading(b.Value, b.Arg)
			if expr, wm, wider := Wider(env.Query, b.Value, env.Now); one && wider {
				// "tomorrow" out of "the day after tomorrow": the words
				// the plan bound are part of a date that is not theirs.
				one = false
				not = fmt.Sprintf("it is part of %q, which means %s", expr, wm.Words)
			}
			if !one {
				// One reading, or ask (reading.go): the step is not
				// routine, and the dialog shows the user's own sentence
				// around the value (Unbound).
				why = fmt.Sprintf("%s: %q has no single reading in your request: %s — you wrote “%s”", b.Arg, clip(b.Value, 60), not, sentence)
				d := b
				d.Why, d.Quote = not, sentence
				if len(s.Doubted) < maxBindings {
					s.Doubted = append(s.Doubted, d)
				}
			}
		case b.From != "":
			m := reFrom.FindStringSubmatch(b.From)
			if m == nil {
				why = fmt.Sprintf("%s: %q is not a field of a step (like s1.city)", b.Arg, clip(b.From, 60))
				break
			}
			src, ok := earlier[m[1]]
			if !ok {
				why = fmt.Sprintf("%s: %s is not a step before %s", b.Arg, m[1], s.ID)
				break
			}
			if !hasField(env, src.Functionality, m[2]) {
				why = fmt.Sprintf("%s: %s (%s) gives no field %q", b.Arg, m[1], src.Functionality, m[2])
				break
			}
			if !slices.Contains(s.DependsOn, m[1]) {
				s.DependsOn = append(s.DependsOn, m[1])
			}
		case b.Entity != "":
			if !slices.Contains(s.Needs, b.Entity) {
				s.Needs = append(s.Needs, b.Entity)
			}
		}
		if why != "" {
			dropped = append(dropped, fmt.Sprintf("step %s: %s", s.ID, why))
			continue
		}
		if len(keep) < maxBindings {
			keep = append(keep, b)
		}
	}
	s.Bind = keep
	return dropped
}

// hasArg reports whether fn's request schema has the top-level argument.
func hasArg(env Env, fn, arg string) bool {
	req, ok := env.Request(fn)
	if !ok {
		return false
	}
	return schemaHas(req, []string{arg})
}

// hasField reports whether fn's response schema has the field path
// (through objects and the items of arrays).
func hasField(env Env, fn, path string) bool {
	if fn == ChatFunctionality {
		return path == "text"
	}
	resp, ok := env.Response(fn)
	if !ok {
		return false
	}
	return schemaHas(resp, strings.Split(path, "."))
}

func schemaHas(schema json.RawMessage, path []string) bool {
	var s map[string]any
	if json.Unmarshal(schema, &s) != nil {
		return false
	}
	for _, name := range path {
		for {
			if items, ok := s["items"].(map[string]any); ok {
				s = items
				continue
			}
			break
		}
		props, _ := s["properties"].(map[string]any)
		next, ok := props[name].(map[string]any)
		if !ok {
			return false
		}
		s = next
	}
	return true
}

// inRequest reports whether v stands whole in the request, by the rule
// of its kind (equal.go) — an address, a URL or a path as the same value
// of its kind among those the request holds (atomKey), a number as a
// whole token of it, any other text as written (or in the same PRECIS
// form) between value boundaries — and returns the words around it. The
// literal is compared as the planner wrote it: nothing around it is
// trimmed, no space collapsed ("./docs/plan.md", "bob@example.com." and
// "\"bob@example.com\"" are not in "email bob@example.com about
// docs/plan.md").
func inRequest(query, v string) (string, bool) {
	text := NormSpace(query)
	if NormValue(v) == "" {
		return "", false
	}
	if k, ok := atomKey(v); ok {
		for _, a := range atomsOf(query) {
			if ak, ok := atomKey(a); ok && ak == k {
				return around(text, a), true
			}
		}
		if !strings.HasPrefix(k, "path:") || strings.ContainsAny(v[:1], "/~.") {
			return "", false // "/secret/key" is not in "../secret/key"
		}
		// A relative value like Asia/Tokyo or docs/plan.md: as text.
	} else if wrapsAtom(v) {
		return "", false
	}
	if textIn(query, v) {
		return around(text, v), true
	}
	if f, ok := number(v); ok && slices.Contains(TokenNumbers(query), CanonNumber(f)) {
		return around(text, v), true
	}
	return "", false
}

// atomsOf lists the addresses, URLs and paths of a text as its writer
// meant them (reAtoms), relative paths with a slash (docs/plan.md)
// included: a word's quotes and brackets and a sentence's punctuation
// are not part of one, and its leading dots are ("../secret/key" is not
// /secret/key).
func atomsOf(text string) []string {
	out := reAtoms(text, 64)
	for _, tok := range strings.Fields(text) {
		tok = trimAtom(strings.TrimLeft(tok, openers))
		if strings.Contains(tok, "/") && rePath().MatchString(tok) {
			out = append(out, tok)
		}
	}
	return out
}

// around is the words of text around its first occurrence of v, for a
// dialog: "email bob@example.com saying hello".
func around(text, v string) string {
	i := strings.Index(text, v)
	if i < 0 {
		if nt, nv := norm.NFC.String(text), norm.NFC.String(v); strings.Contains(nt, nv) {
			text, v, i = nt, nv, strings.Index(nt, nv)
		}
	}
	if i < 0 || i+len(v) > len(text) {
		return clip(text, 80)
	}
	before, after := strings.Fields(text[:i]), strings.Fields(text[i+len(v):])
	if len(before) > 3 {
		before = before[len(before)-3:]
	}
	if len(after) > 3 {
		after = after[:3]
	}
	return strings.Join(append(append(before, text[i:i+len(v)]), after...), " ")
}

// BindingsFor are the step's bindings of one argument.
func (s Step) BindingsFor(arg string) []Binding {
	var out []Binding
	for _, b := range s.Bind {
		if b.Arg == arg {
			out = append(out, b)
		}
	}
	return out
}

// describe says where a binding came from, for a dialog.
func (b Binding) Describe() string {
	switch {
	// Your words as you wrote them: quoted, never escaped (a backslash
	// you typed is one backslash).
	case b.Value != "" && b.Means != nil:
		return fmt.Sprintf("bound by the plan from your words: \"%s\" (%s — %s)", b.Quote, b.Value, b.Means.Words)
	case b.Value != "":
		return fmt.Sprintf("bound by the plan from your words: \"%s\"", b.Quote)
	case b.From != "":
		return "bound by the plan to " + b.From + ", a field of an earlier step's result"
	default:
		return "bound by the plan to the hub's " + b.Entity
	}
}

// CatalogArgs are the arguments a functionality's request takes, for the
// planner's prompt: the decisive ones first.
func CatalogArgs(f apps.Functionality) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(f.Request, &s)
	keys := f.KeyArgs()
	out := slices.Clone(keys)
	var rest []string
	for name := range s.Properties {
		if !slices.Contains(keys, name) {
			rest = append(rest, name)
		}
	}
	slices.Sort(rest)
	return append(out, rest...)
}

// BoundValue is one value a binding gives an argument.
type BoundValue struct {
	V any
	B Binding
}

// Words say the value and where its binding came from, for a dialog.
func (bv BoundValue) Words() string {
	if m, ok := bv.V.(meant); ok {
		return m.Value + ", " + bv.B.Describe()
	}
	return clip(fmt.Sprint(bv.V), 80) + ", " + bv.B.Describe()
}

// Values are what a step's references bind to: the typed values of the
// steps that ended, and the hub entities the turn shared.
type Values interface {
	// StepValue is the typed value step id returned (nil: none yet).
	StepValue(id string) json.RawMessage
	// Entity is the value of a hub entity the turn shared.
	Entity(name string) (string, bool)
}

// Bound resolves the step's bindings of arg to values: a literal as it
// is; a field of an earlier step's result, every value at its path; an
// entity, its value as the turn shared it. A reference whose step has no
// value (yet, or at all) gives none.
func Bound(s Step, arg string, vals Values) []BoundValue {
	var out []BoundValue
	for _, b := range s.BindingsFor(arg) {
		switch {
		case b.Value != "":
			out = append(out, BoundValue{b.Value, b})
			if b.Means != nil {
				out = append(out, BoundValue{meant(*b.Means), b})
			}
		case b.From != "":
			id, path, _ := strings.Cut(b.From, ".")
			var v any
			if vals == nil || json.Unmarshal(vals.StepValue(id), &v) != nil {
				continue
			}
			for _, x := range At(v, strings.Split(path, ".")) {
				out = append(out, BoundValue{x, b})
			}
		case b.Entity != "":
			if vals == nil {
				continue
			}
			if e, ok := vals.Entity(b.Entity); ok {
				out = append(out, BoundValue{e, b})
			}
		}
	}
	return out
}

// At lists the scalar values at path in v, through objects and every
// item of an array.
func At(v any, path []string) []any {
	switch t := v.(type) {
	case []any:
		var out []any
		for _, x := range t {
			out = append(out, At(x, path)...)
		}
		return out
	case map[string]any:
		if len(path) == 0 {
			return nil
		}
		return At(t[path[0]], path[1:])
	case nil:
		return nil
	default:
		if len(path) == 0 {
			return []any{t}
		}
		return nil
	}
}

// MarkBound says of each value of args that equals one of step s's
// bindings for its argument that it is bound, and by what: the dialog
// then says where the binding came from, not merely where the value was
// seen first (a note's body the user also typed in an earlier turn is
// the field the plan bound, not "your words in an earlier turn").
func MarkBound(prov []permissions.Provenance, args json.RawMessage, s Step, vals Values) []permissions.Provenance {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return prov
	}
	leaves := map[string]any{}
	WalkLeaves(v, "", func(path, _ string, leaf any) { leaves[path] = leaf })
	for i, p := range prov {
		top, _, _ := strings.Cut(p.Path, ".")
		top, _, _ = strings.Cut(top, "[")
		leaf, ok := leaves[p.Path]
		if !ok {
			continue
		}
		for _, b := range Bound(s, top, vals) {
			if SameValue(leaf, b.V) {
				prov[i].Source, prov[i].Via = permissions.ProvenanceBound, b.B.Describe()
				break
			}
		}
	}
	return prov
}
