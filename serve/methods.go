package serve

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// memoryWait bounds how long a client may wait for the memory upkeep.
const memoryWait = 30 * time.Second

// handle runs one call of a connection. Before the handshake is done
// only hello and auth are answered, and anything else ends the
// connection; a session of another protocol or configuration may only
// ask for the status and for this process to exit (so that an idle one
// is replaced).
func (s *Server) handle(ss *session, req *jsonrpc2.Request) (any, error) {
	ss.mu.Lock()
	authed, limited := ss.authed, ss.limited
	ss.mu.Unlock()
	switch {
	case req.Method == mHello && !authed:
		return s.hello(ss, req)
	case req.Method == mAuth && !authed:
		return s.auth(ss, req)
	case req.Method == mTooLarge:
		var p struct{ Bytes, Limit int64 }
		_ = params(req, &p)
		return nil, fmt.Errorf("%w: %s in one message; the serving process takes at most %s", ErrTooLarge, size(p.Bytes), size(p.Limit))
	case !authed:
		ss.closeAfterReply(req)
		return nil, ErrNoSession
	case limited != "" && !limitedMay(req.Method, ss.hello.Protocol == s.opts.protocol):
		return nil, fmt.Errorf("%w: %s", errMismatch, limited)
	}
	// The session's profile, held for this call (its newest: a listing
	// since may have started it again).
	prof := s.hold(ss)
	if prof == nil {
		return nil, fmt.Errorf("%w: the session has ended", ErrGone)
	}
	defer s.eng.Release(prof)
	op, b := prof.Hub, s.eng.Broker
	switch req.Method {
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
			s.mu.Lock()
			s.privateOf[c.ID] = ss.id
			s.mu.Unlock()
		}
		return c, err
	case mChats:
		cs, err := op.Chats()
		// Another session's private chats are not listed.
		return slices.DeleteFunc(cs, func(c hub.Chat) bool { return !s.mine(ss, c) }), err
	case mChat:
		var p ChatID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		if err := s.own(ss, p.ID); err != nil {
			return nil, err
		}
		return op.Chat(p.ID)
	case mTurns:
		var p ChatID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		if err := s.own(ss, p.ID); err != nil {
			return nil, err
		}
		return op.Turns(p.ID)
	case mTurnsBefore:
		var p TurnsBeforeParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		if err := s.own(ss, p.ID); err != nil {
			return nil, err
		}
		ts, more, err := op.TurnsBefore(p.ID, p.Before, p.N)
		return TurnsPage{Turns: ts, More: more}, err
	case mDeleteChat:
		var p ChatID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		if err := s.own(ss, p.ID); err != nil {
			return nil, err
		}
		if err := op.DeleteChat(p.ID); err != nil {
			return nil, err
		}
		s.mu.Lock()
		delete(s.privateOf, p.ID)
		s.mu.Unlock()
		return nil, nil
	case mWarm:
		// Answered at once; the server reads the prompt in the
		// background, as the session's calls go (its host, its models).
		var p ChatID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		if p.ID != "" {
			if err := s.own(ss, p.ID); err != nil {
				return nil, err
			}
		}
		go op.Warm(s.modelsCtx(ss, permissions.WithSession(ss.ctx, ss.id)), p.ID)
		return nil, nil
	case mAsk, mRetry:
		var p AskParams
		if err := params(req, &p); err != nil {
			return nil, err
		}
		if err := s.own(ss, p.Chat); err != nil {
			return AskResult{Err: toWire(err)}, nil
		}
		return s.turn(ss, prof, req.Method, p), nil
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
		if err := s.own(ss, p.Chat); err != nil {
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
	case mChanges:
		return op.PendingChanges(context.Background(), s.sees(ss)), nil
	case mChangeSet:
		var p GrantID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return op.ChangeSet(context.Background(), p.ID, s.sees(ss))
	case mDecide:
		var p ChangesDecision
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return op.DecideChanges(context.Background(), ss.id, p.ID, p.Accept, p.Picks, s.sees(ss))
	case mGrants:
		var out []GrantView
		for _, g := range b.Grants() {
			// Another client's session grants are its own.
			if g.Session != "" && g.Session != ss.id {
				continue
			}
			out = append(out, GrantView{Grant: g, Invalid: g.Invalid})
		}
		// And those of this session's private chats, which go with them.
		for _, g := range op.PrivateGrants(s.privateChats(ss)) {
			out = append(out, GrantView{Grant: g, Private: true})
		}
		return out, nil
	case mRevoke:
		var p GrantID
		if err := params(req, &p); err != nil {
			return nil, err
		}
		if found, r, err := op.RevokePrivate(s.privateChats(ss), p.ID); found {
			return r, err
		}
		// Another session's session grant is not this one's to revoke.
		return b.RevokeIn(ss.id, p.ID)
	case mRevokeAll:
		var p Subject
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return b.RevokeAllIn(ss.id, p.Subject)
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
		return s.apps(prof), nil
	case mSetEnabled:
		var p AppSwitch
		if err := params(req, &p); err != nil {
			return nil, err
		}
		return nil, op.SetEnabled(p.App, p.On)
	case mInstalled:
		// The models of the session's own Ollama host.
		ctx, cancel := context.WithTimeout(s.modelsCtx(ss, ss.ctx), time.Minute)
		defer cancel()
		return s.eng.Installed(ctx)
	case mCurrent:
		h, sp := s.eng.CurrentIn(s.modelsCtx(ss, ss.ctx))
		return CurrentModels{Hub: h, Spoke: sp}, nil
	case mSetModel:
		var p ModelName
		if err := params(req, &p); err != nil {
			return nil, err
		}
		// The models are the session's own: other sessions keep theirs.
		ss.mu.Lock()
		running := len(ss.turns)
		ss.mu.Unlock()
		if running > 0 {
			return nil, hub.ErrBusy
		}
		// Resolved on the session's Ollama host, which it keeps.
		ctx, cancel := context.WithTimeout(s.modelsCtx(ss, ss.ctx), time.Minute)
		defer cancel()
		name, err := s.eng.ResolveModel(ctx, p.Name)
		if err != nil {
			return nil, err
		}
		ss.mu.Lock()
		ss.models.Hub, ss.models.Spoke = name, name
		ss.mu.Unlock()
		s.log.Info("switched models for a session", "session", ss.id, "model", name)
		return nil, nil
	case mSandbox:
		return s.sandboxReport(ss.ctx), nil
	case mRefresh:
		var p Owner
		if err := params(req, &p); err != nil {
			return nil, err
		}
		a, ok := prof.Apps.App(p.Owner)
		if !ok && slices.ContainsFunc(prof.Unlisted, func(u engine.Unlisted) bool { return u.App == p.Owner }) {
			// A server the session runs without: listed here, and
			// installed at once in every profile that enables it.
			out := s.eng.ListUnlisted(ss.ctx, prof, p.Owner)
			return RefreshResult{Refreshed: out, Err: toWire(out.Err)}, nil
		}
		r, can := a.(interface {
			Refresh(context.Context) mcp.Refreshed
		})
		if !ok || !can {
			return nil, fmt.Errorf("%s is not an MCP app", p.Owner)
		}
		out := r.Refresh(ss.ctx)
		if out.Err == nil && out.Changed {
			// Other tools: the sessions take them from their next call.
			s.eng.Relist()
		}
		return RefreshResult{Refreshed: out, Err: toWire(out.Err)}, nil
	case mRelist:
		// The command that listed may have changed the config file too
		// (`bulkhead mcp add` enables what it adds): read it now rather
		// than when its watcher fires, so that the sessions that follow
		// its apps have them at their next call.
		s.Reload()
		return RelistResult{Apps: s.eng.Relist()}, nil
	}
	return nil, &jsonrpc2.Error{Code: jsonrpc2.CodeMethodNotFound, Message: "no such method: " + req.Method}
}

