package hub

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/bulkhead-dev/bulkhead/guard"
)

// instructionLike names the kinds of instruction-like text found in s
// (package guard), for a dialog's warning.
func instructionLike(s string) []string { return guard.Kinds(s) }

// foreignValues lists string values in a JSON value that the user did not
// type: an address, a path or a sum that came from somewhere else.
func foreignValues(args json.RawMessage, query string) []string {
	var v any
	if json.Unmarshal(args, &v) != nil {
		return nil
	}
	q := strings.ToLower(query)
	var out []string
	var walk func(key string, v any)
	walk = func(key string, v any) {
		switch t := v.(type) {
		case map[string]any:
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(k, t[k])
			}
		case []any:
			for _, x := range t {
				walk(key, x)
			}
		case string:
			s := strings.TrimSpace(t)
			if len(s) >= 3 && len(s) <= 200 && !strings.Contains(q, strings.ToLower(s)) {
				out = append(out, fmt.Sprintf("%s=%q", key, s))
			}
		}
	}
	walk("", v)
	if len(out) > 4 {
		out = append(out[:4], fmt.Sprintf("and %d more", len(out)-4))
	}
	return out
}

// assessment is the hub's warning line for a dialog.
type assessment struct {
	expected     bool
	irreversible bool
	labels       []string // labels the receiver is not cleared for
	receiver     string
	instructions []string
	foreign      []string
	extra        string
}

func (a assessment) String() string {
	var parts []string
	if a.expected {
		parts = append(parts, "expected by the plan")
	} else {
		parts = append(parts, "NOT expected by the plan")
	}
	if a.irreversible {
		parts = append(parts, "cannot be undone")
	}
	if len(a.labels) > 0 {
		parts = append(parts, fmt.Sprintf("carries %s data, which %s is not cleared for", strings.Join(a.labels, ", "), a.receiver))
	}
	if len(a.instructions) > 0 {
		parts = append(parts, "instruction-like content ("+strings.Join(a.instructions, ", ")+")")
	}
	if len(a.foreign) > 0 {
		parts = append(parts, "values you did not type: "+strings.Join(a.foreign, ", "))
	}
	if a.extra != "" {
		parts = append(parts, a.extra)
	}
	return strings.Join(parts, "; ")
}

// uncleared returns the labels not covered by a clearance.
func uncleared(labels, clearance []string) []string {
	var out []string
	for _, l := range labels {
		ok := false
		for _, c := range clearance {
			if c == l {
				ok = true
			}
		}
		if !ok {
			out = append(out, l)
		}
	}
	sort.Strings(out)
	return out
}
