package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// ConnectOptions says how to reach the serving process.
type ConnectOptions struct {
	DataDir     string
	Fingerprint string
	Version     string
	Kind        string // what the client is, for doctor: "tui", "ask"…
	// Prompter answers the permission dialogs of this client's turns
	// (nil: each is denied).
	Prompter permissions.Prompter
	// Start starts a serving process for the data directory when none
	// answers (nil: Connect fails with ErrNotServed instead). It returns
	// when the process is started; exited, if not nil, is closed when it
	// exits, with its error in *exitErr.
	Start func() (exited <-chan error, err error)
	// Wait bounds how long a started process may take to listen
	// (0: 60 s).
	Wait time.Duration
}

// ErrNotServed says that no process serves the data directory.
var ErrNotServed = errors.New("no bulkhead serves this data directory")

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

// Connect opens a session with the process serving opts.DataDir,
// starting one (opts.Start) when none answers. A serving process of
// another protocol or configuration is replaced when no other client
// uses it; else Connect says so and how to stop it.
func Connect(ctx context.Context, opts ConnectOptions) (*Client, error) {
	if opts.Wait <= 0 {
		opts.Wait = 60 * time.Second
	}
	c := &Client{opts: opts, asks: map[string]func(hub.Event){}}
	conn, w, err := c.open(ctx)
	if err != nil {
		return nil, err
	}
	c.conn, c.welcome = conn, w
	return c, nil
}

// open connects to the serving process, starting or replacing one as
// Connect says; the connection's events and dialogs come to c.
func (c *Client) open(ctx context.Context) (*jsonrpc2.Conn, Welcome, error) {
	opts := c.opts
	sock := SocketPath(opts.DataDir)
	for attempt := 0; ; attempt++ {
		conn, w, err := c.hello(ctx, sock)
		if err == nil {
			same := w.Protocol == Protocol && w.Config == opts.Fingerprint
			if same && (w.Build == build || w.Busy || attempt >= 49) {
				return conn, w, nil
			}
			if same {
				// Another build of bulkhead, idle: this one serves
				// instead.
				if err := conn.Call(ctx, mShutdown, nil, nil); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
					// Another client came meanwhile: use it as it is.
					return conn, w, nil
				}
				conn.Close()
				if err := waitExit(ctx, w.Pid, 30*time.Second); err != nil {
					return nil, w, err
				}
				continue
			}
			why := fmt.Sprintf("its configuration differs from this one (the config file, flags, OLLAMA_HOST or the workspace folder; %s here, %s there)", opts.Fingerprint, w.Config)
			if w.Protocol != Protocol {
				why = fmt.Sprintf("it is bulkhead %s, speaking protocol %d; this is bulkhead %s, speaking %d", w.Version, w.Protocol, opts.Version, Protocol)
			}
			if w.Busy && attempt < 50 {
				// A client that just left may not be gone yet.
				conn.Close()
				time.Sleep(100 * time.Millisecond)
				continue
			}
			if w.Busy || attempt >= 50 {
				conn.Close()
				return nil, w, fmt.Errorf("the data directory %s is served by another bulkhead (pid %d), and %s; it is in use: finish there, or use another --data-dir (it exits by itself once unused)", opts.DataDir, w.Pid, why)
			}
			// Nobody else uses it: replace it.
			if err := conn.Call(ctx, mShutdown, nil, nil); err != nil && !errors.Is(err, jsonrpc2.ErrClosed) {
				// Another client came meanwhile: ask again.
				conn.Close()
				time.Sleep(100 * time.Millisecond)
				continue
			}
			conn.Close()
			if err := waitExit(ctx, w.Pid, 30*time.Second); err != nil {
				return nil, w, err
			}
			continue
		}
		if !notServed(err) {
			return nil, w, err
		}
		if opts.Start == nil {
			return nil, w, ErrNotServed
		}
		if err := start(ctx, sock, opts); err != nil {
			return nil, w, err
		}
		attempt = 49 // a process started for this client is not replaced
	}
}

// notServed says whether a dial error means nothing listens there.
func notServed(err error) bool {
	return errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ENOENT)
}

