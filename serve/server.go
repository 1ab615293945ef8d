package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"maps"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/config"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// Options says how to serve.
type Options struct {
	// Fingerprint is the configuration's (Fingerprint): clients of
	// another are refused; Keys are the same key by key (Keys), for
	// naming what differs. ConfigFile is the config file it read.
	Fingerprint string
	Keys        map[string]string
	ConfigFile  string
	// Reload reads the config file again and applies what a running
	// process can (engine.Apply); it returns the keys the process runs
	// with then. A client whose keys differ from the process's has it
	// called first: an edit made a moment ago is taken before the
	// client is told of a difference.
	Reload func() (map[string]string, error)
	// Watch, when set, is called once the process serves: it calls
	// changed whenever the config file changes (engine.WatchConfig),
	// and the process reloads it then.
	Watch   func(changed func()) error
	Version string
	// Idle is how long the process stays with no client before it exits
	// (0: DefaultIdle).
	Idle time.Duration

	protocol  int           // Protocol; another in tests of a mismatch
	helloWait time.Duration // how long a connection has to become a session (0: helloWait)
}

// helloWait is how long a connection has to finish the handshake before
// it is dropped.
const helloWait = 10 * time.Second

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

	reloadMu sync.Mutex // one Reload at a time

	mu        sync.Mutex
	fp        string              // the fingerprint it runs with now (Reload changes it)
	keys      map[string]string   // the same, key by key
	key       []byte              // the data directory's serving key (auth.go)
	sessions  map[string]*session // every connection; only those authed are clients
	privateOf map[string]string   // private chat -> the session it belongs to
	asking    map[string]bool     // chats with a turn running, in any profile
	turns     int
	idleSince time.Time
	orphaned  bool // the socket (or the whole data directory) was removed
	quit      chan struct{}
	quitOnce  sync.Once

	// collecting: a collection between turns is running
	// (collectBetweenTurns).
	collecting bool

	probeOnce sync.Once
	probe     sandbox.Report // the sandbox's probe (sandboxReport)
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

	frames *frames
	// closing is the request whose answer ends the connection
	// (closeAfterReply); only that request's handler closes it, after its
	// own reply — never a handler of another request running beside it.
	closing atomic.Pointer[jsonrpc2.ID]

	mu      sync.Mutex
	hello   *Hello
	nonce   []byte                        // the serving process's nonce of the handshake
	authed  bool                          // the handshake is done: a client of the user's
	limited string                        // why only status and shutdown are open to it (another protocol or configuration)
	turns   map[string]context.CancelFunc // by token
	private []string                      // private chats it opened
	running sync.WaitGroup
	// prof is its folder and apps (engine.Profile), from auth; each call
	// moves it on to the profile's newest (hold).
	prof *engine.Profile
	// models are its models and its Ollama host (hello; /model changes
	// the models): every call of its own goes there (modelsCtx).
	models engine.Models
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
	if opts.helloWait <= 0 {
		opts.helloWait = helloWait
	}
	s := &Server{eng: eng, opts: opts, sock: SocketPath(eng.Config.DataDir), started: time.Now(),
		log: eng.Log.With("component", "serve"), sessions: map[string]*session{}, privateOf: map[string]string{}, asking: map[string]bool{}, idleSince: time.Now(), quit: make(chan struct{})}
	s.fp, s.keys = opts.Fingerprint, opts.Keys
	if s.keys != nil {
		s.fp = FingerprintOf(s.keys)
	}
	// A fresh key for this process's clients, before anyone can connect.
	var err error
	if s.key, err = newKey(eng.Config.DataDir); err != nil {
		return err
	}
	// Whatever socket is there is a dead process's: this one holds the
	// data directory.
	_ = os.Remove(s.sock)
	ln, err := listen(s.sock)
	if err != nil {
		return fmt.Errorf("serve %s: %w", s.sock, err)
	}
	defer os.Remove(s.sock)
	eng.SetPrompter(s)
	if opts.Watch != nil {
		if err := opts.Watch(s.Reload); err != nil {
			s.log.Warn("the config file cannot be watched; an edit is read when a client's differs", "err", err)
		}
	}
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
				idle := s.clients() == 0 && time.Since(s.idleSince) >= opts.Idle
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

