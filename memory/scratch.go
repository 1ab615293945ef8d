package memory

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// Scratch is a namespace's plain key-value space seen through an overlay
// kept in process memory: reads see the namespace as it is plus what was
// written to the Scratch; writes and deletes stay in the overlay and never
// reach the database. A private turn's permission broker uses one over the
// hub's namespace, so that it consults the stored grants while its own
// writes (action log, uses counted) vanish with it. Safe for concurrent use.
type Scratch struct {
	base *Namespace

	mu      sync.Mutex
	written map[string][]byte
	deleted map[string]bool
}

// NewScratch returns an empty overlay over n.
func NewScratch(n *Namespace) *Scratch {
	return &Scratch{base: n, written: map[string][]byte{}, deleted: map[string]bool{}}
}

// Get returns the overlay's value for key, else the namespace's; the error
// matches ErrNotFound for a missing or deleted key.
func (s *Scratch) Get(key string) ([]byte, error) {
	s.mu.Lock()
	v, ok := s.written[key]
	gone := s.deleted[key]
	s.mu.Unlock()
	switch {
	case ok:
		return slices.Clone(v), nil
	case gone:
		return nil, fmt.Errorf("get %q in scratch over %s: %w", key, s.base.owner, ErrNotFound)
	}
	return s.base.Get(key)
}

// Set stores val in the overlay.
func (s *Scratch) Set(key string, val []byte) error {
	if err := checkKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.written[key] = slices.Clone(val)
	delete(s.deleted, key)
	return nil
}

// Delete hides key from later reads.
func (s *Scratch) Delete(key string) error {
	if err := checkKey(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.written, key)
	s.deleted[key] = true
	return nil
}

// Keys returns the keys beginning with prefix, the namespace's and the
// overlay's, less deleted ones, in byte order.
func (s *Scratch) Keys(prefix string) ([]string, error) {
	base, err := s.base.Keys(prefix)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	set := map[string]bool{}
	for _, k := range base {
		if !s.deleted[k] {
			set[k] = true
		}
	}
	for k := range s.written {
		if strings.HasPrefix(k, prefix) {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set)), nil
}
