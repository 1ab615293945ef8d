package config

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cast"
	"github.com/spf13/pflag"
	"github.com/spf13/viper"

	"github.com/bulkhead-dev/bulkhead/internal/suggest"
	"github.com/bulkhead-dev/bulkhead/llm"
)

// A loader reads the keys of one Load, one at a time in viper's
// precedence: it checks each value and notes an error that names the key
// and where its value came from (Load reports them all at once).
type loader struct {
	v     *viper.Viper
	flags map[string]*pflag.Flag
	errs  []error
}

// source names where the value of key came from, in viper's precedence.
func (l *loader) source(key string) string {
	if f, ok := l.flags[key]; ok && f.Changed {
		return "--" + f.Name
	}
	if env := "BULKHEAD_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_")); os.Getenv(env) != "" {
		return "$" + env
	}
	if f := l.v.ConfigFileUsed(); f != "" && l.v.InConfig(key) {
		return f
	}
	if key == "ollama.host" && os.Getenv("OLLAMA_HOST") != "" {
		return "$OLLAMA_HOST"
	}
	return "default"
}

func (l *loader) fail(key, msg string) {
	l.errs = append(l.errs, &Error{Key: key, Source: l.source(key), Msg: msg})
}

func (l *loader) str(key string) (string, bool) {
	s, err := cast.ToStringE(l.v.Get(key))
	if err != nil {
		l.fail(key, fmt.Sprintf("want a string, got %v", l.v.Get(key)))
		return "", false
	}
	return strings.TrimSpace(s), true
}

func (l *loader) host(key string) string {
	s, ok := l.str(key)
	if !ok {
		return ""
	}
	u, err := llm.ParseHost(s)
	if err != nil {
		l.fail(key, err.Error())
		return ""
	}
	return u.String()
}

func (l *loader) model(key string) string {
	s, ok := l.str(key)
	if ok && !modelName.MatchString(s) {
		l.fail(key, fmt.Sprintf("%q is not a model name (like %s)", s, DefaultModel))
	}
	return s
}

func (l *loader) duration(key string) time.Duration {
	d, err := cast.ToDurationE(l.v.Get(key))
	if err != nil || d < 0 {
		l.fail(key, fmt.Sprintf("want a duration like 10m, got %v", l.v.Get(key)))
	}
	return d
}

func (l *loader) nonNegInt(key string) int {
	n, err := cast.ToIntE(l.v.Get(key))
	if err != nil || n < 0 {
		l.fail(key, fmt.Sprintf("want a whole number ≥ 0, got %v", l.v.Get(key)))
	}
	return n
}

func (l *loader) positiveInt(key string) int {
	n, err := cast.ToIntE(l.v.Get(key))
	if err != nil || n <= 0 {
		l.fail(key, fmt.Sprintf("want a whole number ≥ 1, got %v", l.v.Get(key)))
	}
	return n
}

func (l *loader) path(key string) string {
	s, ok := l.str(key)
	if !ok {
		return ""
	}
	if s == "" {
		l.fail(key, "empty path")
		return ""
	}
	if strings.HasPrefix(s, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			s = filepath.Join(home, s[2:])
		}
	}
	abs, err := filepath.Abs(s)
	if err != nil {
		l.fail(key, err.Error())
	}
	return abs
}

func (l *loader) boolean(key string) bool {
	b, err := cast.ToBoolE(l.v.Get(key))
	if err != nil {
		l.fail(key, fmt.Sprintf("want true or false, got %v", l.v.Get(key)))
	}
	return b
}

func (l *loader) list(key string) []string {
	raw := l.v.Get(key)
	var out []string
	switch t := raw.(type) {
	case string: // from a flag or variable: comma-separated
		for _, p := range strings.Split(t, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
		return out
	}
	out, err := cast.ToStringSliceE(raw)
	if err != nil {
		l.fail(key, fmt.Sprintf("want a list of names, got %v", raw))
	}
	return out
}

func (l *loader) rules(key string) []Rule {
	raw := l.v.Get(key)
	if raw == nil {
		return nil
	}
	items, ok := raw.([]any)
	if !ok {
		l.fail(key, "want a list of rules like {effect: allow, kind: exec, object: clock}")
		return nil
	}
	var out []Rule
	for i, it := range items {
		m, err := cast.ToStringMapStringE(it)
		where := fmt.Sprintf("%s: %s[%d]", l.source(key), key, i)
		if err != nil {
			l.fail(fmt.Sprintf("%s[%d]", key, i), "want a map of effect, kind, subject, object, function")
			continue
		}
		r := Rule{Effect: m["effect"], Kind: m["kind"], Subject: m["subject"], Object: m["object"], Function: m["function"], Where: where}
		for k := range m {
			switch k {
			case "effect", "kind", "subject", "object", "function":
			default:
				l.fail(fmt.Sprintf("%s[%d].%s", key, i, k), "unknown key")
			}
		}
		switch r.Effect {
		case "allow", "ask", "deny":
		default:
			l.fail(fmt.Sprintf("%s[%d].effect", key, i), fmt.Sprintf("%q is not allow, ask or deny", r.Effect))
		}
		out = append(out, r)
	}
	return out
}

func (l *loader) oneOf(key string, opts ...string) string {
	s, _ := l.str(key)
	for _, o := range opts {
		if s == o {
			return s
		}
	}
	l.fail(key, fmt.Sprintf("%q is not one of %s", s, strings.Join(opts, ", ")))
	return opts[0]
}

// didYouMean names the known key closest to k, when one is close: a
// typo's likely intent.
func didYouMean(k string, known []string) string {
	best, dist := "", 3
	for _, c := range known {
		if d := suggest.Distance(k, c); d < dist {
			best, dist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}
