package serve

import (
	"fmt"
	"slices"

	"github.com/bulkhead-dev/bulkhead/changes"
	"github.com/bulkhead-dev/bulkhead/hub"
)

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
