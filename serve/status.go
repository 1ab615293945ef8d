package serve

import (
	"context"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/bulkhead-dev/bulkhead/sandbox"
)

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

// sandboxReport is what a probe of the sandbox of this process's apps
// found: probed once, at the first asking.
func (s *Server) sandboxReport(ctx context.Context) sandbox.Report {
	s.probeOnce.Do(func() { s.probe = sandbox.Probe(ctx, sandbox.Policy{}) })
	return s.probe
}
