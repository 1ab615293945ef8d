package judge

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
)

// Result is one step's typed result, as the synthesis reads it.
type Result struct {
	Step, App string
	Value     json.RawMessage
}

// Others are what a step's free text must not speak of to be quoted in
// the answer: the other apps of the plan, and the values the other steps
// produced (numbers, and closed or short texts), each with the name of
// its app.
type Others struct {
	apps   []string
	values map[string]string // canonical value -> the app that produced it
}

// OthersOf are the others of r among results (the plan's app steps).
func OthersOf(r Result, results []Result) Others {
	o := Others{values: map[string]string{}}
	for _, x := range results {
		if x.Step == r.Step {
			continue
		}
		if x.App != r.App && !slices.Contains(o.apps, x.App) {
			o.apps = append(o.apps, x.App)
		}
		var v any
		if json.Unmarshal(x.Value, &v) != nil {
			continue
		}
		WalkLeaves(v, "", func(_, _ string, leaf any) {
			switch t := leaf.(type) {
			case float64:
				o.values[CanonNumber(t)] = x.App
			case string:
				if n := NormValue(t); len(n) >= 3 && len(n) <= 40 {
					o.values[n] = x.App
				}
			}
		})
	}
	return o
}

// About names what of o the text speaks of, or "".
func (o Others) About(text string) string {
	for _, a := range o.apps {
		if namesApp(text, a) {
			return a
		}
	}
	for _, num := range TokenNumbers(text) {
		if app, ok := o.values[num]; ok {
			return app + "'s value " + num
		}
	}
	n := NormSpace(text)
	for v, app := range o.values {
		if _, err := strconv.ParseFloat(v, 64); err != nil && ContainsValue(n, v) {
			return app + "'s value " + clip(v, 40)
		}
	}
	return ""
}

// namesApp reports whether text names app as it is written or in other
// words of its name: metro_hail as "Metro Hail", "metro-hail",
// "MetroHail".
func namesApp(text, app string) bool {
	if containsWordFold(text, app) {
		return true
	}
	parts := strings.FieldsFunc(app, func(r rune) bool { return r == '_' || r == '-' })
	if len(parts) < 2 {
		return false
	}
	for _, sep := range []string{" ", "-", "", "."} {
		if containsWordFold(text, strings.Join(parts, sep)) {
			return true
		}
	}
	return false
}

// containsWordFold reports whether text holds word as a whole word, in
// any case.
func containsWordFold(text, word string) bool {
	return ContainsValue(strings.ToLower(text), strings.ToLower(word))
}
