package hub

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/bulkhead-dev/bulkhead/guard"
)

// MemoryOptions configure long-term memory. The zero value keeps only the
// interaction logs (and still masks what spokes store).
type MemoryOptions struct {
	// Enabled turns long-term memory on: after each turn that is not
	// private, a background worker has the hub's model update the hub's
	// summary of the chat and its entities (from the user's messages
	// only), and each spoke's own model update that spoke's summary and
	// entities (the hub keeps a masked copy as its record of the spoke);
	// typed results become hub entities; the planner sees the hub's
	// summary and entity names; app spokes get the recall tool.
	Enabled bool
	// SummaryChars bounds a summary (0: 800).
	SummaryChars int
	// Queue bounds the pending jobs; past it a job is dropped and logged
	// (0: 64). A dropped job loses nothing for good: the next job for the
	// same owner and chat covers every interaction since the summary.
	Queue int
	// Quiet is how long no turn must have run before a job starts, so that
	// background work does not compete with the user's next request for a
	// local model (0: start as soon as no turn is running).
	Quiet time.Duration
	// Drain is how long Close lets queued jobs finish before it cancels
	// them (0: it cancels at once).
	Drain time.Duration
	// Detector finds instruction-like text to mask (nil: guard.Rules).
	Detector guard.Detector
}

const (
	defaultSummaryChars = 800
	defaultMemQueue     = 64
	memJobTimeout       = 2 * time.Minute
	// recentForMemory is how many of the newest interactions one job reads.
	recentForMemory = 20
)

// memJob is one owner's memory of one chat to bring up to date.
type memJob struct {
	app  string // "" for the hub
	chat string
	gen  uint64
}

func (j memJob) owner() string {
	if j.app == "" {
		return hubOwner
	}
	return "spoke/" + j.app
}

// memorizer is the operator's one background worker for long-term memory.
// The operator owns it: New starts its goroutine, Close stops it and waits.
// Jobs run one at a time, only while no turn runs (after Quiet), each with
// its own context, which Close and Forget cancel.
type memorizer struct {
	o     *Operator
	opts  MemoryOptions
	kick  chan struct{} // wakes the worker: a job came, a turn ended
	stop  chan struct{}
	done  chan struct{}
	ctx   context.Context
	close context.CancelFunc

	mu       sync.Mutex
	queue    []memJob
	gen      map[string]uint64 // owner → generation; Forget bumps it
	lastEnd  time.Time         // when the last turn ended
	flushing int               // Flush callers waiting: Quiet is skipped
	current  *memJob
	cancel   context.CancelFunc // the current job's
	waiters  []chan struct{}    // closed when nothing is queued or running

	runMu sync.Mutex // held while a job runs; Forget takes it
	once  sync.Once
}

func newMemorizer(o *Operator, opts MemoryOptions) *memorizer {
	if opts.SummaryChars <= 0 {
		opts.SummaryChars = defaultSummaryChars
	}
	if opts.Queue <= 0 {
		opts.Queue = defaultMemQueue
	}
	ctx, cancel := context.WithCancel(context.Background())
	m := &memorizer{o: o, opts: opts, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
		ctx: ctx, close: cancel, gen: map[string]uint64{}}
	go m.loop()
	return m
}

func (m *memorizer) poke() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// enqueue adds a job unless the same one is queued already; it never
// blocks.
func (m *memorizer) enqueue(app, chat string) {
	j := memJob{app: app, chat: chat}
	m.mu.Lock()
	j.gen = m.gen[j.owner()]
	dup := slices.ContainsFunc(m.queue, func(q memJob) bool { return q.app == app && q.chat == chat })
	full := len(m.queue) >= m.opts.Queue
	if !dup && !full {
		m.queue = append(m.queue, j)
	}
	m.mu.Unlock()
	if full && !dup {
		m.o.log.Warn("memory queue full; update dropped", "owner", j.owner(), "chat", chat)
	}
	m.poke()
}

// turnEnded notes the time for the quiet period and wakes the worker.
func (m *memorizer) turnEnded() {
	m.mu.Lock()
	m.lastEnd = time.Now()
	m.mu.Unlock()
	m.poke()
}

