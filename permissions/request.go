package permissions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Kind is what a request asks to do (DESIGN §4).
type Kind string

const (
	KindExec         Kind = "exec"         // run app Object for this request
	KindSelect       Kind = "select"       // choose app Object for a functionality several apps offer
	KindData         Kind = "data"         // share hub-held data Object with Subject
	KindCollab       Kind = "collab"       // Subject asks for a functionality that Object provides, or its answer back
	KindIrreversible Kind = "irreversible" // Subject performs Function(Args); asks every time
	KindNetwork      Kind = "network"      // Subject sends data to host Object
)

// Kinds lists every kind, in the order the design names them.
var Kinds = []Kind{KindExec, KindSelect, KindData, KindCollab, KindIrreversible, KindNetwork}

func (k Kind) known() bool {
	for _, x := range Kinds {
		if k == x {
			return true
		}
	}
	return false
}

// needsWarning reports whether a dialog of kind k must carry the hub's
// assessment (invariant 2: every cross-app flow, and every irreversible act).
func (k Kind) needsWarning() bool {
	return k == KindCollab || k == KindData || k == KindIrreversible
}

// Answer is what was decided: allow once, for the session, permanently, or deny.
type Answer string

const (
	AnswerOnce      Answer = "once"
	AnswerSession   Answer = "session"
	AnswerPermanent Answer = "permanent"
	AnswerDeny      Answer = "deny"
)

// Source says which layer decided.
type Source string

const (
	SourceUser   Source = "user"   // a person answered the dialog
	SourceGrant  Source = "grant"  // a session, permanent or config grant
	SourceRule   Source = "rule"   // a config rule
	SourcePolicy Source = "policy" // no person: headless --on-prompt, trusted mode, no prompter, or no answer
)

// Request is one question put to the broker. Everything in it is shown in the
// dialog; Args verbatim.
type Request struct {
	ID           string          `json:"id"`                 // set by the Broker when empty
	Kind         Kind            `json:"kind"`               // what is asked
	Subject      string          `json:"subject"`            // who asks: an app name, or "hub"
	Object       string          `json:"object,omitempty"`   // what it touches: an app, a data key, a host
	Function     string          `json:"function,omitempty"` // the function or functionality, if any
	Args         json.RawMessage `json:"args,omitempty"`     // the exact data or arguments (JSON)
	Detail       string          `json:"detail,omitempty"`   // one human line: what will happen
	Warning      string          `json:"warning,omitempty"`  // the hub's assessment; required for collab, data, irreversible
	Expected     bool            `json:"expected"`           // the plan contained this step
	Irreversible bool            `json:"irreversible"`       // its effect cannot be undone
}

// IsIrreversible reports whether r asks for something that cannot be undone:
// such a request is never decided by a grant or an allow rule (invariant 3).
func (r Request) IsIrreversible() bool {
	return r.Irreversible || r.Kind == KindIrreversible
}

// Options returns the answers a dialog may offer for r. An irreversible
// request is offered only once and deny: it asks every time, so neither a
// session nor a permanent grant may come of it. The Broker treats any other
// answer to it as once.
func (r Request) Options() []Answer {
	if r.IsIrreversible() {
		return []Answer{AnswerOnce, AnswerDeny}
	}
	return []Answer{AnswerOnce, AnswerSession, AnswerPermanent, AnswerDeny}
}

// ErrInvalidRequest is matched by the error Broker.Request returns for a
// request it refuses to put to anyone.
var ErrInvalidRequest = errors.New("invalid permission request")

func (r Request) validate() error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrInvalidRequest, fmt.Sprintf(format, a...))
	}
	switch {
	case !r.Kind.known():
		return bad("unknown kind %q", r.Kind)
	case r.Subject == "":
		return bad("%s request without a subject", r.Kind)
	case r.Kind.needsWarning() && r.Warning == "":
		return bad("%s request from %q without the hub's warning", r.Kind, r.Subject)
	case len(r.Args) > 0 && !json.Valid(r.Args):
		return bad("%s request from %q: args are not valid JSON", r.Kind, r.Subject)
	}
	return nil
}

// Decision is the outcome of a request.
type Decision struct {
	RequestID string `json:"request_id"`
	Answer    Answer `json:"answer"`
	Allowed   bool   `json:"allowed"`
	Source    Source `json:"source"`
	Note      string `json:"note,omitempty"`     // with a deny: reaches the requesting model
	GrantID   string `json:"grant_id,omitempty"` // the grant that decided, or that this answer created
	Rule      string `json:"rule,omitempty"`     // the Where of the rule that decided
	// Permanent, with AnswerDeny, remembers the denial as a deny grant
	// (stored, or for the session when nothing persists). Never for an
	// irreversible request: those are never remembered.
	Permanent bool `json:"permanent,omitempty"`
	// Caveats, from a Prompter, scope the grant that a session or permanent
	// answer (or a remembered deny) creates.
	Caveats Caveats `json:"caveats,omitzero"`
}

// Prompter asks someone: the TUI dialog, or a headless policy. Prompt must
// return when ctx is done. Only Answer, Note, Permanent, Caveats and Source
// (SourcePolicy, for a Prompter that asks no person) are read from its
// Decision; the Broker fills in the rest.
type Prompter interface {
	Prompt(ctx context.Context, r Request) (Decision, error)
}

// Policy is a Prompter that asks no one: headless --on-prompt and trusted
// mode. Its decisions carry SourcePolicy. It never answers permanent (it
// answers session instead), and it denies irreversible requests unless
// Irreversible says otherwise.
type Policy struct {
	Answer       Answer // once, session or deny
	Irreversible Answer // the answer for irreversible requests; "" denies them
	Note         string // sent with a deny
}

// Prompt answers r by the policy at once.
func (p Policy) Prompt(ctx context.Context, r Request) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	a := p.Answer
	if r.IsIrreversible() {
		a = p.Irreversible
	}
	switch a {
	case AnswerOnce, AnswerSession:
	case AnswerPermanent:
		a = AnswerSession
	default:
		return Decision{Answer: AnswerDeny, Source: SourcePolicy, Note: p.Note}, nil
	}
	return Decision{Answer: a, Source: SourcePolicy}, nil
}

// newID returns a short random identifier.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
