package serve

import (
	"encoding/json"
	"time"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Protocol is the version of what client and serving process say to each
// other. A client speaks only its own: a serving process of another
// protocol is replaced when it is idle, else refused with a message that
// says how to stop it. Bump it with any change to the methods or types
// below that an older peer would misread.
const Protocol = 5

// The methods a client calls on the serving process.
const (
	mHello        = "hello"             // answered with a Challenge
	mAuth         = "auth"              // answered with a Welcome: the session opens
	mTooLarge     = "message.too_large" // what a message over the bound becomes
	mStatus       = "status"
	mShutdown     = "shutdown"
	mNewChat      = "chat.new"
	mChats        = "chat.list"
	mChat         = "chat.get"
	mTurns        = "chat.turns"
	mTurnsBefore  = "chat.turns_before"
	mDeleteChat   = "chat.delete"
	mWarm         = "chat.warm" // the planner's prompt read before the person asks
	mAsk          = "turn.ask"
	mRetry        = "turn.retry"
	mCancel       = "turn.cancel" // a notification
	mWorking      = "hub.working"
	mBackground   = "hub.background_calls"
	mNoteRevealed = "turn.note_revealed"
	mOwners       = "memory.owners"
	mMemory       = "memory.get"
	mExport       = "memory.export"
	mForget       = "memory.forget"
	mWaitMemory   = "memory.wait"
	mGrants       = "permissions.grants"
	mRevoke       = "permissions.revoke"
	mRevokeAll    = "permissions.revoke_all"
	mActions      = "permissions.actions"
	mTrusted      = "permissions.trusted"
	mSetTrusted   = "permissions.set_trusted"
	mApps         = "apps.list"
	mSetEnabled   = "apps.set_enabled"
	mRefresh      = "apps.refresh"
	mRelist       = "apps.relist"
	mInstalled    = "models.installed"
	mSetModel     = "models.set"
	mCurrent      = "models.current"
	mSandbox      = "sandbox.report"
	mChanges      = "changes.list"
	mChangeSet    = "changes.get"
	mDecide       = "changes.decide"
)

// The methods the serving process calls on a client.
const (
	mEvent  = "turn.event" // a notification: one event of a running turn
	mPrompt = "permissions.prompt"
)

// Hello opens a session.
type Hello struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	// Config is the fingerprint of the client's configuration: a serving
	// process runs one configuration, and a client of another is told so.
	Config string `json:"config"`
	// Keys are the same key by key (Keys), and File the config file
	// the client read: what a difference is named with.
	Keys map[string]string `json:"keys,omitempty"`
	File string            `json:"file,omitempty"`
	Pid  int               `json:"pid"`
	// Kind names the client for doctor ("tui", "ask", "permissions"…).
	Kind string `json:"kind"`
	// Build identifies the client's binary (Build).
	Build string `json:"build,omitempty"`
	// Nonce is the client's fresh challenge (hex), which the serving
	// process's proof covers.
	Nonce string `json:"nonce"`
	// Profile is the folder the session works in and the apps it
	// enabled; Models the models it runs with. They are the session's
	// own: clients of one serving process may differ in both (nil, zero:
	// the serving process's).
	Profile *engine.ProfileSpec `json:"profile,omitempty"`
	Models  engine.Models       `json:"models,omitzero"`
}

// Challenge is the serving process's answer to Hello: its own nonce, and
// its proof that it knows the data directory's key (auth.go).
type Challenge struct {
	Protocol int    `json:"protocol"`
	Nonce    string `json:"nonce"`
	Proof    string `json:"proof"`
}

// Auth is the client's proof that it can read the data directory's key.
type Auth struct {
	Proof string `json:"proof"`
}

// Welcome is the serving process's answer to Auth.
type Welcome struct {
	Protocol int    `json:"protocol"`
	Version  string `json:"version"`
	Config   string `json:"config"`
	Pid      int    `json:"pid"`
	// Session is the client's session: its session grants, trusted mode
	// and dialogs are its own.
	Session string `json:"session"`
	// Busy is true when other clients are connected or turns run: a
	// mismatched process that is not busy may be replaced.
	Busy bool `json:"busy"`
	// Ollama is why the serving process could not reach or start Ollama,
	// if so.
	Ollama *WireError `json:"ollama,omitempty"`
	// HubModel is the hub's model.
	HubModel string `json:"hub_model"`
	// Keys are its configuration key by key (Keys), File its config
	// file.
	Keys map[string]string `json:"keys,omitempty"`
	File string            `json:"file,omitempty"`
	// Build identifies the serving process's binary: an idle process of
	// another build is replaced by the client's own (a rebuilt or
	// upgraded bulkhead), a busy one is used as it is.
	Build string `json:"build,omitempty"`
}

