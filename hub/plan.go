package hub

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/hub/judge"
)

// VanillaApp is the spoke that serves plain conversation: no app, no tools.
const VanillaApp = "vanilla"

// Functionality is what the planner may route a step to: a vetted catalog
// entry, described in the hub's own words.
type Functionality struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Args are the arguments its request takes, decisive ones first: what
	// a step may bind.
	Args []string `json:"args,omitempty"`
}

// Plan is the hub's typed plan for one request (docs/plan.md).
type Plan struct {
	Steps []Step `json:"steps"`
	// Fallback is set when the planner's output was unusable twice and
	// the operator routed the request to the vanilla spoke instead.
	Fallback bool `json:"fallback,omitempty"`
	// Retried is set when the planner's first output was unusable and the
	// second one was used.
	Retried bool   `json:"retried,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// Dropped says which bindings the operator dropped, and why (a
	// literal that is not in the request, say).
	Dropped []string `json:"dropped,omitempty"`
	// Early is set when the plan's first tokens decided it (plain chat):
	// the hub acted on them and read no more of the planner's answer.
	Early bool `json:"early,omitempty"`
	// Triaged is set when the triage (triage.go) said plain chat and the
	// planner was not asked.
	Triaged bool `json:"triaged,omitempty"`
}

// A plan's kind, its first property: plain chat, or a request for apps.
const (
	kindChat = "chat"
	kindApps = "apps"
)

// reKind reads the kind a plan's first tokens give (a code fence before
// it allowed, as parsePlan allows).
var reKind = regexp.MustCompile("^\\s*(?:```(?:json)?\\s*)?\\{\\s*\"kind\"\\s*:\\s*\"(" + kindChat + "|" + kindApps + ")\"")

// decidedKind is the kind the planner's output so far decides ("" until
// it says one, or when it does not begin with one).
func decidedKind(text string) string {
	if m := reKind.FindStringSubmatch(text); m != nil {
		return m[1]
	}
	return ""
}

// kindPending reports whether the planner's output so far may still
// begin with its kind (`{"kind": "…`): a draft held for the kind waits.
func kindPending(text string) bool {
	t := strings.TrimSpace(text)
	t = strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(t, "```"), "json"))
	if t == "" {
		return true
	}
	rest, ok := strings.CutPrefix(t, "{")
	if !ok {
		return false
	}
	rest = strings.TrimSpace(rest)
	const key = `"kind"`
	if len(rest) <= len(key) {
		return strings.HasPrefix(key, rest)
	}
	if !strings.HasPrefix(rest, key) {
		return false
	}
	// The key is written: its value may be on its way.
	v := strings.TrimSpace(rest[len(key):])
	if v == "" || v == ":" {
		return true
	}
	v, ok = strings.CutPrefix(v, ":")
	if !ok {
		return false
	}
	v = strings.TrimSpace(v)
	return v == "" || v[0] == '"' && !strings.Contains(v[1:], `"`)
}

// chatPlan is the plan of a request the planner called plain chat: one
// chat step with the user's words, whatever else the planner wrote.
func chatPlan(query string) Plan {
	return Plan{Steps: []Step{{ID: "s1", Functionality: ChatFunctionality, App: VanillaApp, Query: query, DependsOn: []string{}}}}
}

// Apps lists the distinct apps the plan uses, in step order.
func (p Plan) Apps() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range p.Steps {
		if !seen[s.App] {
			seen[s.App] = true
			out = append(out, s.App)
		}
	}
	return out
}

// step returns the step with id.
func (p Plan) step(id string) (Step, bool) {
	for _, s := range p.Steps {
		if s.ID == id {
			return s, true
		}
	}
	return Step{}, false
}

// usesApps reports whether an app (not the vanilla spoke) serves a step.
func (p Plan) usesApps() bool {
	for _, s := range p.Steps {
		if s.App != VanillaApp {
			return true
		}
	}
	return false
}

// maxSteps bounds a plan; a longer one is treated as unusable.
const maxSteps = 8