// turn runs one turn for ss on its profile prof (held for the call);
// its events go to ss as they come.
func (s *Server) turn(ss *session, prof *engine.Profile, method string, p AskParams) AskResult {
	// One turn at a time in a chat, whichever folder and apps its
	// sessions run with.
	s.mu.Lock()
	if s.asking[p.Chat] {
		s.mu.Unlock()
		return AskResult{Err: toWire(fmt.Errorf("%w: a turn is running in this chat in another window", hub.ErrBusy))}
	}
	s.asking[p.Chat] = true
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.asking, p.Chat)
		s.mu.Unlock()
	}()
	op := prof.Hub
	ctx, cancel := context.WithCancel(s.modelsCtx(ss, permissions.WithSession(ss.ctx, ss.id)))
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
		last := s.turns == 0
		s.mu.Unlock()
		if last {
			s.collectBetweenTurns()
		}
		ss.running.Done()
	}()
	emit := func(ev hub.Event) {
		_ = ss.conn.Notify(ss.ctx, mEvent, EventParams{Token: p.Token, Event: WireEvent{Event: ev, Err: toWire(ev.Err)}})
	}
	if ls := prof.Listing(); len(ls) > 0 {
		// A server of the session's apps is being listed: the turn
		// waits for it, saying so, and runs on the profile that has it.
		// Cancelled meanwhile, the turn ends as a cancelled one.
		for _, l := range ls {
			emit(hub.Event{Kind: hub.EventProgress, App: l.App, Progress: &apps.Progress{App: l.App, Starting: true}})
		}
	wait:
		for _, l := range ls {
			select {
			case <-l.Done():
			case <-ctx.Done():
				break wait
			}
		}
		for _, l := range ls {
			emit(hub.Event{Kind: hub.EventProgress, App: l.App, Progress: &apps.Progress{App: l.App}})
		}
		if np := s.hold(ss); np != nil {
			defer s.eng.Release(np)
			op, prof = np.Hub, np
		}
	}
	var (
		t   hub.Turn
		err error
	)
	if method == mRetry {
		t, err = op.Retry(hub.WithClock(ctx, p.Opts.Clock), p.Chat, p.Seq, emit)
	} else {
		t, err = op.AskWith(ctx, p.Chat, p.Query, p.Opts, emit)
	}
	err = withFailures(err, t, p.Query, prof)
	return AskResult{Turn: t, Err: toWire(err)}
}