// start starts a serving process, one client at a time (a lock file in
// the data directory), and waits until it listens.
func start(ctx context.Context, sock string, opts ConnectOptions) error {
	if err := os.MkdirAll(opts.DataDir, 0o700); err != nil {
		return fmt.Errorf("data directory %s: %w", opts.DataDir, err)
	}
	lock, err := os.OpenFile(filepath.Join(opts.DataDir, "serve.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	// Another client may have started one while this one waited.
	if c, err := dial(sock); err == nil {
		c.Close()
		return nil
	}
	exited, err := opts.Start()
	if err != nil {
		return fmt.Errorf("start bulkhead serve: %w", err)
	}
	deadline := time.Now().Add(opts.Wait)
	// How long a held directory may stay held: a process closing it
	// takes a moment.
	held := time.Now().Add(15 * time.Second)
	for {
		if c, err := dial(sock); err == nil {
			c.Close()
			return nil
		}
		select {
		case err := <-exited:
			if err != nil {
				return err
			}
			// It found the directory held: another process serves it,
			// or is closing it (a replaced one, an older bulkhead).
			// Try that one, then start again until the deadline.
			if c, derr := dial(sock); derr == nil {
				c.Close()
				return nil
			}
			if time.Now().After(held) {
				return fmt.Errorf("bulkhead serve exited at once: the data directory %s is held by another bulkhead process that does not serve it (an older bulkhead? close it, or use another --data-dir)", opts.DataDir)
			}
			time.Sleep(100 * time.Millisecond)
			if exited, err = opts.Start(); err != nil {
				return fmt.Errorf("start bulkhead serve: %w", err)
			}
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("bulkhead serve did not listen on %s within %s (see bulkhead.log in the data directory)", sock, opts.Wait)
		}
	}
}

// waitExit waits until the process pid has exited (it has closed the
// data directory then).
func waitExit(ctx context.Context, pid int, within time.Duration) error {
	deadline := time.Now().Add(within)
	if pid == os.Getpid() {
		// Served from this very process (tests): it cannot exit, and
		// stops serving when Serve returns.
		return nil
	}
	for alive(pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the bulkhead serving this data directory (pid %d) did not exit within %s", pid, within)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

// hello dials and says hello.
func (c *Client) hello(ctx context.Context, sock string) (*jsonrpc2.Conn, Welcome, error) {
	var w Welcome
	nc, err := dial(sock)
	if err != nil {
		return nil, w, err
	}
	conn := jsonrpc2.NewConn(context.Background(), jsonrpc2.NewBufferedStream(nc, jsonrpc2.VarintObjectCodec{}), clientHandler{c}, jsonrpc2.SetLogger(quiet))
	h := Hello{Protocol: Protocol, Version: c.opts.Version, Config: c.opts.Fingerprint, Pid: os.Getpid(), Kind: c.opts.Kind, Build: build}
	if err := conn.Call(ctx, mHello, h, &w); err != nil {
		conn.Close()
		if errors.Is(err, jsonrpc2.ErrClosed) {
			// It went away as this one came: as if nothing listened.
			return nil, w, &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}
		}
		return nil, w, fmt.Errorf("talk to the bulkhead serving %s: %w", c.opts.DataDir, fromRPC(err))
	}
	return conn, w, nil
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
// goroutine and replies, except to a call answered later.
type clientHandler struct{ c *Client }

func (h clientHandler) Handle(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
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
	return c.turn(ctx, mAsk, AskParams{Chat: chat, Query: query, Opts: opts}, emit)
}

// Retry runs a turn that did not finish again.
func (c *Client) Retry(ctx context.Context, chat string, seq uint64, emit func(hub.Event)) (hub.Turn, error) {
	return c.turn(ctx, mRetry, AskParams{Chat: chat, Seq: seq}, emit)
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

// BackgroundCalls counts the model calls of the memory upkeep since the
// serving process started.
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

// Shutdown asks the serving process to exit, which it does when no other
// client is connected; it returns once the process is gone (or within).
func (c *Client) Shutdown(within time.Duration) error {
	st, err := c.Status()
	if err != nil {
		return err
	}
	// The reply may be lost as the process closes its connections; a
	// client that just left may not be gone yet.
	deadline := time.Now().Add(within)
	for {
		err := c.call(mShutdown, nil, nil)
		if err == nil || errors.Is(err, ErrGone) {
			break
		}
		if !strings.Contains(err.Error(), errOthers.Error()) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Close()
	for alive(st.Pid) {
		if time.Now().After(deadline) {
			return fmt.Errorf("the bulkhead serving %s (pid %d) did not exit within %s", st.DataDir, st.Pid, within)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// alive says whether a process runs (a zombie, exited but not yet
// reaped, does not).
func alive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return !errors.Is(err, os.ErrNotExist)
	}
	// pid (comm) STATE …: the state follows the last ')'.
	if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) {
		return b[i+2] != 'Z'
	}
	return true
}

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
func (c *Client) Revoke(id string) error { return c.call(mRevoke, GrantID{ID: id}, nil) }

// RevokeAll revokes every grant of subject ("": every grant).
func (c *Client) RevokeAll(subject string) error {
	return c.call(mRevokeAll, Subject{Subject: subject}, nil)
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
func (a *remoteMCP) Remote() bool          { return a.info.Remote }

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

// Stop asks the process serving dataDir, if any, to exit (it does when
// no other client is connected) and waits until it has, or within.
func Stop(dataDir string, within time.Duration) error {
	c := &Client{opts: ConnectOptions{DataDir: dataDir, Kind: "stop"}, asks: map[string]func(hub.Event){}}
	conn, w, err := c.hello(context.Background(), SocketPath(dataDir))
	if err != nil {
		if notServed(err) {
			return nil
		}
		return err
	}
	c.conn, c.welcome = conn, w
	return c.Shutdown(within)
}

// Query asks the process serving dataDir, if any, for its status,
// whatever its configuration (ErrNotServed: none serves it).
func Query(dataDir string) (Status, error) {
	c := &Client{opts: ConnectOptions{DataDir: dataDir, Kind: "status"}, asks: map[string]func(hub.Event){}}
	conn, w, err := c.hello(context.Background(), SocketPath(dataDir))
	if err != nil {
		if notServed(err) {
			return Status{}, ErrNotServed
		}
		return Status{}, err
	}
	c.conn, c.welcome = conn, w
	defer c.Close()
	return c.Status()
}
