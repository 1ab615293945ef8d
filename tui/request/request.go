// Package request is how the TUI names a permission request wherever it
// shows one — the dialog, a turn's activity, the caveat step, the action
// log: what it is about, compactly, and whether it is drawn as dangerous.
package request

import (
	"strings"

	perm "github.com/bulkhead-dev/bulkhead/permissions"
)

// Target names what a request is about, compactly.
func Target(r perm.Request) string {
	switch r.Kind {
	case perm.KindIrreversible:
		if r.Function != "" {
			return r.Subject + "." + r.Function
		}
		return r.Subject
	case perm.KindCollab, perm.KindNetwork:
		s := r.Subject + " → " + r.Object
		if r.Function != "" {
			s += " " + r.Function
		}
		return s
	case perm.KindChanges:
		s := r.Subject + " → " + r.Object
		if r.Changes != nil {
			s += " (" + r.Changes.Count() + ")"
		}
		return s
	case perm.KindSelect:
		if len(r.Choices) > 0 {
			return r.Function + " (" + strings.Join(r.Choices, " or ") + ")"
		}
		return r.Object + " for " + r.Function
	default:
		if r.Subject != "" && r.Subject != "hub" && r.Subject != r.Object {
			return r.Subject + " → " + r.Object
		}
		if r.Object == "" {
			return r.Subject
		}
		return r.Object
	}
}

// Dangerous is a request drawn in red rather than amber: not expected, or
// not to be undone.
func Dangerous(r perm.Request) bool {
	return !r.Expected || r.IsIrreversible() || strings.Contains(r.Warning, "NOT expected")
}
