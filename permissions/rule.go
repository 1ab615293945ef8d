package permissions

import (
	"errors"
	"fmt"
	"strings"
)

// Effect is what a rule does with the requests it covers.
type Effect string

const (
	EffectAllow Effect = "allow" // decide yes without asking (never for irreversible requests)
	EffectAsk   Effect = "ask"   // always ask, even when a grant or an allow rule would allow
	EffectDeny  Effect = "deny"  // decide no without asking
)

// Rule is one line of the user's config. Each pattern is "*" (or empty) for
// anything, a string ending in "*" for a prefix, or an exact value.
type Rule struct {
	Effect   Effect `json:"effect"`
	Kind     string `json:"kind,omitempty"`
	Subject  string `json:"subject,omitempty"`
	Object   string `json:"object,omitempty"`
	Function string `json:"function,omitempty"`
	Where    string `json:"where,omitempty"` // "config.yaml: permissions.rules[2]", for messages
}

// match reports whether value fits pattern.
func match(pattern, value string) bool {
	switch {
	case pattern == "" || pattern == "*":
		return true
	case strings.HasSuffix(pattern, "*"):
		return strings.HasPrefix(value, strings.TrimSuffix(pattern, "*"))
	}
	return pattern == value
}

// Covers reports whether the rule's patterns all fit r.
func (ru Rule) Covers(r Request) bool {
	return match(ru.Kind, string(r.Kind)) && match(ru.Subject, r.Subject) &&
		match(ru.Object, r.Object) && match(ru.Function, r.Function)
}

func (ru Rule) where(i int) string {
	if ru.Where != "" {
		return ru.Where
	}
	return fmt.Sprintf("permissions.rules[%d]", i)
}

// ValidateRules checks rules as config is loaded: every effect is allow, ask
// or deny, every exact kind is known, and no allow rule could cover an
// irreversible action (its kind pattern matches "irreversible": "*", "",
// "irr*", ...). Each error names the rule's Where; all are joined.
func ValidateRules(rules []Rule) error {
	var errs []error
	for i, ru := range rules {
		where := ru.where(i)
		switch ru.Effect {
		case EffectAllow, EffectAsk, EffectDeny:
		default:
			errs = append(errs, fmt.Errorf("%s: effect %q is not allow, ask or deny", where, ru.Effect))
			continue
		}
		if !strings.HasSuffix(ru.Kind, "*") && ru.Kind != "" && !Kind(ru.Kind).known() {
			errs = append(errs, fmt.Errorf("%s: unknown kind %q", where, ru.Kind))
			continue
		}
		if ru.Effect == EffectAllow && match(ru.Kind, string(KindIrreversible)) {
			kind := ru.Kind
			if kind == "" {
				kind = "*"
			}
			errs = append(errs, fmt.Errorf("%s: an allow rule for kind %q would cover irreversible actions, which ask every time; name the kinds it allows", where, kind))
		}
	}
	return errors.Join(errs...)
}

// firstRule returns the first rule with effect e that covers r.
func firstRule(rules []Rule, e Effect, r Request) (Rule, bool) {
	for _, ru := range rules {
		if ru.Effect == e && ru.Covers(r) {
			return ru, true
		}
	}
	return Rule{}, false
}

// rulesAllow reports whether rules allow r by themselves: an allow rule
// covers it, and no deny or ask rule (which come first) does.
func rulesAllow(rules []Rule, r Request) bool {
	if _, ok := firstRule(rules, EffectDeny, r); ok {
		return false
	}
	if _, ok := firstRule(rules, EffectAsk, r); ok {
		return false
	}
	_, ok := firstRule(rules, EffectAllow, r)
	return ok
}
