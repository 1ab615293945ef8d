package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
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
