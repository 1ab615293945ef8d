package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/apps/mcp"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
	"github.com/bulkhead-dev/bulkhead/sandbox"
)

// memoryWait bounds how long a client may wait for the memory upkeep.
const memoryWait = 30 * time.Second

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
	case mSandbox:
		return s.sandboxReport(ss.ctx), nil
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

// sandboxReport is what a probe of the sandbox of this process's apps
// found: probed once, at the first asking.
func (s *Server) sandboxReport(ctx context.Context) sandbox.Report {
	s.probeOnce.Do(func() { s.probe = sandbox.Probe(ctx, sandbox.Policy{}) })
	return s.probe
}
