package hub

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/bulkhead-dev/bulkhead/guard"
	"github.com/bulkhead-dev/bulkhead/llm"
	"github.com/bulkhead-dev/bulkhead/memory"
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
	// Every batches the upkeep: an owner's summary and entities of a chat
	// are brought up to date once Every of its interactions are new, not
	// after each (0 or 1: after each). What is left waits for the next
	// batch, or for the chat to go Idle in a long process.
	Every int
	// Idle is how long after a chat's last turn its pending upkeep runs
	// whatever its count, in a process that lives that long (0: never;
	// FlushMemory runs it too).
	Idle time.Duration
	// CallsOf, when set, is what the model calls of a turn's upkeep keep
	// of the turn's context: the function it returns for a turn makes
	// the context of each such call (the engine's keeps the models and
	// Ollama host of the turn's session: the upkeep of a chat goes where
	// its latest turn went). nil: the upkeep's calls carry nothing of it.
	CallsOf func(turn context.Context) func(context.Context) context.Context
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
	// calls makes the context of its model calls from the job's
	// (MemoryOptions.CallsOf, for the latest turn that brought it due);
	// nil: the job's as it is.
	calls func(context.Context) context.Context
	// warm: no upkeep, only the planner's prompt read for the chat's
	// next plan, if no plan or warm has read one since (warmLater), or
	// whatever was read (always: the next plan's window of earlier
	// requests moves); with app VanillaApp, the conversation's prompt
	// for its next answer (enqueueRead).
	warm, always bool
}

// key names the job: its owner and chat.
func (j memJob) key() string { return j.owner() + "\x00" + j.chat }

// jobOf is the job of owner ("hub" or "spoke/<app>") and chat.
func jobOf(owner, chat string) memJob {
	if app, ok := strings.CutPrefix(owner, spokePrefix); ok {
		return memJob{app: app, chat: chat}
	}
	return memJob{chat: chat}
}

func (j memJob) owner() string {
	if j.app == "" {
		return hubOwner
	}
	return SpokeOwner(j.app)
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
	pending  []memJob           // below Every: waiting for more, or for Idle
	gen      map[string]uint64  // owner → generation; Forget bumps it
	failed   map[string]failure // job key → its failures (back-off)
	dropped  bool               // the current job was cancelled by drop
	lastEnd  time.Time          // when the last turn ended
	flushing int                // Flush callers waiting: Quiet is skipped
	forcing  int                // of them, those that run pending upkeep too
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
		ctx: ctx, close: cancel, gen: map[string]uint64{}, failed: map[string]failure{}}
	go m.loop()
	return m
}

func (m *memorizer) poke() {
	select {
	case m.kick <- struct{}{}:
	default:
	}
}

// enqueue adds a job unless the same one is queued already (it then
// takes calls, the latest turn's), or its last run failed and its
// back-off has not passed; it never blocks. It reports whether it queued
// the job.
func (m *memorizer) enqueue(app, chat string, calls func(context.Context) context.Context) bool {
	return m.add(memJob{app: app, chat: chat, calls: calls})
}

func (m *memorizer) add(j memJob) bool {
	app, chat, calls := j.app, j.chat, j.calls
	m.mu.Lock()
	j.gen = m.gen[j.owner()]
	i := slices.IndexFunc(m.queue, func(q memJob) bool { return q.app == app && q.chat == chat && q.warm == j.warm })
	dup := i >= 0
	if dup {
		m.queue[i].calls = calls
		m.queue[i].always = m.queue[i].always || j.always
	}
	full := len(m.queue) >= m.opts.Queue
	f, failed := m.failed[j.key()]
	backing := failed && time.Now().Before(f.until)
	added := !dup && !full && !backing && !m.upkeepReads(j)
	if added {
		m.queue = append(m.queue, j)
	}
	m.mu.Unlock()
	if full && !dup {
		m.o.log.Warn("memory queue full; update dropped", "owner", j.owner(), "chat", chat)
	}
	m.poke()
	return added
}

