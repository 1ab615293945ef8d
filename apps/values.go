package apps

import (
	"encoding/json"
	"slices"
	"strings"
)

// proseNames are arguments that carry prose, not a decision.
var proseNames = []string{"body", "content", "text", "message", "subject", "title", "description", "notes", "note", "comment", "summary", "prompt", "reason", "memo"}

// KeyArgs names the decisive arguments of a function with params schema
// params: every top-level property that is not prose (body, content,
// subject, ...), plus those the function declares (declared can only add:
// an app cannot make one of its arguments less decisive).
func KeyArgs(declared []string, params json.RawMessage) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	_ = json.Unmarshal(params, &s)
	out := slices.Clone(declared)
	for name := range s.Properties {
		if !slices.Contains(proseNames, strings.ToLower(name)) && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Project keeps of value only what schema declares: an object's
// properties that the schema lists (recursively, with items of arrays),
// so that no key an app chose — a property name is text too — crosses a
// bulkhead. A value the schema does not describe is kept as it is.
func Project(schema, value json.RawMessage) json.RawMessage {
	var s map[string]any
	var v any
	if json.Unmarshal(schema, &s) != nil || json.Unmarshal(value, &v) != nil {
		return value
	}
	if declaredOnly(s, v) {
		return value // as the app wrote it, in its order
	}
	out, err := json.Marshal(project(s, v))
	if err != nil {
		return value
	}
	return out
}

// declaredOnly reports whether v holds nothing the schema does not
// declare.
func declaredOnly(s map[string]any, v any) bool {
	switch t := v.(type) {
	case map[string]any:
		props, ok := s["properties"].(map[string]any)
		if !ok {
			return true
		}
		for k, x := range t {
			ps, ok := props[k].(map[string]any)
			if !ok || !declaredOnly(ps, x) {
				return false
			}
		}
	case []any:
		items, ok := s["items"].(map[string]any)
		if !ok {
			return true
		}
		for _, x := range t {
			if !declaredOnly(items, x) {
				return false
			}
		}
	}
	return true
}

func project(s map[string]any, v any) any {
	switch t := v.(type) {
	case map[string]any:
		props, ok := s["properties"].(map[string]any)
		if !ok {
			return t
		}
		out := map[string]any{}
		for k, x := range t {
			ps, ok := props[k].(map[string]any)
			if !ok {
				continue
			}
			out[k] = project(ps, x)
		}
		return out
	case []any:
		items, ok := s["items"].(map[string]any)
		if !ok {
			return t
		}
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = project(items, x)
		}
		return out
	}
	return v
}

// ClosedText reports whether a string property of a schema can hold only
// values the schema lists (enum or const): such a value is the catalog's
// word, not an app's.
func ClosedText(propSchema map[string]any) bool {
	if _, ok := propSchema["const"]; ok {
		return true
	}
	_, ok := propSchema["enum"]
	return ok
}
