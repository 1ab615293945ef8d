package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

// Options says how to serve.
type Options struct {
	// Fingerprint is the configuration's (Fingerprint): clients of
	// another are refused.
	Fingerprint string
	Version     string
	// Idle is how long the process stays with no client before it exits
	// (0: DefaultIdle).
	Idle time.Duration

	protocol int // Protocol; another in tests of a mismatch
}

// memoryWait bounds how long a client may wait for the memory upkeep.
const memoryWait = 30 * time.Second

// DefaultIdle is how long a serving process waits for a client once the
// last one left.
const DefaultIdle = 10 * time.Minute

// Server serves one engine's data directory on its socket.
type Server struct {
	eng     *engine.Engine
	opts    Options
	sock    string
	started time.Time
	log     *slog.Logger

	mu        sync.Mutex
	sessions  map[string]*session
	turns     int
	idleSince time.Time
	ollamaUp  bool // Ollama answered after failing at start
	orphaned  bool // the socket (or the whole data directory) was removed
	quit      chan struct{}
	quitOnce  sync.Once
}

// session is one connected client.
type session struct {
	id   string
	conn *jsonrpc2.Conn
	// ready is closed once conn is set: calls wait for it.
	ready chan struct{}
	// ctx ends when the client goes away: its turns are cancelled.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	hello   *Hello
	turns   map[string]context.CancelFunc // by token
	private []string                      // private chats it opened
	running sync.WaitGroup
}

// Serve serves eng on the socket of its data directory until ctx ends or
// no client has been connected for the idle time. The caller holds the
// data directory (engine.Open succeeded) and closes eng after.
func Serve(ctx context.Context, eng *engine.Engine, opts Options) error {
	if opts.Idle <= 0 {
		opts.Idle = DefaultIdle
	}
	if opts.protocol == 0 {
		opts.protocol = Protocol
	}
	s := &Server{eng: eng, opts: opts, sock: SocketPath(eng.Config.DataDir), started: time.Now(),
		log: eng.Log.With("component", "serve"), sessions: map[string]*session{}, idleSince: time.Now(), quit: make(chan struct{})}
	// Whatever socket is there is a dead process's: this one holds the
	// data directory.
	_ = os.Remove(s.sock)
	ln, err := listen(s.sock)
	if err != nil {
		return fmt.Errorf("serve %s: %w", s.sock, err)
	}
	defer os.Remove(s.sock)
	eng.SetPrompter(s)
	s.log.Info("serving", "socket", s.sock, "pid", os.Getpid(), "idle", opts.Idle.String())

	go func() {
		t := time.NewTicker(idleTick(opts.Idle))
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				s.stop()
				return
			case <-s.quit:
				return
			case <-t.C:
				if _, err := os.Lstat(s.sock); errors.Is(err, os.ErrNotExist) {
					// The data directory was removed, or the socket
					// with it: nobody can reach this process.
					s.log.Info("socket gone: exiting")
					s.mu.Lock()
					s.orphaned = true
					s.mu.Unlock()
					s.stop()
					return
				}
				s.mu.Lock()
				idle := len(s.sessions) == 0 && time.Since(s.idleSince) >= opts.Idle
				s.mu.Unlock()
				if idle {
					s.log.Info("idle: exiting")
					s.stop()
					return
				}
			}
		}
	}()
	go func() {
		<-s.quit
		ln.Close()
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-s.quit:
			default:
				s.stop()
			}
			break
		}
		if err := samePeer(c); err != nil {
			s.log.Warn("refused a connection", "err", err)
			c.Close()
			continue
		}
		s.open(c)
	}
	// Every client is told by its connection closing; their turns end as
	// cancelled.
	s.mu.Lock()
	all := make([]*session, 0, len(s.sessions))
	for _, ss := range s.sessions {
		all = append(all, ss)
	}
	s.mu.Unlock()
	for _, ss := range all {
		ss.conn.Close()
		ss.cancel()
		ss.running.Wait()
	}
	s.mu.Lock()
	orphaned := s.orphaned
	s.mu.Unlock()
	if orphaned {
		return ErrOrphaned
	}
	return nil
}

