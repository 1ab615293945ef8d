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
// values or none, a value the function's schema does not take.
func (o *Operator) presetArgs(tr *turnRun, s Step, fnName string) json.RawMessage {
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
	var schema struct {
		Properties map[string]struct {
			Type any `json:"type"`
		} `json:"properties"`
	}
	if json.Unmarshal(fn.Params, &schema) != nil {
		return nil
	}
	for _, b := range s.Bind {
		if _, ok := schema.Properties[b.Arg]; !ok {
			return nil // a binding of something the function does not take
		}
	}
	args := make(map[string]any, len(schema.Properties))
	for name, p := range schema.Properties {
		v, ok := oneValue(judge.Bound(s, name, tr))
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

// oneValue is the single value bindings give an argument: a relative date
// or time as what it means ("tomorrow" → 2026-12-06), never two different
// ones.
func oneValue(bound []judge.BoundValue) (any, bool) {
	var v any
	seen := ""
	for _, bv := range bound {
		x := bv.V
		if bv.B.Means != nil {
			x = bv.B.Means.Value
		}
		if _, isStr := x.(string); !isStr && bv.B.Means == nil {
			if _, scalar := x.(float64); !scalar {
				if _, b := x.(bool); !b {
					return nil, false // an object or a list: the model decides
				}
			}
		}
		key := fmt.Sprint(x)
		if seen != "" && key != seen {
			return nil, false
		}
		v, seen = x, key
	}
	return v, seen != ""
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
		if t == "integer" && f != math.Trunc(f) {
			return nil, false
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
