package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Client is a session with the serving process. Its methods are those of
// the hub and the permission broker that the TUI and the commands use.
type Client struct {
	opts ConnectOptions

	reconnect sync.Mutex // one reconnection at a time
	mu        sync.Mutex
	conn      *jsonrpc2.Conn
	welcome   Welcome
	asks      map[string]func(hub.Event)
	apps      []AppInfo
}

// handle takes the serving process's calls: a turn's events, in order
// (this handler runs them one at a time, before the turn's own reply),
// and permission dialogs, each answered on its own goroutine.
func (c *Client) handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
	switch req.Method {
	case mEvent:
		var p EventParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		c.mu.Lock()
		emit := c.asks[p.Token]
		c.mu.Unlock()
		if emit != nil {
			ev := p.Event.Event
			ev.Err = p.Event.Err.err()
			emit(ev)
		}
		return nil, nil
	case mPrompt:
		var p PromptParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		id := req.ID
		go func() {
			var d permissions.Decision
			err := errors.New("this client answers no permission dialog")
			if c.opts.Prompter != nil {
				d, err = c.opts.Prompter.Prompt(ctx, p.Request)
			}
			if err != nil {
				_ = conn.ReplyWithError(ctx, id, rpcError(err))
				return
			}
			_ = conn.Reply(ctx, id, d)
		}()
		return nil, errDeferred
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no such method: " + req.Method}
}

// errDeferred is returned by handle for a call it answers later.
var errDeferred = errors.New("answered later")

// clientHandler runs Client.handle on the connection's reading
// goroutine and replies, except to a call answered later. Before live
// (the process on the socket proved the key) nothing is taken.
type clientHandler struct {
	c    *Client
	live *atomic.Bool
}

func (h clientHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
	if h.live == nil || !h.live.Load() {
		if !req.Notif {
			_ = conn.ReplyWithError(ctx, req.ID, rpcError(ErrNoSession))
		}
		return
	}
	res, err := h.c.handle(ctx, conn, req)
	if req.Notif || errors.Is(err, errDeferred) {
		return
	}
	if err != nil {
		var re *jsonrpc2.Error
		if !errors.As(err, &re) {
			re = rpcError(err)
		}
		_ = conn.ReplyWithError(ctx, req.ID, re)
		return
	}
	_ = conn.Reply(ctx, req.ID, res)
}

// Close ends the session: its turns are cancelled, its dialogs denied,
// its private chats forgotten.
func (c *Client) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.Close()
}

// Done is closed when the serving process goes away.
func (c *Client) Done() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.DisconnectNotify()
}

// Welcome is what the serving process said at hello.
func (c *Client) Welcome() Welcome {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.welcome
}

// OllamaErr is why the serving process could not reach Ollama, if so.
func (c *Client) OllamaErr() error { return c.Welcome().Ollama.err() }

// current is the connection, a new one when the serving process went
// away and this client may start another (a long-lived client, the TUI,
// outlives a crashed or idle-exited serving process: its next call starts
// a new one, as the next command would).
func (c *Client) current() (*jsonrpc2.Conn, error) {
	c.mu.Lock()
	conn := c.conn
	c.mu.Unlock()
	select {
	case <-conn.DisconnectNotify():
	default:
		return conn, nil
	}
	if c.opts.Start == nil {
		return nil, ErrGone
	}
	c.reconnect.Lock()
	defer c.reconnect.Unlock()
	c.mu.Lock()
	now := c.conn
	c.mu.Unlock()
	if now != conn { // another call got there first
		return now, nil
	}
	n, w, err := c.open(context.Background())
	if err != nil {
		return nil, fmt.Errorf("%w; starting another failed: %w", ErrGone, err)
	}
	c.mu.Lock()
	c.conn, c.welcome, c.apps = n, w, nil
	c.mu.Unlock()
	return n, nil
}

// call makes one call; its error is the serving process's.
func (c *Client) call(method string, p, result any) error {
	conn, err := c.current()
	if err != nil {
		return err
	}
	return fromRPC(conn.Call(context.Background(), method, p, result))
}

// Status is the serving process's state.
func (c *Client) Status() (Status, error) {
	var st Status
	return st, c.call(mStatus, nil, &st)
}

// NewChat starts a chat; a private one lives in the serving process's
// memory and is forgotten when this client goes.
func (c *Client) NewChat(private bool) (hub.Chat, error) {
	var ch hub.Chat
	return ch, c.call(mNewChat, NewChatParams{Private: private}, &ch)
}