// PlanSchema is the `format` the planner's model must follow. The
// functionality enum holds exactly the installed functionalities, so a
// model that honours the schema cannot name anything else. Strings and
// lists are bounded, so a degenerate model cannot run on forever.
func PlanSchema(fns []Functionality, namedApps ...string) json.RawMessage {
	return planSchema(fns, namedApps, nil)
}

// planSchema is PlanSchema with the names of the entities the hub holds:
// a step's needs is an enum of exactly those (empty when there are none).
func planSchema(fns []Functionality, namedApps, facts []string) json.RawMessage {
	names := make([]string, len(fns))
	for i, f := range fns {
		names[i] = f.Name
	}
	schema := map[string]any{
		"type": "object",
		// kind comes first (a map marshals in key order, and the model
		// writes the properties in the schema's order): the plan's first
		// tokens say whether it is plain chat, and the hub acts on them
		// before the rest is written (decidedKind).
		"properties": map[string]any{
			"kind": map[string]any{"type": "string", "enum": []string{kindChat, kindApps}},
			"steps": map[string]any{
				"type":     "array",
				"minItems": 1,
				"maxItems": maxSteps,
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"id":            map[string]any{"type": "string", "minLength": 1, "maxLength": 24},
						"functionality": map[string]any{"type": "string", "enum": names},
						"query":         map[string]any{"type": "string", "maxLength": 200},
						"depends_on":    map[string]any{"type": "array", "maxItems": maxSteps, "items": map[string]any{"type": "string", "maxLength": 24}},
						"app":           appProp(namedApps),
						"needs":         needsProp(facts),
						"bind":          judge.BindSchema(facts),
					},
					// Only the functionality is required: it is what the
					// model writes first (a grammar writes the required
					// properties first), and a plan carries no words it
					// does not need — ids are s1, s2, … by position, no
					// depends_on is none, a lone step answers the user's
					// own words.
					"required": []string{"functionality"},
				},
			},
		},
		"required": []string{"kind", "steps"},
	}
	b, err := json.Marshal(schema)
	if err != nil {
		panic(err) // a static structure always marshals
	}
	return b
}

// appProp lets a step name an app only when the user typed its name.
func appProp(named []string) map[string]any {
	if len(named) == 0 {
		return map[string]any{"type": "string", "maxLength": 0}
	}
	return map[string]any{"type": "string", "enum": append([]string{""}, named...)}
}

// needsProp lets a step name only entities the hub holds.
func needsProp(facts []string) map[string]any {
	if len(facts) == 0 {
		return map[string]any{"type": "array", "maxItems": 0}
	}
	return map[string]any{"type": "array", "maxItems": maxSteps, "items": map[string]any{"type": "string", "enum": facts}}
}

// draft is what the planner's model writes; apps are the operator's call.
type draft struct {
	Kind  string      `json:"kind"`
	Steps []draftStep `json:"steps"`
}

type draftStep struct {
	ID            string    `json:"id"`
	Functionality string    `json:"functionality"`
	Query         string    `json:"query"`
	DependsOn     []string  `json:"depends_on"`
	App           string    `json:"app"`
	Needs         []string  `json:"needs"`
	Bind          []Binding `json:"bind"`
}

// errUnusable marks a plan the operator cannot run.
var errUnusable = errors.New("unusable plan")

