package serve

import (
	"context"

	"github.com/bulkhead-dev/bulkhead/engine"
)

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