// Chats lists the kept chats, most recent first.
func (c *Client) Chats() ([]hub.Chat, error) {
	var cs []hub.Chat
	return cs, c.call(mChats, nil, &cs)
}

// Chat reads one chat.
func (c *Client) Chat(id string) (hub.Chat, error) {
	var ch hub.Chat
	return ch, c.call(mChat, ChatID{ID: id}, &ch)
}

// Turns reads every turn of a chat, oldest first.
func (c *Client) Turns(id string) ([]hub.Turn, error) {
	var ts []hub.Turn
	return ts, c.call(mTurns, ChatID{ID: id}, &ts)
}

// TurnsBefore reads up to n turns of a chat below before, oldest first.
func (c *Client) TurnsBefore(id string, before uint64, n int) ([]hub.Turn, bool, error) {
	var p TurnsPage
	err := c.call(mTurnsBefore, TurnsBeforeParams{ID: id, Before: before, N: n}, &p)
	return p.Turns, p.More, err
}

// Warm has the serving process read the planner's prompt for chat's next
// request ("": a new chat's) before the person asks (hub.Operator.Warm);
// it returns at once.
func (c *Client) Warm(chat string) error { return c.call(mWarm, ChatID{ID: chat}, nil) }

// DeleteChat deletes a chat and what every app remembers of it.
func (c *Client) DeleteChat(id string) error { return c.call(mDeleteChat, ChatID{ID: id}, nil) }

// Ask runs one request.
func (c *Client) Ask(ctx context.Context, chat, query string, emit func(hub.Event)) (hub.Turn, error) {
	return c.AskWith(ctx, chat, query, hub.AskOptions{}, emit)
}

// AskWith runs one request in the serving process; its events come to
// emit in order, before it returns. Cancelling ctx cancels the turn
// there, and the turn it returns is the one logged.
func (c *Client) AskWith(ctx context.Context, chat, query string, opts hub.AskOptions, emit func(hub.Event)) (hub.Turn, error) {
	if !opts.Clock.Set {
		opts.Clock = hub.LocalClock() // the person's day is this client's
	}
	return c.turn(ctx, mAsk, AskParams{Chat: chat, Query: query, Opts: opts}, emit)
}

// Retry runs a turn that did not finish again.
func (c *Client) Retry(ctx context.Context, chat string, seq uint64, emit func(hub.Event)) (hub.Turn, error) {
	return c.turn(ctx, mRetry, AskParams{Chat: chat, Seq: seq, Opts: hub.AskOptions{Clock: hub.LocalClock()}}, emit)
}

func (c *Client) turn(ctx context.Context, method string, p AskParams, emit func(hub.Event)) (hub.Turn, error) {
	p.Token = newToken()
	if emit == nil {
		emit = func(hub.Event) {}
	}
	c.mu.Lock()
	c.asks[p.Token] = emit
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.asks, p.Token)
		c.mu.Unlock()
	}()
	done := make(chan struct{})
	defer close(done)
	conn, err := c.current()
	if err != nil {
		return hub.Turn{}, err
	}
	go func() {
		select {
		case <-ctx.Done():
			_ = conn.Notify(context.Background(), mCancel, CancelParams{Token: p.Token})
		case <-done:
		}
	}()
	var r AskResult
	if err := fromRPC(conn.Call(context.Background(), method, p, &r)); err != nil {
		if errors.Is(err, ErrGone) && ctx.Err() != nil {
			return hub.Turn{}, ctx.Err()
		}
		return hub.Turn{}, err
	}
	return r.Turn, r.Err.err()
}

// Working lists the apps whose spokes are working now.
func (c *Client) Working() []string {
	var w []string
	_ = c.call(mWorking, nil, &w)
	return w
}

// BackgroundCalls counts the model calls of the memory upkeep and the
// seats since the serving process started.
func (c *Client) BackgroundCalls() int64 {
	var n int64
	_ = c.call(mBackground, nil, &n)
	return n
}

// HubModel is the hub's model as the serving process last said (at
// hello, or after SetModel): no call out.
func (c *Client) HubModel() string { return c.Welcome().HubModel }

// Installed lists Ollama's models with what each can do, as the serving
// process's Ollama says.
func (c *Client) Installed(ctx context.Context) ([]llm.ModelInfo, error) {
	var ms []llm.ModelInfo
	return ms, c.call(mInstalled, nil, &ms)
}

// SetModel switches the serving process's hub and spokes to an installed
// model that can call tools, until it exits (the config file is not
// written). It is refused while other clients are connected: the models
// are every session's.
func (c *Client) SetModel(ctx context.Context, name string) error {
	if err := c.call(mSetModel, ModelName{Name: name}, nil); err != nil {
		return err
	}
	h, _ := c.Current()
	c.mu.Lock()
	c.welcome.HubModel = h
	c.mu.Unlock()
	return nil
}

