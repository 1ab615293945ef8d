package memory

import (
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/badger/v4"
)

var (
	// ErrInUse is matched (with errors.Is) by the error Open returns when
	// another process, or another Store in this one, holds the directory.
	ErrInUse = errors.New("data directory is in use by another bulkhead process")
	// ErrNotFound is matched by errors for a missing chat, interaction or key.
	ErrNotFound = errors.New("not found")
	// ErrClosed is matched by errors from calls made after Store.Close.
	ErrClosed = errors.New("memory store is closed")
)

// inUseError keeps the directory in the message and badger's error as cause.
type inUseError struct {
	dir   string
	cause error
}

func (e *inUseError) Error() string {
	return fmt.Sprintf("data directory %s is in use by another bulkhead process", e.dir)
}

func (e *inUseError) Is(target error) bool { return target == ErrInUse }
func (e *inUseError) Unwrap() error        { return e.cause }

const (
	defaultGCInterval = 5 * time.Minute
	gcDiscardRatio    = 0.5
	// defaultCompactInterval is how often a long process checks whether
	// level 0 needs compacting (see compact.go).
	defaultCompactInterval = time.Minute
	// maxConflictRetries bounds the retries of a write badger rejected
	// because a concurrent write touched what it read.
	maxConflictRetries = 64
	appendStripes      = 64
)

// Options configures a Store. The zero value is usable.
type Options struct {
	// Logger receives badger's own log; nil discards it.
	Logger *slog.Logger
	// GCInterval is how often value-log GC runs; 0 means 5 minutes.
	GCInterval time.Duration
	// CompactTables is how many level-0 tables (one is left by every
	// process that wrote) make the store compact: at a CompactInterval
	// tick, and at Close. 0 means 8; below 6 it is 6 (badger's own
	// level-0 trigger is 5); negative never compacts, which is how
	// badger alone behaves, kept for comparisons.
	CompactTables int
	// CompactInterval is how often a long process checks the level-0
	// table count; 0 means 1 minute.
	CompactInterval time.Duration

	// tune, set by tests, adjusts badger's options (e.g. no compactors
	// of badger's own, so that only the Store's compaction runs).
	tune func(badger.Options) badger.Options
}

// Store is the one badger database, shared by all namespaces.
type Store struct {
	db        *badger.DB
	dir       string
	ephemeral bool
	log       *slog.Logger

	// mu guards closed: every operation holds it for reading, Close for
	// writing, so the database is never used after it is closed.
	mu     sync.RWMutex
	closed bool

	stop      chan struct{} // closed by Close to stop the maintenance goroutine
	loopDone  chan struct{} // closed by the maintenance goroutine when it returns
	closeOnce sync.Once
	closeErr  error
	gcPasses  atomic.Int64 // ticker-driven GC passes so far, for tests

	compactAt   int          // level-0 tables that trigger a compaction; 0: never
	compactions atomic.Int64 // compactions run so far (ticker and Close), for tests
	purges      atomic.Int64 // purges run so far (see purge.go), for tests

	seed    maphash.Seed
	stripes [appendStripes]sync.Mutex // serialise Appends per (namespace, chat)
}

// Open opens (creating it 0700 if needed) the database in dir with synced
// writes and starts the maintenance goroutine (value-log GC and level-0
// compaction).
func Open(dir string, opts Options) (*Store, error) {
	if dir == "" {
		return nil, errors.New("open memory: empty data directory")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("open memory in %s: %w", dir, err)
	}
	logger := loggerOrDiscard(opts.Logger)
	bo := badger.DefaultOptions(dir).
		WithSyncWrites(true).
		WithLogger(badgerLogger{logger})
	if opts.tune != nil {
		bo = opts.tune(bo)
	}
	db, err := badger.Open(bo)
	if err != nil {
		if strings.Contains(err.Error(), "Cannot acquire directory lock") {
			return nil, &inUseError{dir: dir, cause: err}
		}
		return nil, fmt.Errorf("open memory in %s: %w", dir, err)
	}
	s := newStore(db, dir, false, logger)
	s.compactAt = compactThreshold(opts.CompactTables)
	gcEvery, compactEvery := opts.GCInterval, opts.CompactInterval
	if gcEvery <= 0 {
		gcEvery = defaultGCInterval
	}
	if compactEvery <= 0 {
		compactEvery = defaultCompactInterval
	}
	go s.maintain(gcEvery, compactEvery)
	return s, nil
}