// failure is an upkeep job's run of failures: the next run waits until
// until (memBackoff doubled for each failure, at most memBackoffMax).
type failure struct {
	n     int
	until time.Time
}

// The back-off after a failed upkeep: a summary that fails (a model that
// cannot write one, Ollama down) is not tried again on every turn.
var (
	memBackoff    = time.Minute
	memBackoffMax = time.Hour
)

// failedRun notes that j failed (err != nil) or succeeded.
func (m *memorizer) failedRun(j memJob, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err == nil {
		delete(m.failed, j.key())
		return
	}
	f := m.failed[j.key()]
	f.n++
	wait := memBackoff << min(f.n-1, 10)
	f.until = time.Now().Add(min(wait, memBackoffMax))
	m.failed[j.key()] = f
}

// due takes owner's upkeep of chat after a turn (its context turn):
// queued when Every of its interactions are new since its summary, else
// kept pending (for Idle or the next batch). Its calls go where the
// latest turn's went (MemoryOptions.CallsOf). It returns the model calls
// the upkeep will make because of this turn (two: a summary and an
// extraction), 0 when it waits.
func (m *memorizer) due(turn context.Context, app, chat string) int {
	var calls func(context.Context) context.Context
	if m.opts.CallsOf != nil {
		calls = m.opts.CallsOf(turn)
	}
	j := memJob{app: app, chat: chat, calls: calls}
	every := max(m.opts.Every, 1)
	if every > 1 {
		n, err := m.o.newInteractions(j.owner(), chat)
		if err != nil {
			m.o.log.Warn("memory: count new interactions", "owner", j.owner(), "err", err)
		}
		if err == nil && n < every {
			m.mu.Lock()
			if i := slices.IndexFunc(m.pending, func(q memJob) bool { return q.app == app && q.chat == chat }); i >= 0 {
				m.pending[i].calls = calls
			} else {
				m.pending = append(m.pending, j)
			}
			m.mu.Unlock()
			return 0
		}
	}
	m.mu.Lock()
	m.pending = slices.DeleteFunc(m.pending, func(q memJob) bool { return q.app == app && q.chat == chat })
	m.mu.Unlock()
	if !m.enqueue(app, chat, calls) {
		return 0 // queued already (counted then), or backing off
	}
	return callsPerJob
}

// callsPerJob is the model calls one upkeep makes: a summary and an
// extraction of entities.
const callsPerJob = 2

// promote queues every pending upkeep (the chats went idle, or a flush).
// The caller holds m.mu.
func (m *memorizer) promote() {
	var wait []memJob
	for _, j := range m.pending {
		if f, ok := m.failed[j.key()]; ok && time.Now().Before(f.until) && m.forcing == 0 {
			wait = append(wait, j) // backing off after a failure
			continue
		}
		j.gen = m.gen[j.owner()]
		if i := slices.IndexFunc(m.queue, func(q memJob) bool { return q.app == j.app && q.chat == j.chat && !q.warm }); i >= 0 {
			m.queue[i].calls = j.calls
		} else {
			m.queue = append(m.queue, j)
		}
	}
	m.pending = wait
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
	if len(m.pending) > 0 && m.o.turnsRunning() == 0 {
		switch since := time.Since(m.lastEnd); {
		case m.flushing > 0 && m.forcing > 0:
			m.promote()
		case m.opts.Idle > 0 && since >= m.opts.Idle:
			m.promote() // the chats went idle
		case m.opts.Idle > 0 && len(m.queue) == 0:
			return memJob{}, m.opts.Idle - since, false
		}
	}
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
	// The hub's upkeep goes last: its calls begin as the planner's prompt
	// does, so the slot it leaves newest holds the planner's prefix for
	// the next turn, however many of the apps' upkeep calls went before
	// (a server evicts the slot used longest ago).
	i := max(slices.IndexFunc(m.queue, func(q memJob) bool { return q.app != "" }), 0)
	j := m.queue[i]
	m.queue = slices.Delete(m.queue, i, i+1)
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
	m.cancel, m.dropped = cancel, false
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
	if j.calls != nil {
		ctx = j.calls(ctx)
	}
	if j.warm && j.app != "" {
		if !m.hubReadsBeside(ctx, j) {
			m.o.warm(ctx, j.app, j.chat)
		}
		return
	}
	if j.warm {
		if _, read := m.o.plannerRead.Load(hostIn(ctx, m.o.opts.HubModel)); !read || j.always {
			m.o.warm(ctx, "", j.chat)
		}
		return
	}
	var err error
	if j.app == "" {
		err = m.o.rememberHub(ctx, j.chat)
	} else {
		err = m.o.rememberSpoke(ctx, j.app, j.chat)
	}
	switch {
	case errors.Is(err, errUpToDate):
		err = nil
	case err != nil:
		m.o.log.Warn("memory update failed; backing off", "owner", j.owner(), "chat", j.chat, "err", err)
	default:
		// What it wrote comes before what the prompts' cache holds:
		// the server reads the new prefix now, not on the next turn.
		m.o.warm(ctx, j.app, j.chat)
	}
	m.mu.Lock()
	dropped := m.dropped
	m.dropped = false
	m.mu.Unlock()
	if m.ctx.Err() == nil && !dropped {
		m.failedRun(j, err) // a job cut by the shutdown or by a forget is no failure
	}
}