// ErrOrphaned is Serve's answer when its socket was removed under it —
// with the data directory, most likely: the store cannot be closed
// cleanly there (its files are gone), and the process should just exit.
var ErrOrphaned = errors.New("the data directory's socket was removed")

// idleTick is how often idleness is checked.
func idleTick(idle time.Duration) time.Duration {
	return min(max(idle/4, 50*time.Millisecond), time.Second)
}

func (s *Server) stop() { s.quitOnce.Do(func() { close(s.quit) }) }

// open starts a session on c.
func (s *Server) open(c net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	ss := &session{id: newToken(), ctx: ctx, cancel: cancel, turns: map[string]context.CancelFunc{}, ready: make(chan struct{})}
	h := jsonrpc2.AsyncHandler(jsonrpc2.HandlerWithError(func(_ context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) (any, error) {
		<-ss.ready
		res, err := s.handle(ss, req)
		if err != nil {
			return nil, rpcError(err)
		}
		return res, nil
	}))
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	ss.conn = jsonrpc2.NewConn(ctx, jsonrpc2.NewBufferedStream(c, jsonrpc2.VarintObjectCodec{}), h, jsonrpc2.SetLogger(quiet))
	close(ss.ready)
	go func() {
		<-ss.conn.DisconnectNotify()
		s.drop(ss)
	}()
}

var quiet = log.New(io.Discard, "", 0)

// drop ends a session whose client went away: its turns are cancelled,
// its open dialogs denied, its session grants and trusted mode dropped,
// its private chats forgotten.
func (s *Server) drop(ss *session) {
	ss.cancel()
	s.eng.Broker.EndSession(ss.id)
	ss.running.Wait()
	ss.mu.Lock()
	private := ss.private
	ss.mu.Unlock()
	for _, id := range private {
		if err := s.eng.Hub.DeleteChat(id); err != nil {
			s.log.Warn("forget a private chat", "err", err)
		}
	}
	s.mu.Lock()
	delete(s.sessions, ss.id)
	if len(s.sessions) == 0 {
		s.idleSince = time.Now()
	}
	s.mu.Unlock()
	s.log.Info("client left", "session", ss.id)
}

// Prompt puts a permission dialog to the client whose turn asked, and to
// no other: a request of a session that is gone is denied.
func (s *Server) Prompt(ctx context.Context, r permissions.Request) (permissions.Decision, error) {
	id := r.Session
	if id == "" {
		id = permissions.SessionOf(ctx)
	}
	s.mu.Lock()
	ss := s.sessions[id]
	s.mu.Unlock()
	if ss == nil {
		return permissions.Decision{}, fmt.Errorf("%w: the client that asked is gone", context.Canceled)
	}
	var d permissions.Decision
	err := ss.conn.Call(ctx, mPrompt, PromptParams{Request: r}, &d)
	if err != nil {
		if errors.Is(err, jsonrpc2.ErrClosed) {
			// Its turns end now, as cancelled, before anything else of
			// them runs.
			ss.cancel()
			return permissions.Decision{}, fmt.Errorf("%w: the client that asked went away", context.Canceled)
		}
		return permissions.Decision{}, fromRPC(err)
	}
	return d, nil
}