// open starts a connection on c. It becomes a session once the
// handshake proves the client can read the data directory's key; until
// then it may say hello and auth only, in small messages, within
// helloWait, and it counts for nothing (not busy, not keeping the
// process from its idle exit).
func (s *Server) open(c net.Conn) {
	ctx, cancel := context.WithCancel(context.Background())
	ss := &session{id: newToken(), ctx: ctx, cancel: cancel, turns: map[string]context.CancelFunc{}, ready: make(chan struct{})}
	h := jsonrpc2.AsyncHandler(handler(func(ctx context.Context, conn *jsonrpc2.Conn, req *jsonrpc2.Request) {
		<-ss.ready
		res, err := s.handle(ss, req)
		if !req.Notif {
			if err != nil {
				_ = conn.ReplyWithError(ctx, req.ID, rpcError(err))
			} else {
				_ = conn.Reply(ctx, req.ID, res)
			}
		}
		if id := ss.closing.Load(); id != nil && *id == req.ID {
			conn.Close() // the handshake failed: after its answer, the end
		}
	}))
	s.mu.Lock()
	s.sessions[ss.id] = ss
	s.mu.Unlock()
	ss.frames = newFrames(c, maxHello, 0)
	ss.conn = jsonrpc2.NewConn(ctx, ss.frames, h, jsonrpc2.SetLogger(quiet))
	close(ss.ready)
	deadline := time.AfterFunc(s.opts.helloWait, func() {
		if !ss.isAuthed() {
			s.log.Warn("dropped a connection that did not finish the handshake in time", "wait", s.opts.helloWait.String())
			ss.conn.Close()
		}
	})
	go func() {
		<-ss.conn.DisconnectNotify()
		deadline.Stop()
		s.drop(ss)
	}()
}

// handler is a jsonrpc2.Handler of a function.
type handler func(context.Context, *jsonrpc2.Conn, *jsonrpc2.Request)

func (h handler) Handle(ctx context.Context, c *jsonrpc2.Conn, r *jsonrpc2.Request) { h(ctx, c, r) }

// closeAfterReply ends the connection once req is answered.
func (ss *session) closeAfterReply(req *jsonrpc2.Request) {
	id := req.ID
	ss.closing.CompareAndSwap(nil, &id)
}

func (ss *session) isAuthed() bool {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return ss.authed
}