// SandboxReport is what the serving process's probe of the sandbox of
// out-of-process apps found.
func (c *Client) SandboxReport() sandbox.Report {
	var r sandbox.Report
	if err := c.call(mSandbox, nil, &r); err != nil {
		return sandbox.Report{Err: err.Error()}
	}
	return r
}

// Current names the hub's model and the spokes'.
func (c *Client) Current() (hubModel, spokeModel string) {
	var m CurrentModels
	if err := c.call(mCurrent, nil, &m); err != nil {
		return c.Welcome().HubModel, ""
	}
	return m.Hub, m.Spoke
}

// NoteRevealed logs that the user revealed a masked span.
func (c *Client) NoteRevealed(chat string, seq uint64, kind string) error {
	return c.call(mNoteRevealed, RevealedParams{Chat: chat, Seq: seq, Kind: kind}, nil)
}

// MemoryOwners lists whose memory the data directory holds.
func (c *Client) MemoryOwners() ([]string, error) {
	var o []string
	return o, c.call(mOwners, nil, &o)
}

// Memory is what one owner remembers.
func (c *Client) Memory(owner string) (hub.OwnerMemory, error) {
	var m hub.OwnerMemory
	return m, c.call(mMemory, Owner{Owner: owner}, &m)
}

// ExportMemory is what every owner remembers.
func (c *Client) ExportMemory() ([]hub.OwnerMemory, error) {
	var m []hub.OwnerMemory
	return m, c.call(mExport, nil, &m)
}

// Forget forgets what owner remembers.
func (c *Client) Forget(owner string) error { return c.call(mForget, Owner{Owner: owner}, nil) }

// WaitMemory waits (30 s at most) for the memory updates already due.
func (c *Client) WaitMemory() error { return c.call(mWaitMemory, nil, nil) }

// Grants lists the permanent grants and this session's.
func (c *Client) Grants() []permissions.Grant {
	var vs []GrantView
	_ = c.call(mGrants, nil, &vs)
	out := make([]permissions.Grant, len(vs))
	for i, v := range vs {
		out[i] = v.Grant
		out[i].Invalid = v.Invalid
	}
	return out
}

// Revoke revokes one grant.
func (c *Client) Revoke(id string) error {
	_, err := c.RevokeReport(id)
	return err
}

// RevokeReport is Revoke, saying what it did: which apps' processes held
// access the grant gave, and were stopped.
func (c *Client) RevokeReport(id string) (permissions.Revoked, error) {
	var r permissions.Revoked
	return r, c.call(mRevoke, GrantID{ID: id}, &r)
}

// RevokeAll revokes every grant of subject ("": every grant).
func (c *Client) RevokeAll(subject string) error {
	_, err := c.RevokeAllReport(subject)
	return err
}

// RevokeAllReport is RevokeAll, saying what it did: how many grants
// went, and which apps' processes were stopped.
func (c *Client) RevokeAllReport(subject string) (permissions.Revoked, error) {
	var r permissions.Revoked
	return r, c.call(mRevokeAll, Subject{Subject: subject}, &r)
}

// Changes lists the change sets waiting for the person.
func (c *Client) Changes() ([]hub.PendingSet, error) {
	var out []hub.PendingSet
	return out, c.call(mChanges, nil, &out)
}

// ChangeSet is one pending change set, as its dialog shows it.
func (c *Client) ChangeSet(id string) (permissions.Request, error) {
	var r permissions.Request
	return r, c.call(mChangeSet, GrantID{ID: id}, &r)
}

// DecideChanges accepts the entries picked of a pending set (nil: all),
// or discards it.
func (c *Client) DecideChanges(id string, accept bool, picks []int) (hub.ChangesOutcome, error) {
	var out hub.ChangesOutcome
	return out, c.call(mDecide, ChangesDecision{ID: id, Accept: accept, Picks: picks}, &out)
}

// Actions is the action log, oldest first.
func (c *Client) Actions() ([]permissions.Entry, error) {
	var es []permissions.Entry
	return es, c.call(mActions, nil, &es)
}

// Trusted says whether this session is in trusted mode.
func (c *Client) Trusted() bool {
	var on bool
	_ = c.call(mTrusted, nil, &on)
	return on
}

// SetTrusted switches this session's trusted mode.
func (c *Client) SetTrusted(on bool) { _ = c.call(mSetTrusted, Switch{On: on}, nil) }