// flush runs every queued job now, quiet period or not — with all, the
// pending ones below Every too — and waits for them or for ctx.
func (m *memorizer) flush(ctx context.Context, all bool) error {
	m.mu.Lock()
	if all {
		m.promote()
	}
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
	m.pending = slices.DeleteFunc(m.pending, match)
	if m.current != nil && match(*m.current) && m.cancel != nil {
		m.dropped = true // its cancelled run is no failure
		m.cancel()
	}
	for k := range m.failed {
		if owner, chat, ok := strings.Cut(k, "\x00"); ok && match(jobOf(owner, chat)) {
			delete(m.failed, k) // what is forgotten has no back-off
		}
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
			if err := m.flush(ctx, false); err != nil {
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
// waiting for the quiet period or a full batch (Every), and returns when
// none is left or ctx ends. Without long-term memory it returns at once.
func (o *Operator) FlushMemory(ctx context.Context) error {
	if o.mem == nil {
		return nil
	}
	if err := o.mem.flush(ctx, true); err != nil {
		return fmt.Errorf("flush memory: %w", err)
	}
	return nil
}

// newInteractions counts owner's interactions of chat logged since its
// summary: what the next upkeep would read.
func (o *Operator) newInteractions(owner, chat string) (int, error) {
	ns, err := o.store.Namespace(owner)
	if err != nil {
		return 0, err
	}
	sum, err := ns.LongTerm().Summary(chat)
	if err != nil && !errors.Is(err, memory.ErrNotFound) {
		return 0, err
	}
	its, _, err := ns.Before(chat, 0, recentForMemory)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, it := range its {
		if it.Seq > sum.Through && it.Status != memory.StatusPending {
			n++
		}
	}
	return n, nil
}

// BackgroundCalls is how many model calls the background upkeep of
// long-term memory and the seats (seat.go) have made since the operator
// started.
func (o *Operator) BackgroundCalls() int64 { return o.bgCalls.Load() }

// counted wraps a model so that each call counts as a background one.
type counted struct {
	m Model
	n *atomic.Int64
}

func (c counted) Chat(ctx context.Context, req llm.Request, fn func(llm.Chunk)) (llm.Response, error) {
	c.n.Add(1)
	return c.m.Chat(ctx, req, fn)
}

func (c counted) Model() string { return c.m.Model() }

// WaitMemory waits for the long-term memory updates already due (those
// a full batch or an idle chat brought due, not the batches still
// filling) to finish, or for ctx: a short-lived client of a serving
// process waits so, as a process of its own waited at its close.
func (o *Operator) WaitMemory(ctx context.Context) error {
	if o.mem == nil {
		return nil
	}
	return o.mem.flush(ctx, false)
}
