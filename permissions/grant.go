package permissions

import (
	"bytes"
	"encoding/json"
	"path"
	"slices"
	"strings"
	"time"
)

// Caveats attenuate a grant (LLMacaroon): a grant whose caveats do not hold
// for a request is skipped, and the request goes on down the chain.
type Caveats struct {
	Expires  time.Time `json:"expires,omitzero"`    // zero: never
	UsesLeft int       `json:"uses_left,omitempty"` // 0: unlimited; counts down, and the grant is removed after its last use
	// Args constrains the request's arguments (a JSON object): argument name
	// → the exact value it must have (a string argument as is, any other as
	// its compact JSON), or, for a value ending in "/", a directory the
	// argument must lie in. Paths are compared lexically after path.Clean,
	// so "a/../b" is not under "a/"; symbolic links are not resolved.
	Args map[string]string `json:"args,omitempty"`
}

// Hold reports whether the caveats allow a request with args at now.
func (c Caveats) Hold(args json.RawMessage, now time.Time) bool {
	if !c.Expires.IsZero() && !now.Before(c.Expires) {
		return false
	}
	if c.UsesLeft < 0 {
		return false
	}
	return c.argsHold(args)
}

func (c Caveats) argsHold(raw json.RawMessage) bool {
	if len(c.Args) == 0 {
		return true
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return false
	}
	for name, want := range c.Args {
		v, ok := args[name]
		if !ok {
			return false
		}
		got, ok := argText(v)
		if !ok {
			return false
		}
		if strings.HasSuffix(want, "/") {
			if !underDir(got, want) {
				return false
			}
		} else if got != want {
			return false
		}
	}
	return true
}

// argText is a JSON value as constraints compare it: a string's contents,
// anything else as compact JSON.
func argText(v json.RawMessage) (string, bool) {
	v = bytes.TrimSpace(v)
	if len(v) > 0 && v[0] == '"' {
		var s string
		if err := json.Unmarshal(v, &s); err != nil {
			return "", false
		}
		return s, true
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, v); err != nil {
		return "", false
	}
	return buf.String(), true
}

// underDir reports whether p, cleaned, is dir or lies below it.
func underDir(p, dir string) bool {
	if p == "" {
		return false
	}
	p = path.Clean(p)
	dir = path.Clean(dir)
	switch dir {
	case "/":
		return strings.HasPrefix(p, "/")
	case ".":
		return !strings.HasPrefix(p, "/") && p != ".." && !strings.HasPrefix(p, "../")
	}
	return p == dir || strings.HasPrefix(p, dir+"/")
}

// Grant is a remembered answer: an allow (or, with Deny, a refusal) for
// requests of one kind, subject, object and function, while its caveats hold.
//
// Permanent grants made in the dialog are stored signed (see the package
// doc); Sig covers every field except Sig, LastUsed, Uses and Invalid.
type Grant struct {
	ID       string `json:"id"`
	Kind     Kind   `json:"kind"`
	Subject  string `json:"subject"`
	Object   string `json:"object,omitempty"`
	Function string `json:"function,omitempty"`
	// Labels are the data labels of the request the grant was made for:
	// it covers a later request only while that request's labels are
	// among them (a grant for sharing travel data does not cover medical
	// data). No labels: only requests that carry none.
	Labels    []string  `json:"labels,omitempty"`
	Deny      bool      `json:"deny,omitempty"` // a remembered refusal
	Note      string    `json:"note,omitempty"` // with Deny: the note sent to the requesting model
	Caveats   Caveats   `json:"caveats,omitzero"`
	Permanent bool      `json:"permanent"`
	Origin    string    `json:"origin"` // "dialog", "policy", "config:<file>"
	Created   time.Time `json:"created"`
	LastUsed  time.Time `json:"last_used,omitzero"`
	Uses      int       `json:"uses,omitempty"`
	Sig       string    `json:"sig,omitempty"` // hex HMAC-SHA256; stored grants only
	// Gen counts the writes of a stored grant: each use re-signs it with
	// the next, and the ledger (ledger.go) says which is current, so that
	// an earlier copy written back is refused.
	Gen uint64 `json:"gen,omitempty"`
	// Session is the client session a session grant was made in
	// (Request.Session): it covers that session's requests only, and
	// goes with it (Broker.EndSession). Permanent grants have none.
	Session string `json:"session,omitempty"`

	// Invalid is set on a stored grant whose signature does not verify, or
	// that could not be read. The Broker never consults it; it is shown so
	// the user can see it and revoke it.
	Invalid bool `json:"-"`
}

// Matches reports whether g's scope covers r (kind, subject, object and
// function equal, r's labels among g's) and its caveats hold at now. It
// judges scope only: Deny, Invalid and irreversibility are the Broker's
// business. A deny grant covers r whatever its labels: a refusal is never
// narrowed.
func (g Grant) Matches(r Request, now time.Time) bool {
	return g.Kind == r.Kind && g.Subject == r.Subject && g.Object == r.Object &&
		g.Function == r.Function && (g.Session == "" || g.Session == r.Session) &&
		(g.Deny || labelsCovered(r.Labels, g.Labels)) && g.Caveats.Hold(r.Args, now)
}

// labelsCovered reports whether every label of want is in have.
func labelsCovered(want, have []string) bool {
	for _, l := range want {
		if !slices.Contains(have, l) {
			return false
		}
	}
	return true
}

// normLabels is a sorted copy of labels without repeats; nil for none.
func normLabels(labels []string) []string {
	if len(labels) == 0 {
		return nil
	}
	out := slices.Clone(labels)
	slices.Sort(out)
	return slices.Compact(out)
}

// answer is the Answer a decision by g carries.
func (g Grant) answer() Answer {
	switch {
	case g.Deny:
		return AnswerDeny
	case g.Permanent:
		return AnswerPermanent
	}
	return AnswerSession
}