// withFailures is a turn's error err, led by what failed of the MCP
// servers prof runs without that the turn t needed: those its plan asked
// for (the error, or the reason its plan fell back to plain chat, names
// one of their functions), or those its query names when it failed or
// fell back. Each server's failure is a line (engine.Failure: its exit
// status, its stderr's last line) — for a turn that would otherwise end
// saying only that no app provides what it asked for, or answer without
// it as if nothing was wrong (then its error says so; the answer stays).
func withFailures(err error, t hub.Turn, query string, prof *engine.Profile) error {
	var said []string
	if err != nil {
		said = append(said, err.Error())
	}
	if t.Plan != nil && t.Plan.Fallback {
		said = append(said, t.Plan.Reason)
	}
	if len(said) == 0 {
		return err
	}
	text := strings.Join(said, "\n")
	words := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	})
	var lead []string
	for _, u := range prof.Unlisted {
		u = u.Now()
		if u.Pending || u.Err == nil {
			continue
		}
		if strings.Contains(text, `"`+u.App+`.`) || strings.Contains(text, `"`+u.App+`"`) || slices.Contains(words, u.App) {
			lead = append(lead, engine.Failure(u.App, u.Err))
		}
	}
	switch {
	case len(lead) == 0:
		return err
	case err == nil:
		return fmt.Errorf("%s (the apps screen says why): the request was answered without it", strings.Join(lead, "; "))
	}
	return fmt.Errorf("%s (the apps screen says why): %w", strings.Join(lead, "; "), err)
}