// Apps lists the installed apps, read again from the serving process.
func (c *Client) Apps() ([]AppInfo, error) {
	var as []AppInfo
	if err := c.call(mApps, nil, &as); err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.apps = as
	c.mu.Unlock()
	return as, nil
}

// Names lists the installed apps (as the serving process last said).
func (c *Client) Names() []string {
	c.mu.Lock()
	as := c.apps
	c.mu.Unlock()
	if as == nil {
		as, _ = c.Apps()
	}
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Manifest.Name
	}
	return names
}

// App is an installed app as the apps screen reads it: its manifest, and
// for an MCP app its tools and a refresh. It cannot be called here.
func (c *Client) App(name string) (apps.App, bool) {
	c.mu.Lock()
	as := c.apps
	c.mu.Unlock()
	if as == nil {
		as, _ = c.Apps()
	}
	for _, a := range as {
		if a.Manifest.Name == name {
			if a.MCP {
				return &remoteMCP{remoteApp{a}, c}, true
			}
			return &remoteApp{a}, true
		}
	}
	return nil, false
}

// Enabled says whether an app may be planned for.
func (c *Client) Enabled(app string) bool {
	as, err := c.Apps()
	if err != nil {
		return false
	}
	for _, a := range as {
		if a.Manifest.Name == app {
			return a.Enabled
		}
	}
	return false
}

// SetEnabled enables or disables an app.
func (c *Client) SetEnabled(app string, on bool) error {
	return c.call(mSetEnabled, AppSwitch{App: app, On: on}, nil)
}

// Listing names the MCP servers of the session's apps being listed in
// the background now (their servers starting), with since when: the
// status bar shows them.
func (c *Client) Listing() map[string]time.Time {
	as, err := c.Apps()
	if err != nil {
		return nil
	}
	var out map[string]time.Time
	for _, a := range as {
		if a.Listing {
			if out == nil {
				out = map[string]time.Time{}
			}
			out[a.Manifest.Name] = a.Since
		}
	}
	return out
}

// ListingState is Listing, with the MCP servers of the session's apps
// that could not be started or listed (AppInfo.Failed), sorted: what
// the status line says of them.
func (c *Client) ListingState() (listing map[string]time.Time, failed []string) {
	as, err := c.Apps()
	if err != nil {
		return nil, nil
	}
	for _, a := range as {
		switch {
		case a.Listing:
			if listing == nil {
				listing = map[string]time.Time{}
			}
			listing[a.Manifest.Name] = a.Since
		case a.Failed != "":
			failed = append(failed, a.Manifest.Name)
		}
	}
	slices.Sort(failed)
	return listing, failed
}

// Relist has the serving process take what the MCP listing cache in the
// data directory lists now (engine.Relist) — a command that listed a
// server here (doctor, `bulkhead mcp add`) calls it: its open sessions
// use the new listing from their next call, and sessions that start
// later from their first. It names the apps installed from a new
// listing.
func (c *Client) Relist() ([]string, error) {
	var r RelistResult
	return r.Apps, c.call(mRelist, nil, &r)
}

// remoteApp is an app of the serving process, as data.
type remoteApp struct{ info AppInfo }

func (a *remoteApp) Manifest() apps.Manifest { return a.info.Manifest }

func (a *remoteApp) Call(context.Context, apps.Call) (json.RawMessage, error) {
	return nil, errors.New("apps run in the serving process")
}

// remoteMCP is an MCP app of the serving process.
type remoteMCP struct {
	remoteApp
	c *Client
}

func (a *remoteMCP) Tools() []mcp.ToolInfo { return a.info.Tools }

// Unlisted says why an enabled MCP server runs not (it could not be
// listed), and how to list it; "" when it is installed.
func (a *remoteMCP) Unlisted() (string, string) { return a.info.Unlisted, a.info.Fix }
func (a *remoteMCP) Remote() bool               { return a.info.Remote }

// Listing says whether the server is being listed in the background
// (its server starting), and since when.
func (a *remoteMCP) Listing() (time.Time, bool) { return a.info.Since, a.info.Listing }

// Refresh lists the server's tools again, in the serving process.
func (a *remoteMCP) Refresh(ctx context.Context) mcp.Refreshed {
	var r RefreshResult
	if err := a.c.call(mRefresh, Owner{Owner: a.info.Manifest.Name}, &r); err != nil {
		return mcp.Refreshed{App: a.info.Manifest.Name, Err: err}
	}
	out := r.Refreshed
	out.Err = r.Err.err()
	_, _ = a.c.Apps()
	return out
}