// parsePlan decodes and validates model output against the installed
// functionalities; route maps a functionality to the app that serves it
// ("" when several do). A step may name an app only if the user typed it,
// and need only entities the hub holds (facts). Its bindings are checked
// against env (checkBindings): one that does not hold is dropped, and
// the plan says so.
func parsePlan(out string, route func(fn, app string) (string, bool), named, facts []string, env judge.Env) (Plan, error) {
	out = strings.TrimSpace(out)
	// Some models wrap JSON in a code fence even with a schema.
	out = strings.TrimPrefix(strings.TrimSuffix(out, "```"), "```json")
	var d draft
	dec := json.NewDecoder(strings.NewReader(out))
	if err := dec.Decode(&d); err != nil {
		return Plan{}, fmt.Errorf("%w: not JSON of the plan's shape: %v", errUnusable, err)
	}
	if d.Kind == kindChat {
		// The kind decides, as it does when the hub reads it first: plain
		// chat needs nothing (a step's needs under it are not read).
		return chatPlan(env.Query), nil
	}
	if len(d.Steps) == 0 {
		return Plan{}, fmt.Errorf("%w: no steps", errUnusable)
	}
	if len(d.Steps) > maxSteps {
		return Plan{}, fmt.Errorf("%w: %d steps, at most %d", errUnusable, len(d.Steps), maxSteps)
	}
	// The operator names the steps itself, s1, s2, … in order: a step id
	// is the model's text, and a dialog or a warning that names a step
	// says the hub's words (the model's ids are kept only to read its
	// depends_on and bindings, and in what it is told when a plan fails).
	canon := map[string]string{}
	for i, s := range d.Steps {
		id := strings.TrimSpace(s.ID)
		if id == "" {
			id = fmt.Sprintf("s%d", i+1) // a step without an id is named by its place
			d.Steps[i].ID = id
		}
		if _, dup := canon[id]; dup {
			return Plan{}, fmt.Errorf("%w: step id %q used twice", errUnusable, id)
		}
		canon[id] = fmt.Sprintf("s%d", i+1)
	}
	var p Plan
	seen := map[string]bool{}
	for _, s := range d.Steps {
		modelID := strings.TrimSpace(s.ID)
		id := canon[modelID]
		hint := strings.TrimSpace(s.App)
		if hint != "" && !slices.Contains(named, hint) {
			return Plan{}, fmt.Errorf("%w: step %q names app %q, which the user did not name", errUnusable, modelID, hint)
		}
		app, ok := route(s.Functionality, hint)
		if !ok && hint != "" {
			return Plan{}, fmt.Errorf("%w: step %q: app %q does not provide %q", errUnusable, modelID, hint, s.Functionality)
		}
		if !ok {
			return Plan{}, fmt.Errorf("%w: step %q asks for %q, which no installed app provides", errUnusable, modelID, s.Functionality)
		}
		deps := []string{}
		for _, dep := range s.DependsOn {
			c, ok := canon[strings.TrimSpace(dep)]
			if !ok || !seen[c] {
				return Plan{}, fmt.Errorf("%w: step %q depends on %q, which does not come before it", errUnusable, modelID, dep)
			}
			deps = append(deps, c)
		}
		for j, b := range s.Bind {
			if x, field, ok := strings.Cut(strings.TrimSpace(b.From), "."); ok {
				if c, ok := canon[x]; ok {
					s.Bind[j].From = c + "." + field
				}
			}
		}
		var needs []string
		for _, n := range s.Needs {
			if !slices.Contains(facts, n) {
				return Plan{}, fmt.Errorf("%w: step %q needs %q, which the hub does not hold", errUnusable, modelID, n)
			}
			if !slices.Contains(needs, n) {
				needs = append(needs, n)
			}
		}
		step := Step{ID: id, Functionality: s.Functionality, App: app, Query: strings.TrimSpace(s.Query), DependsOn: deps, Needs: needs, Bind: s.Bind}
		earlier := map[string]Step{}
		for _, e := range p.Steps {
			earlier[e.ID] = e
		}
		p.Dropped = append(p.Dropped, judge.CheckBindings(env, &step, earlier)...)
		for _, n := range step.Needs {
			if !slices.Contains(facts, n) {
				return Plan{}, fmt.Errorf("%w: step %q needs %q, which the hub does not hold", errUnusable, modelID, n)
			}
		}
		seen[id] = true
		p.Steps = append(p.Steps, step)
	}
	return p, nil
}

// fallbackPlan routes the whole request to the vanilla spoke.
func fallbackPlan(query, reason string) Plan {
	p := chatPlan(query)
	p.Fallback, p.Reason = true, reason
	return p
}