// OpenEphemeral opens a database held only in memory: nothing is written to
// disk and everything is gone after Close. It runs no maintenance
// goroutine.
func OpenEphemeral(opts Options) (*Store, error) {
	logger := loggerOrDiscard(opts.Logger)
	bo := badger.DefaultOptions("").
		WithInMemory(true).
		WithLogger(badgerLogger{logger})
	db, err := badger.Open(bo)
	if err != nil {
		return nil, fmt.Errorf("open ephemeral memory: %w", err)
	}
	s := newStore(db, "", true, logger)
	close(s.loopDone)
	return s, nil
}

func newStore(db *badger.DB, dir string, ephemeral bool, logger *slog.Logger) *Store {
	return &Store{
		db:        db,
		dir:       dir,
		ephemeral: ephemeral,
		log:       logger,
		stop:      make(chan struct{}),
		loopDone:  make(chan struct{}),
		seed:      maphash.MakeSeed(),
	}
}

// Ephemeral reports whether the store lives only in memory.
func (s *Store) Ephemeral() bool { return s.ephemeral }

// Dir is the data directory, or "" for an ephemeral store.
func (s *Store) Dir() string { return s.dir }

// Close stops the maintenance goroutine and waits for it, compacts level 0
// if it holds CompactTables tables or more (see compact.go), and closes
// the database. It is idempotent: later calls return the first call's
// result.
func (s *Store) Close() error {
	s.closeOnce.Do(func() {
		close(s.stop)
		<-s.loopDone
		s.mu.Lock()
		defer s.mu.Unlock()
		s.closed = true
		if err := s.compactIfCrowded("close"); err != nil {
			// The data is intact; the next process compacts.
			s.log.Warn("memory: compaction at close failed", "err", err)
		}
		if err := s.db.Close(); err != nil {
			s.closeErr = fmt.Errorf("close memory: %w", err)
		}
	})
	return s.closeErr
}

// RunGC runs value-log GC until badger finds nothing more to rewrite. An
// ephemeral store has no value log; RunGC is then a no-op.
func (s *Store) RunGC() error { return s.runGC(nil) }

func (s *Store) runGC(stop <-chan struct{}) error {
	if s.ephemeral {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	for {
		err := s.db.RunValueLogGC(gcDiscardRatio)
		switch {
		case errors.Is(err, badger.ErrNoRewrite), errors.Is(err, badger.ErrRejected):
			// Nothing left to rewrite, or another pass is already running.
			return nil
		case err != nil:
			return fmt.Errorf("value log gc: %w", err)
		}
		select {
		case <-stop:
			return nil
		default:
		}
	}
}

// maintain is the Store's one background goroutine: value-log GC every
// gcEvery, a level-0 check every compactEvery. Close stops it and waits.
func (s *Store) maintain(gcEvery, compactEvery time.Duration) {
	defer close(s.loopDone)
	gc := time.NewTicker(gcEvery)
	defer gc.Stop()
	compact := time.NewTicker(compactEvery)
	defer compact.Stop()
	for {
		select {
		case <-s.stop:
			return
		case <-gc.C:
			if err := s.runGC(s.stop); err != nil {
				s.log.Warn("memory: value log gc failed", "err", err)
			}
			s.gcPasses.Add(1)
		case <-compact.C:
			s.mu.RLock()
			err := s.compactIfCrowded("ticker")
			s.mu.RUnlock()
			if err != nil {
				s.log.Warn("memory: compaction failed", "err", err)
			}
		}
	}
}

// view runs fn in a read-only transaction.
func (s *Store) view(fn func(txn *badger.Txn) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return s.db.View(fn)
}

// update runs fn in a read-write transaction, retrying it when badger
// reports a conflict with a concurrent write; fn must be safe to rerun.
func (s *Store) update(fn func(txn *badger.Txn) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	var err error
	for range maxConflictRetries {
		err = s.db.Update(fn)
		if !errors.Is(err, badger.ErrConflict) {
			return err
		}
	}
	return err
}

// stripe returns the lock that serialises Appends to one (namespace, chat).
func (s *Store) stripe(chatPrefix []byte) *sync.Mutex {
	return &s.stripes[maphash.Bytes(s.seed, chatPrefix)%appendStripes]
}