// handle runs one call of a session.
func (s *Server) handle(ss *session, req *jsonrpc2.Request) (any, error) {
	ss.mu.Lock()
	hello := ss.hello
	ss.mu.Unlock()
	if req.Method != mHello && hello == nil {
		return nil, errors.New("say hello first")
	}
	op, b := s.eng.Hub, s.eng.Broker
	switch req.Method {
	case mHello:
		var h Hello
		if err := params(req, &h); err != nil {
			return nil, err
		}
		ss.mu.Lock()
		ss.hello = &h
		ss.mu.Unlock()
		busy := s.busy(ss)
		s.log.Info("client", "session", ss.id, "kind", h.Kind, "pid", h.Pid, "version", h.Version)
		return Welcome{Protocol: s.opts.protocol, Version: s.opts.Version, Config: s.opts.Fingerprint, Pid: os.Getpid(), Build: build,
			Session: ss.id, Busy: busy, Ollama: toWire(s.ollama(ss.ctx)), HubModel: op.HubModel()}, nil
	case mStatus:
		return s.status(ss), nil
	case mShutdown:
		if s.busy(ss) {
			return nil, errOthers
		}
		s.log.Info("asked to exit", "by", ss.id)
		go s.stop()
		return nil, nil
	case mNewChat:
		var p NewChatParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		c, err := op.NewChat(p.Private)
		if err == nil && p.Private {
			ss.mu.Lock()
			ss.private = append(ss.private, c.ID)
			ss.mu.Unlock()
		}
		return c, err
	case mChats:
		return op.Chats()
	case mChat:
		var p ChatID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return op.Chat(p.ID)
	case mTurns:
		var p ChatID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return op.Turns(p.ID)
	case mTurnsBefore:
		var p TurnsBeforeParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		ts, more, err := op.TurnsBefore(p.ID, p.Before, p.N)
		return TurnsPage{Turns: ts, More: more}, err
	case mDeleteChat:
		var p ChatID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return nil, op.DeleteChat(p.ID)
	case mAsk, mRetry:
		var p AskParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return s.turn(ss, req.Method, p), nil
	case mCancel:
		var p CancelParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		ss.mu.Lock()
		cancel := ss.turns[p.Token]
		ss.mu.Unlock()
		if cancel != nil {
			cancel()
		}
		return nil, nil
	case mWorking:
		return op.Working(), nil
	case mBackground:
		return op.BackgroundCalls(), nil
	case mNoteRevealed:
		var p RevealedParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return nil, op.NoteRevealed(p.Chat, p.Seq, p.Kind)
	case mOwners:
		return op.MemoryOwners()
	case mMemory:
		var p Owner
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return op.Memory(p.Owner)
	case mExport:
		return op.ExportMemory()
	case mForget:
		var p Owner
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return nil, op.Forget(p.Owner)
	case mWaitMemory:
		ctx, cancel := context.WithTimeout(ss.ctx, memoryWait)
		defer cancel()
		return nil, op.WaitMemory(ctx)
	case mGrants:
		var out []GrantView
		for _, g := range b.Grants() {
			// Another client's session grants are its own.
			if g.Session != "" && g.Session != ss.id {
				continue
			}
			out = append(out, GrantView{Grant: g, Invalid: g.Invalid})
		}
		return out, nil
	case mRevoke:
		var p GrantID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return nil, b.Revoke(p.ID)
	case mRevokeAll:
		var p Subject
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return nil, b.RevokeAll(p.Subject)
	case mActions:
		return b.Actions()
	case mTrusted:
		return b.TrustedIn(ss.id), nil
	case mSetTrusted:
		var p Switch
		if err := params(req, &p); err != nil {
			return nil, err
		}
		b.SetTrustedIn(ss.id, p.On)
		return nil, nil
	case mApps:
		return s.apps(), nil
	case mSetEnabled:
		var p AppSwitch
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return nil, op.SetEnabled(p.App, p.On)
	case mInstalled:
		ctx, cancel := context.WithTimeout(ss.ctx, time.Minute)
		defer cancel()
		return s.eng.Installed(ctx)
	case mCurrent:
		h, sp := s.eng.Current()
		return CurrentModels{Hub: h, Spoke: sp}, nil
	case mSetModel:
		var p ModelName
		if err := params(req, &p); err != nil {
			return nil, err
		}
		// The models are the serving process's, every session's: one
		// session may switch them only while it is alone.
		if s.busy(ss) {
			return nil, errors.New("other sessions use this data directory now, and /model would switch their models too; choose the model when they are done, or start bulkhead with --model NAME")
		}
		ctx, cancel := context.WithTimeout(ss.ctx, time.Minute)
		defer cancel()
		return nil, s.eng.SetModel(ctx, p.Name)
	case mRefresh:
		var p Owner
		if err := params(req, &p); err != nil {
			return nil, err
		}
		a, ok := s.eng.Apps.App(p.Owner)
		r, can := a.(interface {
			Refresh(context.Context) mcp.Refreshed
		})
		if !ok || !can {
			return nil, fmt.Errorf("%s is not an MCP app", p.Owner)
		}
		out := r.Refresh(ss.ctx)
		return RefreshResult{Refreshed: out, Err: toWire(out.Err)}, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no such method: " + req.Method}
}

// busy says whether another client than ss is connected (one whose
// connection has closed is leaving) or a turn runs.
func (s *Server) busy(ss *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turns > 0 {
		return true
	}
	for _, o := range s.sessions {
		if o == ss {
			continue
		}
		select {
		case <-o.ready:
			select {
			case <-o.conn.DisconnectNotify():
				continue
			default:
			}
		default:
		}
		return true
	}
	return false
}

// errOthers refuses a shutdown while other clients use the process.
var errOthers = errors.New("other clients are connected")

// ollama is why Ollama cannot be used now: the error of the process's
// start, until Ollama answers (it may have been started since).
func (s *Server) ollama(ctx context.Context) error {
	s.mu.Lock()
	up := s.ollamaUp
	s.mu.Unlock()
	if s.eng.OllamaErr == nil || up {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	if _, err := s.eng.Ollama.Version(ctx); err != nil {
		return s.eng.OllamaErr
	}
	s.mu.Lock()
	s.ollamaUp = true
	s.mu.Unlock()
	return nil
}

// GrantView is a grant with whether it failed its check.
type GrantView struct {
	permissions.Grant
	Invalid bool `json:"invalid"`
}

// turn runs one turn for ss; its events go to ss as they come.
func (s *Server) turn(ss *session, method string, p AskParams) AskResult {
	ctx, cancel := context.WithCancel(permissions.WithSession(ss.ctx, ss.id))
	defer cancel()
	ss.mu.Lock()
	ss.turns[p.Token] = cancel
	ss.running.Add(1)
	ss.mu.Unlock()
	s.mu.Lock()
	s.turns++
	s.mu.Unlock()
	defer func() {
		ss.mu.Lock()
		delete(ss.turns, p.Token)
		ss.mu.Unlock()
		s.mu.Lock()
		s.turns--
		s.mu.Unlock()
		ss.running.Done()
	}()
	emit := func(ev hub.Event) {
		_ = ss.conn.Notify(ss.ctx, mEvent, EventParams{Token: p.Token, Event: WireEvent{Event: ev, Err: toWire(ev.Err)}})
	}
	var (
		t   hub.Turn
		err error
	)
	if method == mRetry {
		t, err = s.eng.Hub.Retry(ctx, p.Chat, p.Seq, emit)
	} else {
		t, err = s.eng.Hub.AskWith(ctx, p.Chat, p.Query, p.Opts, emit)
	}
	return AskResult{Turn: t, Err: toWire(err)}
}

// AskResult is a turn's outcome: the turn as logged, and its error.
type AskResult struct {
	Turn hub.Turn   `json:"turn"`
	Err  *WireError `json:"err,omitempty"`
}

// apps lists the installed apps.
func (s *Server) apps() []AppInfo {
	var out []AppInfo
	for _, name := range s.eng.Apps.Names() {
		a, ok := s.eng.Apps.App(name)
		if !ok {
			continue
		}
		info := AppInfo{Manifest: a.Manifest(), Enabled: s.eng.Hub.Enabled(name)}
		if m, ok := a.(interface {
			Tools() []mcp.ToolInfo
			Remote() bool
		}); ok {
			info.MCP, info.Tools, info.Remote = true, m.Tools(), m.Remote()
		}
		out = append(out, info)
	}
	return out
}

// status is what doctor shows; the asking client is not counted.
func (s *Server) status(asking *session) Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := Status{Pid: os.Getpid(), Version: s.opts.Version, Protocol: s.opts.protocol, Since: s.started.Format(time.RFC3339),
		Turns: s.turns, DataDir: s.eng.Config.DataDir, Socket: s.sock, IdleExit: s.opts.Idle.String()}
	for _, ss := range s.sessions {
		if ss == asking {
			continue
		}
		ss.mu.Lock()
		if h := ss.hello; h != nil {
			st.Clients = append(st.Clients, fmt.Sprintf("%s (pid %d)", h.Kind, h.Pid))
		}
		ss.mu.Unlock()
	}
	sort.Strings(st.Clients)
	return st
}

// params decodes a call's parameters.
func params(req *jsonrpc2.Request, v any) error {
	if req.Params == nil {
		return nil
	}
	if err := json.Unmarshal(*req.Params, v); err != nil {
		return fmt.Errorf("%s: bad parameters: %w", req.Method, err)
	}
	return nil
}

// newToken is a random id.
func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