// apps lists the installed apps of a session's profile.
func (s *Server) apps(prof *engine.Profile) []AppInfo {
	var out []AppInfo
	for _, name := range prof.Apps.Names() {
		a, ok := prof.Apps.App(name)
		if !ok {
			continue
		}
		info := AppInfo{Manifest: a.Manifest(), Enabled: prof.Hub.Enabled(name)}
		if m, ok := a.(interface {
			Tools() []mcp.ToolInfo
			Remote() bool
		}); ok {
			info.MCP, info.Tools, info.Remote = true, m.Tools(), m.Remote()
		}
		out = append(out, info)
	}
	for _, u := range prof.Unlisted {
		u = u.Now() // a background listing may have ended since
		info := AppInfo{Manifest: apps.Manifest{Name: u.App}, MCP: true, Unlisted: u.Why, Fix: u.Fix}
		if u.Pending {
			info.Listing, info.Since = true, u.Since
		} else if u.Err != nil {
			info.Failed = engine.Failure(u.App, u.Err)
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
		Turns: s.turns, DataDir: s.eng.Config.DataDir, Socket: s.sock, IdleExit: s.opts.Idle.String(), Dumpable: sandbox.Dumpable()}
	for _, ss := range s.sessions {
		if ss == asking {
			continue
		}
		ss.mu.Lock()
		if h := ss.hello; h != nil && ss.authed {
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

// sandboxReport is what a probe of the sandbox of this process's apps
// found: probed once, at the first asking.
func (s *Server) sandboxReport(ctx context.Context) sandbox.Report {
	s.probeOnce.Do(func() { s.probe = sandbox.Probe(ctx, sandbox.Policy{}) })
	return s.probe
}

// ErrNoSession is matched by the error of a connection that did not
// finish the handshake: it proved no knowledge of the data directory's
// key, and gets nothing.
var ErrNoSession = errors.New("no session: the handshake is not done (a client proves it can read the data directory's key)")

// errMismatch refuses a session of another protocol or configuration
// anything but status and shutdown.
var errMismatch = errors.New("this serving process runs another protocol or configuration")

// hello answers a connection's hello with this process's nonce and its
// proof that it knows the key.
func (s *Server) hello(ss *session, req *jsonrpc2.Request) (any, error) {
	var h Hello
	if err := params(req, &h); err != nil {
		return nil, err
	}
	cn, err := hex.DecodeString(h.Nonce)
	if err != nil || len(cn) != nonceSize {
		ss.closeAfterReply(req)
		return nil, fmt.Errorf("%w: hello needs a %d-byte nonce", ErrNoSession, nonceSize)
	}
	ours := nonce()
	ss.mu.Lock()
	ss.hello, ss.nonce = &h, ours
	ss.mu.Unlock()
	return Challenge{Protocol: s.opts.protocol, Nonce: hex.EncodeToString(ours), Proof: proof(s.key, "server", cn, ours)}, nil
}

// auth checks the client's proof (constant-time); a good one opens the
// session: it counts as a client from now on, and its messages may be
// as long as a request may. Another protocol or configuration than this
// process's limits the session (limited).
func (s *Server) auth(ss *session, req *jsonrpc2.Request) (any, error) {
	var a Auth
	if err := params(req, &a); err != nil {
		return nil, err
	}
	ss.mu.Lock()
	h, ours := ss.hello, ss.nonce
	ss.mu.Unlock()
	if h == nil || ours == nil {
		ss.closeAfterReply(req)
		return nil, ErrNoSession
	}
	cn, _ := hex.DecodeString(h.Nonce)
	if !proofOK(a.Proof, proof(s.key, "client", ours, cn)) {
		s.log.Warn("refused a connection: it could not show it reads the data directory's key", "pid", h.Pid, "kind", h.Kind)
		ss.closeAfterReply(req)
		return nil, ErrNoSession
	}
	fp, keys := s.config()
	if h.Protocol == s.opts.protocol && h.Config != fp {
		// The file may have changed a moment ago: read it before
		// telling the client that it differs.
		s.Reload()
		fp, keys = s.config()
	}
	limited := ""
	switch {
	case h.Protocol != s.opts.protocol:
		limited = fmt.Sprintf("it speaks protocol %d, the client %d", s.opts.protocol, h.Protocol)
	case h.Config != fp:
		limited = fmt.Sprintf("its configuration differs in %s", strings.Join(Differ(keys, h.Keys), ", "))
	}
	spec := engine.ProfileSpec{}
	if h.Profile != nil && limited == "" {
		spec = *h.Profile
	}
	prof, err := s.eng.Profile(spec)
	if err != nil {
		ss.closeAfterReply(req)
		return nil, err
	}
	ss.mu.Lock()
	ss.authed, ss.limited, ss.nonce, ss.prof = true, limited, nil, prof
	if limited == "" {
		ss.models = h.Models
	}
	ss.mu.Unlock()
	ss.frames.readMax.Store(maxRequest)
	ss.frames.answer.Store(true)
	busy := s.busy(ss)
	s.log.Info("client", "session", ss.id, "kind", h.Kind, "pid", h.Pid, "version", h.Version, "limited", limited)
	return Welcome{Protocol: s.opts.protocol, Version: s.opts.Version, Config: fp, Keys: keys, File: s.opts.ConfigFile, Pid: os.Getpid(), Build: build,
		Session: ss.id, Busy: busy, Ollama: toWire(s.eng.OllamaErrIn(s.modelsCtx(ss, ss.ctx))), HubModel: hubIn(s.eng, s.modelsCtx(ss, ss.ctx))}, nil
}

// mine says whether ss may see chat c: every chat but a private one of
// another session — or of none known yet (one being made, one whose
// forgetting failed).
func (s *Server) mine(ss *session, c hub.Chat) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	owner, known := s.privateOf[c.ID]
	if known {
		return owner == ss.id
	}
	return !c.Private
}

// own refuses another session's private chat as if there were none:
// not readable, not askable, not removable.
func (s *Server) own(ss *session, id string) error {
	s.mu.Lock()
	owner, known := s.privateOf[id]
	s.mu.Unlock()
	if known && owner == ss.id {
		return nil
	}
	if !known {
		c, err := s.eng.Hub.Chat(id) // the store's, whichever profile
		if err != nil || !c.Private {
			return nil // the hub says what there is (or is not)
		}
	}
	return fmt.Errorf("%w: %s", hub.ErrNoChat, id)
}

// limitedMay says whether a session of another protocol or configuration
// may call method: status and shutdown always; what only reads when it
// speaks this process's protocol, and relist (which installs only what
// the cache lists for this process's own configuration).
func limitedMay(method string, sameProtocol bool) bool {
	return method == mStatus || method == mShutdown || sameProtocol && (readOnly[method] || method == mRelist)
}

// readOnly are the methods a session of another configuration may call:
// they read the data directory, and the serving process reads it as any
// would.
var readOnly = map[string]bool{
	mStatus: true, mShutdown: true, mChats: true, mChat: true, mTurns: true, mTurnsBefore: true,
	mOwners: true, mMemory: true, mExport: true, mGrants: true, mActions: true, mTrusted: true,
	mApps: true, mInstalled: true, mCurrent: true, mSandbox: true, mWorking: true, mBackground: true,
	mWaitMemory: true, mChanges: true, mChangeSet: true,
}

// hold is ss's profile — moved on to its newest (engine.Follow) — held
// for one call (engine.Hold; the caller gives it back with Release); nil
// once the session has ended.
func (s *Server) hold(ss *session) *engine.Profile {
	ss.mu.Lock()
	if ss.prof == nil {
		ss.mu.Unlock()
		return nil
	}
	prof, stopOld := s.eng.Follow(ss.prof)
	ss.prof = prof
	s.eng.Hold(prof)
	ss.mu.Unlock()
	stopOld()
	return prof
}

// modelsCtx is ctx with the models ss chose: its models and its Ollama
// host.
func (s *Server) modelsCtx(ss *session, ctx context.Context) context.Context {
	ss.mu.Lock()
	m := ss.models
	ss.mu.Unlock()
	return engine.WithModels(ctx, m)
}

// hubIn names the hub's model of calls made under ctx.
func hubIn(eng *engine.Engine, ctx context.Context) string {
	h, _ := eng.CurrentIn(ctx)
	return h
}

// sees says which change sets ss may see and decide: every one but
// another session's private turn's.
func (s *Server) sees(ss *session) func(changes.Owner) bool {
	mine := s.privateChats(ss)
	return func(o changes.Owner) bool {
		return !o.Private || o.Session == ss.id || slices.Contains(mine, o.Chat)
	}
}

// privateChats are the private chats ss opened.
func (s *Server) privateChats(ss *session) []string {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return slices.Clone(ss.private)
}
