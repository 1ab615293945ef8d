package judge

import (
	"encoding/json"
	"fmt"
	"sort"
)

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