// Status is what doctor shows of the serving process.
type Status struct {
	Pid      int      `json:"pid"`
	Version  string   `json:"version"`
	Protocol int      `json:"protocol"`
	Since    string   `json:"since"` // RFC 3339
	Clients  []string `json:"clients"`
	Turns    int      `json:"turns"` // turns running now
	DataDir  string   `json:"data_dir"`
	Socket   string   `json:"socket"`
	IdleExit string   `json:"idle_exit"` // how long it stays once idle
	// Dumpable: the process's memory and environment could be read by
	// its user's other processes (bulkhead serve makes itself not).
	Dumpable bool `json:"dumpable"`
}

// ChatID names a chat.
type ChatID struct {
	ID string `json:"id"`
}

// NewChatParams asks for a new chat.
type NewChatParams struct {
	Private bool `json:"private"`
}

// TurnsBeforeParams pages a chat's turns backwards.
type TurnsBeforeParams struct {
	ID     string `json:"id"`
	Before uint64 `json:"before"`
	N      int    `json:"n"`
}

// TurnsPage is one page of turns.
type TurnsPage struct {
	Turns []hub.Turn `json:"turns"`
	More  bool       `json:"more"`
}

// AskParams runs one turn. Token names it for its events and for
// cancelling it.
type AskParams struct {
	Token string         `json:"token"`
	Chat  string         `json:"chat"`
	Query string         `json:"query"`
	Opts  hub.AskOptions `json:"opts"`
	Seq   uint64         `json:"seq,omitempty"` // turn.retry: the turn to run again
}

// CancelParams cancels the turn of a token.
type CancelParams struct {
	Token string `json:"token"`
}

// EventParams carries one event of the turn of Token.
type EventParams struct {
	Token string    `json:"token"`
	Event WireEvent `json:"event"`
}

// WireEvent is a hub.Event whose error travels typed.
type WireEvent struct {
	hub.Event
	Err *WireError `json:"Err,omitempty"`
}

// RevealedParams notes that the user revealed a masked span.
type RevealedParams struct {
	Chat string `json:"chat"`
	Seq  uint64 `json:"seq"`
	Kind string `json:"kind"`
}

// Owner names a memory owner.
type Owner struct {
	Owner string `json:"owner"`
}

// GrantID names a grant.
type GrantID struct {
	ID string `json:"id"`
}

// ChangesDecision is the person's answer to a pending change set:
// accept the entries picked (none: all), or discard it.
type ChangesDecision struct {
	ID     string `json:"id"`
	Accept bool   `json:"accept"`
	Picks  []int  `json:"picks,omitempty"`
}

// Subject names whose grants to revoke ("" every one).
type Subject struct {
	Subject string `json:"subject"`
}

// Switch is a boolean setting.
type Switch struct {
	On bool `json:"on"`
}

// AppSwitch enables or disables an app.
type AppSwitch struct {
	App string `json:"app"`
	On  bool   `json:"on"`
}

// AppInfo is one installed app as the apps screen shows it.
type AppInfo struct {
	Manifest apps.Manifest  `json:"manifest"`
	Enabled  bool           `json:"enabled"`
	MCP      bool           `json:"mcp"`
	Remote   bool           `json:"remote"`
	Tools    []mcp.ToolInfo `json:"tools,omitempty"`
	// Unlisted, for an enabled MCP server bulkhead runs without (it
	// could not be started or listed), says why, and Fix how to list it.
	Unlisted string `json:"unlisted,omitempty"`
	Fix      string `json:"fix,omitempty"`
	// Listing: it is being listed in the background (its server
	// starting), since Since; Unlisted says so meanwhile.
	Listing bool      `json:"listing,omitempty"`
	Since   time.Time `json:"since,omitzero"`
	// Failed, for one that could not be started or listed (its listing
	// is over), says so in a line: its exit status and its stderr's last
	// line (engine.Failure); Unlisted and Fix say the rest.
	Failed string `json:"failed,omitempty"`
}

// ModelName names a model.
type ModelName struct {
	Name string `json:"name"`
}

// CurrentModels are the hub's and the spokes' models now.
type CurrentModels struct {
	Hub   string `json:"hub"`
	Spoke string `json:"spoke"`
}

// PromptParams is a permission dialog for the client whose turn asked.
type PromptParams struct {
	Request permissions.Request `json:"request"`
}

// RelistResult names the apps the serving process installed from the
// listing cache at a relist (Client.Relist).
type RelistResult struct {
	Apps []string `json:"apps"`
}

// RefreshResult is the outcome of listing an MCP app's tools again.
type RefreshResult struct {
	mcp.Refreshed
	Err *WireError `json:"Err,omitempty"`
}

// rawOf encodes v, or null.
func rawOf(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		return json.RawMessage("null")
	}
	return b
}

// AskResult is a turn's outcome: the turn as logged, and its error.
type AskResult struct {
	Turn hub.Turn   `json:"turn"`
	Err  *WireError `json:"err,omitempty"`
}

// GrantView is a grant with whether it failed its check.
type GrantView struct {
	permissions.Grant
	Invalid bool `json:"invalid"`
	// Private: a grant of one of the session's private chats, which goes
	// with the chat.
	Private bool `json:"private,omitempty"`
}
