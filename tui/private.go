package tui

import (
	"strings"
	"unicode"

	"github.com/bulkhead-dev/bulkhead/tui/chat"
)

// A private query ("/private <query>" in the input) runs with
// hub.AskOptions{Private: true}: no memory goes in and the hub keeps
// nothing of it — not the turn, not a summary, not an entity. Its turn
// is badged PRIVATE · nothing kept. Since the hub's log does not hold it,
// reloading the chat would lose it; the UI keeps it in the view (Model.kept)
// where it was asked, until bulkhead exits. It cannot be retried.

// privateQuery reads "/private <query>": the query and true when q is
// one, q itself when it is not. ok is false for "/private" with nothing
// after it.
func privateQuery(q string) (query string, private, ok bool) {
	rest, found := strings.CutPrefix(strings.TrimLeftFunc(q, unicode.IsSpace), "/private")
	if !found {
		return q, false, true
	}
	if rest != "" && !unicode.IsSpace([]rune(rest)[0]) {
		return q, false, true // "/privately …" is a query like any other
	}
	rest = strings.TrimSpace(rest)
	return rest, true, rest != ""
}

// keep holds the outcome of a finished private query in the view of its
// chat; it reports whether there was one to keep.
func (m *Model) keep(r *turnRun) bool {
	if !r.Private || r.chat == "" || !r.result.Private {
		return false
	}
	x := r.Extras
	t := r.result
	if t.Query == "" {
		t.Query = r.Query
	}
	m.kept[r.chat] = append(m.kept[r.chat], chat.Kept{After: r.after, Turn: t, Extras: &x})
	return true
}
