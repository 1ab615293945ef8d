package hub

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/hub/judge"
)

// presetArgs are the arguments of the step's call when the plan binds
// every one the app's function takes, each to exactly one value: the
// spoke then makes the call as its model would have made it (through the
// same gate, judged the same way), without a model call that could only
// copy the values — or write others. Nil when the model has something to
// decide: an argument the plan leaves open, a binding that gives several
// values or none, a value the function's schema does not take, a schema
// whose arguments are not all named (composed, or open to any), a
// relative date for an argument that is not declared a date; and when a
// bound value is data the user did not let reach this step (shared is
// what admit let through: a field of an earlier step, an entity).
func (o *Operator) presetArgs(tr *turnRun, s Step, fnName string, shared json.RawMessage) json.RawMessage {
	if o.opts.Apps == nil || s.App == VanillaApp || s.App == monolithApp {
		return nil
	}
	a, ok := o.opts.Apps.App(s.App)
	if !ok {
		return nil
	}
	fn, ok := a.Manifest().Function(fnName)
	if !ok {
		return nil
	}
	props, ok := namedParams(fn.Params)
	if !ok {
		return nil
	}
	for _, b := range s.Bind {
		if _, ok := props[b.Arg]; !ok {
			return nil // a binding of something the function does not take
		}
	}
	admitted := sharedLeaves(shared)
	args := make(map[string]any, len(props))
	for name, p := range props {
		v, ok := oneValue(judge.Bound(s, name, tr), p, admitted)
		if !ok {
			return nil
		}
		typed, ok := asType(v, p.Type)
		if !ok {
			return nil
		}
		args[name] = typed
	}
	out, err := json.Marshal(args)
	if err != nil || apps.Validate(fn.Params, out) != nil {
		return nil
	}
	return out
}

// param is what presetArgs reads of one argument's schema.
type param struct {
	Type   any    `json:"type"`
	Format string `json:"format"`
}

// namedParams are the arguments a params schema names, when it names all
// it takes: properties present, nothing composed ($ref, allOf, anyOf,
// oneOf, patternProperties), no schema for further properties. A schema
// open to any argument (an MCP tool's fallback, {"type":"object"}) is not:
// an empty call would pass it.
func namedParams(schema json.RawMessage) (map[string]param, bool) {
	var top map[string]json.RawMessage
	if json.Unmarshal(schema, &top) != nil {
		return nil, false
	}
	for _, k := range []string{"$ref", "allOf", "anyOf", "oneOf", "patternProperties", "if", "dependentSchemas"} {
		if _, ok := top[k]; ok {
			return nil, false
		}
	}
	raw, ok := top["properties"]
	if !ok {
		return nil, false
	}
	if ap, ok := top["additionalProperties"]; ok && string(ap) != "false" {
		return nil, false
	}
	var props map[string]param
	if json.Unmarshal(raw, &props) != nil || props == nil {
		return nil, false
	}
	return props, true
}

// sharedLeaves are the scalar values of the data admit let through to
// the step, as fmt prints them.
func sharedLeaves(shared json.RawMessage) map[string]bool {
	out := map[string]bool{}
	var v any
	if len(shared) == 0 || json.Unmarshal(shared, &v) != nil {
		return out
	}
	judge.WalkLeaves(v, "", func(_, _ string, leaf any) {
		if leaf != nil {
			out[fmt.Sprint(leaf)] = true
		}
	})
	return out
}

// oneValue is the single value bindings give an argument, never two
// different ones. A relative date or time is what it means ("tomorrow" →
// 2026-12-06) only for an argument declared a date or a date-time; for
// any other ("notes about Friday") the model decides. A field of an
// earlier step or an entity counts only when admit let it through.
func oneValue(bound []judge.BoundValue, p param, admitted map[string]bool) (any, bool) {
	var v any
	seen, found := "", false
	for _, bv := range bound {
		x := bv.V
		if m := bv.B.Means; m != nil {
			if !(m.Kind == "date" && p.Format == "date") && !(m.Kind == "time" && p.Format == "date-time") {
				return nil, false
			}
			x = m.Value
		}
		switch x.(type) {
		case string, float64, bool:
		default:
			return nil, false // an object, a list, a relative value's form: the model decides
		}
		if bv.B.Value == "" && !admitted[fmt.Sprint(x)] {
			return nil, false // data the user did not let reach this step
		}
		key := fmt.Sprint(x)
		if found && key != seen {
			return nil, false
		}
		v, seen, found = x, key, true
	}
	return v, found
}

// asType is v as a JSON schema type takes it (a string's number as a
// number); false when it cannot be.
func asType(v any, typ any) (any, bool) {
	t, _ := typ.(string)
	switch t {
	case "string":
		switch x := v.(type) {
		case string:
			return x, true
		case float64:
			return strconv.FormatFloat(x, 'f', -1, 64), true
		}
	case "number", "integer":
		var f float64
		switch x := v.(type) {
		case float64:
			f = x
		case string:
			var err error
			if f, err = strconv.ParseFloat(x, 64); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return nil, false
			}
		default:
			return nil, false
		}
		if t == "integer" && (f != math.Trunc(f) || math.Abs(f) > 1<<53) {
			return nil, false // not an integer, or one a float64 would round
		}
		return f, true
	case "boolean":
		switch x := v.(type) {
		case bool:
			return x, true
		case string:
			if b, err := strconv.ParseBool(x); err == nil {
				return b, true
			}
		}
	}
	return nil, false
}
