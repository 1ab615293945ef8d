package serve

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/bulkhead-dev/bulkhead/apps"
	"github.com/bulkhead-dev/bulkhead/engine"
	"github.com/bulkhead-dev/bulkhead/hub"
	"github.com/bulkhead-dev/bulkhead/permissions"
)

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
