package permissions

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Kind is what a request asks to do (DESIGN §4).
type Kind string

const (
	KindExec         Kind = "exec"         // run app Object for this request
	KindSelect       Kind = "select"       // choose app Object for a functionality several apps offer
	KindData         Kind = "data"         // share hub-held data Object with Subject
	KindCollab       Kind = "collab"       // Subject asks for a functionality that Object provides, or its answer back
	KindIrreversible Kind = "irreversible" // Subject performs Function(Args); asks every time
	KindNetwork      Kind = "network"      // Subject's process may connect to endpoint Object ("host:port")
	// KindChanges: Subject's process wrote into folder Object (a folder it
	// shares with the user); Changes is what it wrote, staged in its
	// layer. Allowed applies the entries picked (Decision.Picks; all when
	// none); a person's deny discards them; a deny no person gave (a
	// policy, no one to ask) leaves them pending. A set with a warned
	// entry asks every time (EveryTime).
	KindChanges Kind = "changes"
)

// Kinds lists every kind, in the order the design names them.
var Kinds = []Kind{KindExec, KindSelect, KindData, KindCollab, KindIrreversible, KindNetwork, KindChanges}

func (k Kind) known() bool {
	for _, x := range Kinds {
		if k == x {
			return true
		}
	}
	return false
}

// needsWarning reports whether a dialog of kind k must carry the hub's
// assessment (invariant 2: every cross-app flow, every irreversible act,
// and every endpoint an app's process may reach).
func (k Kind) needsWarning() bool {
	return k == KindCollab || k == KindData || k == KindIrreversible || k == KindNetwork || k == KindChanges
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
	// SourceVanilla: the --vanilla baseline, which asks nothing; its calls
	// are logged so that the action log shows what it did.
	SourceVanilla Source = "vanilla"
)

// Request is one question put to the broker. Everything in it is shown in the
// dialog; Args verbatim.
type Request struct {
	ID       string          `json:"id"`                 // set by the Broker when empty
	Kind     Kind            `json:"kind"`               // what is asked
	Subject  string          `json:"subject"`            // who asks: an app name, or "hub"
	Object   string          `json:"object,omitempty"`   // what it touches: an app, a data key, a host
	Function string          `json:"function,omitempty"` // the function or functionality, if any
	Args     json.RawMessage `json:"args,omitempty"`     // the exact data or arguments (JSON)
	Detail   string          `json:"detail,omitempty"`   // one human line: what will happen
	Warning  string          `json:"warning,omitempty"`  // the hub's assessment; required for collab, data, irreversible
	Expected bool            `json:"expected"`           // the hub judged it expected (see the package doc)
	// Reason is, for an expected request, the warning's first clause
	// whole — the plan's reason, the user's words in it as they wrote
	// them — so that a dialog can draw it apart from the concerns after
	// it without cutting the text at a character.
	Reason       string `json:"reason,omitempty"`
	Irreversible bool   `json:"irreversible"` // its effect cannot be undone
	// Concerns are the risks the hub found (not expected, irreversible,
	// labels the receiver is not cleared for, instruction-like content,
	// values that did not come from the user). A request with none is
	// routine: see Routine.
	Concerns []Concern `json:"concerns,omitempty"`
	// Provenance says, per value of Args, where the hub traced it from.
	Provenance []Provenance `json:"provenance,omitempty"`
	// Labels are the data labels of what the request carries (medical,
	// financial, ...). A grant made from an answer to it covers later
	// requests only while their labels are among these.
	Labels []string `json:"labels,omitempty"`
	// NoPermanent: the request may not be allowed permanently (a choice
	// among apps that an app's request caused).
	NoPermanent bool `json:"no_permanent,omitempty"`
	// Explain is what the app says the call would touch (what an id
	// denotes, where a path leads): the app's words, shown as such, with
	// ExplainedBy, the app that said them (in a collab request, the app
	// asked for the functionality, not the one asking).
	Explain     string `json:"explain,omitempty"`
	ExplainedBy string `json:"explained_by,omitempty"`
	// Choices, for a select request, are the apps that could serve
	// (Object is then empty): the person — or a rule, or a default made
	// by allowing one permanently — chooses one; a policy never does.
	Choices []string `json:"choices,omitempty"`
	// Session names the client session whose turn asks, when one process
	// serves several (see WithSession); "" for a process of its own. A
	// session grant covers the requests of its own session only, and
	// each session's dialogs come one at a time, apart from the others'.
	Session string `json:"session,omitempty"`
	// Private: the request comes from a private turn (a private chat, a
	// private query), of which nothing may be kept: it offers no
	// permanent answer, and a dialog offers no limit that would hold its
	// arguments' text.
	Private bool `json:"private,omitempty"`
	// Chat is the chat whose turn asked (WithChat), so that deleting the
	// chat takes its words out of the action log (Broker.ForgetChat).
	Chat string `json:"chat,omitempty"`
	// Folder is the folder the turn's apps work in, set only when the
	// chat was started in another (ChatFolder): a chat resumed elsewhere
	// must never act on one folder while it reads as the other, so every
	// dialog names both (FolderWords).
	Folder     string `json:"folder,omitempty"`
	ChatFolder string `json:"chat_folder,omitempty"`
	// Change is what the call would do to a file (a diff), when the app
	// can say what it would replace (apps.Previewer).
	Change *Change `json:"change,omitempty"`
	// Changes, for KindChanges, is the change set put to the person.
	Changes *ChangeSet `json:"changes,omitempty"`
}

