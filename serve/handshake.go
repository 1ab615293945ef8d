package serve

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/sourcegraph/jsonrpc2"

	"github.com/bulkhead-dev/bulkhead/engine"
)

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