// clients counts the sessions that finished the handshake. The caller
// holds s.mu.
func (s *Server) clients() int {
	n := 0
	for _, ss := range s.sessions {
		if ss.isAuthed() {
			n++
		}
	}
	return n
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
	private, prof := ss.private, ss.prof
	ss.prof = nil
	ss.mu.Unlock()
	if prof == nil {
		return
	}
	defer s.eng.Release(prof)
	for _, id := range private {
		err := prof.Hub.DeleteChat(id)
		s.mu.Lock()
		if err != nil {
			// Not forgotten: it stays no one's to see.
			s.log.Warn("forget a private chat", "err", err)
			s.privateOf[id] = ""
		} else {
			delete(s.privateOf, id)
		}
		s.mu.Unlock()
	}
	s.mu.Lock()
	delete(s.sessions, ss.id)
	if s.clients() == 0 {
		s.idleSince = time.Now()
	}
	s.mu.Unlock()
	if ss.isAuthed() {
		s.log.Info("client left", "session", ss.id)
	}
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

// busy says whether another client than ss is connected (one whose
// connection has closed is leaving) or a turn runs.
func (s *Server) busy(ss *session) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.turns > 0 {
		return true
	}
	for _, o := range s.sessions {
		if o == ss || !o.isAuthed() {
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

// newToken is a random id.
func newToken() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// config is the fingerprint and keys the process runs with now.
func (s *Server) config() (string, map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.fp, s.keys
}

// Reload reads the config file again (Options.Reload) and runs with what
// it applied; a file that does not load changes nothing, and says why in
// the log. The serving process calls it when its config file changes,
// and before it tells a client that their configurations differ.
func (s *Server) Reload() {
	if s.opts.Reload == nil {
		return
	}
	s.reloadMu.Lock()
	defer s.reloadMu.Unlock()
	keys, err := s.opts.Reload()
	if err != nil {
		s.log.Warn("the config file does not load; the process keeps what it had, but the MCP apps have no network until it loads", "err", err)
		return
	}
	s.mu.Lock()
	s.keys, s.fp = keys, FingerprintOf(keys)
	s.mu.Unlock()
	s.followConfig()
}

// followConfig moves each session whose apps are the config file's
// enable list (engine.ProfileSpec.Configured, of this process's file)
// to the list the file has now, when it changed: the profile of its
// folder and the new list, as a session started now gets it, from its
// next call. A turn running finishes on the apps it started with. A
// session that chose its apps (--apps, $BULKHEAD_ENABLE) keeps them. The
// caller holds reloadMu.
func (s *Server) followConfig() {
	enable, ok := configEnable(s.opts.ConfigFile)
	if !ok {
		return
	}
	s.mu.Lock()
	all := slices.Collect(maps.Values(s.sessions))
	s.mu.Unlock()
	for _, ss := range all {
		ss.mu.Lock()
		h, prof := ss.hello, ss.prof
		follows := ss.authed && ss.limited == "" && prof != nil && h != nil && h.Profile != nil && h.Profile.Configured && sameConfig(h.File, s.opts.ConfigFile)
		ss.mu.Unlock()
		if !follows || slices.Equal(prof.Spec.Enable, enable) {
			continue
		}
		spec := prof.Spec
		spec.Enable, spec.Configured = slices.Clone(enable), true
		np, err := s.eng.Profile(spec)
		if err != nil {
			s.log.Warn("the config file's apps changed, but a session's could not start with them; it keeps its own", "session", ss.id, "apps", strings.Join(enable, ","), "err", err)
			continue
		}
		ss.mu.Lock()
		old := ss.prof
		if old != nil {
			ss.prof = np
		}
		ss.mu.Unlock()
		if old == nil {
			// It ended meanwhile.
			s.eng.Release(np)
			continue
		}
		s.eng.Release(old)
		s.log.Info("the config file's apps changed: a session that runs them moves to them from its next call", "session", ss.id, "apps", strings.Join(enable, ","))
	}
}

// configEnable is the enable list of the config file at file (the
// default file for ""), as a client that takes its apps from it reads
// it; false when the file does not load, or when $BULKHEAD_ENABLE, not
// the file, would decide it.
func configEnable(file string) ([]string, bool) {
	src, err := config.Open(file)
	if err != nil {
		return nil, false
	}
	c, err := src.Load()
	if err != nil || !configured(c.From["enable"]) || engine.CheckEnable(c) != nil {
		return nil, false
	}
	return c.Enable, true
}

// sameConfig says whether a client's config file is the serving
// process's ("" for either: the default file, which did not exist when
// it was read).
func sameConfig(a, b string) bool {
	if a == "" {
		a = config.DefaultFile()
	}
	if b == "" {
		b = config.DefaultFile()
	}
	if filepath.Clean(a) == filepath.Clean(b) {
		return true
	}
	fa, errA := os.Stat(a)
	fb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(fa, fb)
}

// collectionsStarted counts the collections between turns this process
// started (its tests read it).
var collectionsStarted atomic.Int64

// collectBetweenTurns collects the process's garbage once the last running
// turn has ended, so that the collector does not run during the next
// turn. Each model call's stream leaves megabytes behind (the Ollama
// client reads it through an 8 MB line buffer of its own), so a turn of
// a draft and a plan left 16 MB and more; left to the collector's own
// pace, a collection came every few turns, at an allocation — often the
// next call's own buffer at its first byte — and on a busy machine it
// held that call's first words back by 30–60 ms. Collected while nothing
// waits, the next turn starts with the whole headroom. One at a time: a
// turn ending while one runs adds none.
func (s *Server) collectBetweenTurns() {
	s.mu.Lock()
	if s.collecting {
		s.mu.Unlock()
		return
	}
	s.collecting = true
	s.mu.Unlock()
	collectionsStarted.Add(1)
	go func() {
		runtime.GC()
		s.mu.Lock()
		s.collecting = false
		s.mu.Unlock()
	}()
}