// UndoClause is the warning's clause for an action that cannot be undone.
const UndoClause = "cannot be undone"

// WarningBesidesUndo is Warning less its UndoClause: for a dialog that
// says so already, where the reader sees it first, so that it is said
// once.
func (r Request) WarningBesidesUndo() string {
	parts := strings.Split(r.Warning, "; ")
	out := parts[:0]
	for _, p := range parts {
		if strings.TrimSpace(p) != UndoClause {
			out = append(out, p)
		}
	}
	return strings.Join(out, "; ")
}

// FolderWords say, when the chat was started in another folder than the
// one its apps work in now, both ("" otherwise).
func (r Request) FolderWords() string {
	if r.Folder == "" {
		return ""
	}
	return fmt.Sprintf("The apps work in %s now; this chat was started in %s.", r.Folder, r.ChatFolder)
}

type chatKey struct{}

// WithChat returns ctx marked as the work of a turn of chat id: the
// requests made under it carry the chat (Request.Chat).
func WithChat(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, chatKey{}, id)
}

// ChatOf is the chat WithChat marked ctx with, or "".
func ChatOf(ctx context.Context) string {
	id, _ := ctx.Value(chatKey{}).(string)
	return id
}

type sessionKey struct{}

// WithSession returns ctx marked as the work of client session id: the
// hub puts it on every request its turn makes.
func WithSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// SessionOf is the client session ctx was marked with, or "".
func SessionOf(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

// Concern is one risk the hub found in a request.
type Concern string

// The concerns the hub reports.
const (
	ConcernUnexpected   Concern = "not-expected"     // the plan did not expect it from this app, here, now
	ConcernIrreversible Concern = "irreversible"     // it cannot be undone
	ConcernLabels       Concern = "uncleared-labels" // it carries data the receiver is not cleared for
	ConcernInstructions Concern = "instruction-like" // it carries instruction-like text
	ConcernForeign      Concern = "foreign-values"   // a decisive value did not come from the user
	ConcernNetwork      Concern = "network"          // it lets an app's process send what it read to a host
	ConcernFreeText     Concern = "free-text"        // it carries an app's free text to an app outside bulkhead's process
	ConcernChoice       Concern = "choice"           // it chooses among apps the plan left open
	ConcernRunsLater    Concern = "runs-later"       // it changes a file another program runs or trusts later (git's hooks, .envrc, …)
	ConcernConflict     Concern = "conflict"         // it replaces a file of the user's that changed after the app started
)

// Provenance is where one value of a request came from.
type Provenance struct {
	// Path locates the value in Args: "to", "messages[0].id"; "" when
	// Args is the value itself.
	Path string `json:"path"`
	// Source is ProvenanceUser, ProvenancePlan, ProvenanceAllowed,
	// ProvenanceUnknown, or "<app>.<function>" (an app's output in this
	// turn; "<app>" alone for what the app wrote outside a call, such as
	// its description or its memory of earlier turns).
	Source string `json:"source"`
	// Via, for ProvenanceAllowed, is where the value came from before the
	// user let it flow ("<app>.<function>").
	Via string `json:"via,omitempty"`
	// Key marks a decisive argument (a recipient, a path, a command, an
	// amount, a target).
	Key bool `json:"key,omitempty"`
	// Shown is how a value with characters outside plain ASCII is shown
	// beside itself, as browsers show a suspicious host: its punycode
	// form and its code points ("bob@xn--exmple-4nf.com (U+0430 CYRILLIC
	// SMALL LETTER A)"), with the value you typed it imitates, if any.
	Shown string `json:"shown,omitempty"`
}

// Provenance sources that are not an app.
const (
	ProvenanceUser    = "user"    // typed by the user
	ProvenancePlan    = "plan"    // written by the hub's planner, which reads only the user's words
	ProvenanceAllowed = "allowed" // a whole field of data the user let flow to this app (a data or collab answer)
	ProvenanceDefault = "default" // the function's declared default (a boolean or null left as it is)
	ProvenanceUnknown = "unknown" // written by a model, from no value the hub saw
	// ProvenanceBound: equal to a binding of the plan's step (Via says
	// which: a literal of the request, a field of an earlier step, an
	// entity).
	ProvenanceBound = "bound"
	// ProvenanceHistory: the user's words in an earlier turn of the chat,
	// not this request — no binding, so not the user's for this step.
	ProvenanceHistory = "history"
	// ProvenanceDoubted: in the user's words of this request, but with no
	// single reading there (a value the words rule out, ask about, quote,
	// or give beside another of its kind): not the user's (Via says why,
	// with the user's sentence).
	ProvenanceDoubted = "doubted"
)

// Trusted reports whether the value is the user's: typed in this request,
// written by the hub's planner from it, bound by the plan, or the
// function's default. Data the user let flow is not (an app chose those
// values), nor words of an earlier turn, nor words of this request that
// leave the value no single reading (ProvenanceDoubted).
func (p Provenance) Trusted() bool {
	switch p.Source {
	case ProvenanceUser, ProvenancePlan, ProvenanceDefault, ProvenanceBound:
		return true
	case ProvenanceDoubted:
		return false
	}
	return false
}

// Routine reports whether r is expected, reversible and free of every
// concern: what trusted-session mode and a headless "expected" policy may
// allow without asking.
func (r Request) Routine() bool {
	return r.Expected && !r.EveryTime() && len(r.Concerns) == 0
}

// EveryTime reports whether r asks every time: no grant, allow rule or
// trusted session decides it, and no session or permanent answer is
// offered — an irreversible request, and a change set with a warned
// entry (invariants 3 and 10).
func (r Request) EveryTime() bool {
	return r.IsIrreversible() || r.Kind == KindChanges && (r.Changes == nil || r.Changes.Warned())
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
	switch {
	case r.EveryTime():
		return []Answer{AnswerOnce, AnswerDeny}
	case r.NoPermanent, r.Private:
		return []Answer{AnswerOnce, AnswerSession, AnswerDeny}
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
	case r.Kind == KindChanges && r.Changes == nil:
		return bad("changes request from %q without its change set", r.Subject)
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
	// Choice is the one of Request.Choices that was chosen (an allow of a
	// request with choices names one; a grant is made for it).
	Choice string `json:"choice,omitempty"`
	// Picks, with an allow of a change set, are the entries accepted (by
	// index in Request.Changes.Entries); none: all of them. An answer
	// that accepts some is once: a grant covers whole sets only.
	Picks []int `json:"picks,omitempty"`
	// Later, with a deny of a change set: the person left it pending,
	// to decide later (bulkhead changes), rather than discarding it.
	Later bool `json:"later,omitempty"`
	// ruled, with an allow by a rule, is what the rule allowed (kind,
	// subject, object, function): the access it gives lasts while the
	// rules allow that (Broker.Lease).
	ruled *Request
}

// Pending reports whether d leaves a change set pending — neither
// applied nor discarded: the person chose to decide later, or no person
// answered (a policy, a rule).
func (d Decision) Pending() bool {
	return !d.Allowed && (d.Later || d.Source != SourceUser)
}

// Prompter asks someone: the TUI dialog, or a headless policy. Prompt must
// return when ctx is done. Only Answer, Note, Permanent, Caveats, Choice,
// Picks and Source (SourcePolicy, for a Prompter that asks no person)
// are read from its Decision; the Broker fills in the rest.
type Prompter interface {
	Prompt(ctx context.Context, r Request) (Decision, error)
}

// Policy is a Prompter that asks no one: headless --on-prompt and trusted
// mode. Its decisions carry SourcePolicy. It never answers permanent (it
// answers session instead), and it denies irreversible requests unless
// Irreversible says otherwise. With RoutineOnly it answers Answer only to
// routine requests (Request.Routine: expected, reversible, no concern)
// and denies every other one, irreversible ones included.
type Policy struct {
	Answer       Answer // once, session or deny
	Irreversible Answer // the answer for irreversible requests; "" denies them
	Note         string // sent with a deny
	RoutineOnly  bool
}

// Prompt answers r by the policy at once.
func (p Policy) Prompt(ctx context.Context, r Request) (Decision, error) {
	if err := ctx.Err(); err != nil {
		return Decision{}, err
	}
	a := p.Answer
	switch {
	case r.IsIrreversible():
		a = p.Irreversible
	case r.Kind == KindChanges && !r.Routine():
		// A change set that holds a warned entry, or that the plan did
		// not expect, is the person's to accept: a policy leaves it
		// pending.
		return Decision{Answer: AnswerDeny, Source: SourcePolicy, Note: "left pending: a change set that is not routine is yours to accept (bulkhead changes)"}, nil
	}
	if len(r.Choices) > 0 {
		// Which app serves is the person's choice, or a rule's.
		return Decision{Answer: AnswerDeny, Source: SourcePolicy,
			Note: fmt.Sprintf("several apps offer %s (%s): a policy does not choose among them; choose one in a dialog (allow it permanently to make it the default), with a rule, or by naming it in the request", r.Function, strings.Join(r.Choices, ", "))}, nil
	}
	if p.RoutineOnly && !r.Routine() {
		return Decision{Answer: AnswerDeny, Source: SourcePolicy, Note: p.Note}, nil
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

// Words says where the value came from, as a dialog says it: "typed by
// you", "the hub's plan", "from mail.read"… (raw names: a terminal caller
// cleans them).
func (p Provenance) Words() string {
	switch p.Source {
	case ProvenanceUser:
		return "typed by you"
	case ProvenancePlan:
		return "the hub's plan"
	case ProvenanceBound:
		if p.Via != "" {
			return p.Via
		}
		return "bound by the plan"
	case ProvenanceHistory:
		return "your words in an earlier turn"
	case ProvenanceDoubted:
		if p.Via != "" {
			return "in your words, but not as what you asked for: " + p.Via
		}
		return "in your words, but not as what you asked for"
	case ProvenanceDefault:
		return "the function's default"
	case ProvenanceAllowed:
		if p.Via != "" {
			return "shared by you, from " + p.Via
		}
		return "shared by you"
	case ProvenanceUnknown:
		return "a model wrote it"
	}
	return "from " + p.Source
}

// Label is how a dialog offers answer a for r: "allow once", "allow for
// this session" ("allow in this private chat" for a private one), "allow
// permanently", "deny". The TUI and the accessible chat say it alike.
func (r Request) Label(a Answer) string {
	if r.Kind == KindChanges {
		switch a {
		case AnswerOnce:
			return "accept all"
		case AnswerSession:
			if r.Private {
				return "accept its changes here in this private chat"
			}
			return "accept its changes here for this session"
		case AnswerPermanent:
			return "always accept its changes here"
		}
		return "discard"
	}
	switch a {
	case AnswerOnce:
		return "allow once"
	case AnswerSession:
		if r.Private {
			return "allow in this private chat"
		}
		return "allow for this session"
	case AnswerPermanent:
		return "allow permanently"
	}
	return "deny"
}