func (m *memorizer) loop() {
	defer close(m.done)
	for {
		j, wait, ok := m.next()
		if ok {
			m.run(j)
			continue
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if wait > 0 {
			timer = time.NewTimer(wait)
			fire = timer.C
		}
		select {
		case <-m.kick:
		case <-fire:
		case <-m.stop:
			if timer != nil {
				timer.Stop()
			}
			return
		}
		if timer != nil {
			timer.Stop()
		}
	}
}

// next pops the next job if one may run now; otherwise it says how long
// to wait (0: until woken).
func (m *memorizer) next() (memJob, time.Duration, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.queue) == 0 {
		m.wakeWaiters()
		return memJob{}, 0, false
	}
	if m.flushing == 0 {
		if m.o.turnsRunning() > 0 {
			return memJob{}, 0, false
		}
		if since := time.Since(m.lastEnd); since < m.opts.Quiet {
			return memJob{}, m.opts.Quiet - since, false
		}
	}
	j := m.queue[0]
	m.queue = m.queue[1:]
	m.current = &j
	return j, 0, true
}

// wakeWaiters releases Flush callers once nothing is queued or running.
// The caller holds m.mu.
func (m *memorizer) wakeWaiters() {
	if len(m.queue) > 0 || m.current != nil {
		return
	}
	for _, w := range m.waiters {
		close(w)
	}
	m.waiters = nil
}

func (m *memorizer) run(j memJob) {
	m.runMu.Lock()
	defer m.runMu.Unlock()
	ctx, cancel := context.WithTimeout(m.ctx, memJobTimeout)
	m.mu.Lock()
	stale := m.gen[j.owner()] != j.gen
	m.cancel = cancel
	m.mu.Unlock()
	defer func() {
		cancel()
		m.mu.Lock()
		m.current, m.cancel = nil, nil
		m.wakeWaiters()
		m.mu.Unlock()
	}()
	if stale {
		return
	}
	var err error
	if j.app == "" {
		err = m.o.rememberHub(ctx, j.chat)
	} else {
		err = m.o.rememberSpoke(ctx, j.app, j.chat)
	}
	if err != nil {
		m.o.log.Warn("memory update failed", "owner", j.owner(), "chat", j.chat, "err", err)
	}
}

// flush runs every queued job now, quiet period or not, and waits for
// them or for ctx.
func (m *memorizer) flush(ctx context.Context) error {
	m.mu.Lock()
	if len(m.queue) == 0 && m.current == nil {
		m.mu.Unlock()
		return nil
	}
	w := make(chan struct{})
	m.waiters = append(m.waiters, w)
	m.flushing++
	m.mu.Unlock()
	m.poke()
	defer func() {
		m.mu.Lock()
		m.flushing--
		m.mu.Unlock()
	}()
	select {
	case <-w:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// forget drops owner's queued jobs (every job, for the hub: spokes' jobs
// write the hub's records), cancels a running one, and calls fn once no
// job runs, so that nothing of owner is written after fn.
func (m *memorizer) forget(owner string, fn func() error) error {
	m.mu.Lock()
	m.gen[owner]++
	m.mu.Unlock()
	return m.drop(func(j memJob) bool { return owner == hubOwner || j.owner() == owner }, fn)
}

// drop removes the queued jobs that match, cancels the running one if it
// matches, and calls fn once no job runs.
func (m *memorizer) drop(match func(memJob) bool, fn func() error) error {
	m.mu.Lock()
	m.queue = slices.DeleteFunc(m.queue, match)
	if m.current != nil && match(*m.current) && m.cancel != nil {
		m.cancel()
	}
	m.mu.Unlock()
	m.runMu.Lock()
	defer m.runMu.Unlock()
	return fn()
}

// shutdown lets queued jobs run for up to grace, then cancels what is
// left and waits for the worker.
func (m *memorizer) shutdown(grace time.Duration) {
	m.once.Do(func() {
		if grace > 0 {
			ctx, cancel := context.WithTimeout(context.Background(), grace)
			if err := m.flush(ctx); err != nil {
				m.o.log.Warn("memory updates cut short at close", "err", err)
			}
			cancel()
		}
		close(m.stop)
		m.close()
		<-m.done
	})
}

// FlushMemory runs the pending long-term memory updates now, without
// waiting for the quiet period, and returns when none is left or ctx
// ends. Without long-term memory it returns at once.
func (o *Operator) FlushMemory(ctx context.Context) error {
	if o.mem == nil {
		return nil
	}
	if err := o.mem.flush(ctx); err != nil {
		return fmt.Errorf("flush memory: %w", err)
	}
	return nil
}
