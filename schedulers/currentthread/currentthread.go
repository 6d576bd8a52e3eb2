// Package currentthread is weft's single-threaded scheduler: every task runs
// on the goroutine that called BlockOn, and only while a BlockOn is in
// progress. Between BlockOn calls spawned tasks stay suspended; the next
// BlockOn resumes them.
//
// # Queues
//
// Two FIFO queues hold runnable tasks. The local queue is touched only by the
// goroutine that owns the scheduler's core (the one inside BlockOn), without
// a lock: tasks spawned or woken from inside a task go there. The injection
// queue takes tasks from any other goroutine under a mutex, with an atomic
// length mirror so the owner's common "is it empty?" check takes no lock.
// Every GlobalQueueInterval ticks (31 by default) the owner looks at the
// injection queue first, so remote work cannot starve behind local work.
//
// # Driver, timers and parking
//
// Every EventInterval ticks (61 by default) the owner polls the driver with
// a zero timeout, fires due timers and wakes the wakers deferred by yielding
// tasks. With nothing to run it parks: on the driver when the runtime has
// one, otherwise on a notification, for at most the time left until the next
// timer deadline. With an auto-advancing virtual clock it moves the clock to
// the next deadline instead of sleeping.
//
// A remote wake must unpark a parked owner, and must not pay for a system
// call when the owner is busy. The owner stores parked=true and then checks
// the injection queue's length; a waker stores the new length and then
// loads parked. Both are sequentially consistent atomics, so at least one of
// the two sees the other: either the owner finds the task or the waker
// unparks it.
//
// # Several BlockOn callers
//
// The core is a token in a one-slot channel. The BlockOn caller holding it
// runs every task; other callers wait for their root to complete (run by the
// owner) or for the token, whichever comes first.
//
// # Shutdown
//
// Shutdown closes the injection queue and the task set, waits for the owner
// to leave its loop (the owner checks at every tick), cancels every task
// (their futures' Drop runs) and drains both queues, then closes the
// driver. After it returns no task is polled and BlockOn returns at once.
package currentthread

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

// Config is the currentthread module's configuration subtree.
type Config struct {
	// EventInterval is how many ticks pass between polls of the driver and
	// timers while tasks keep the scheduler busy. Between 1 and
	// MaxInterval.
	EventInterval int `koanf:"event_interval"`
	// GlobalQueueInterval is how many ticks pass between checks of the
	// injection queue ahead of the local queue. Between 1 and
	// MaxInterval.
	GlobalQueueInterval int `koanf:"global_queue_interval"`
}

// MaxInterval bounds the intervals: the tick counter has 32 bits.
const MaxInterval int64 = math.MaxUint32

// DefaultConfig returns the defaults: event interval 61, global queue
// interval 31.
func DefaultConfig() Config { return Config{EventInterval: 61, GlobalQueueInterval: 31} }

// Validate reports every invalid key as a *core.ConfigError naming it
// (joined with errors.Join when there are several).
func (c *Config) Validate() error {
	var errs []error
	interval := func(key string, v int) {
		switch {
		case v < 1:
			errs = append(errs, &core.ConfigError{Key: key, Problem: fmt.Sprintf("must be >= 1, got %d", v)})
		case int64(v) > MaxInterval:
			errs = append(errs, &core.ConfigError{Key: key,
				Problem: fmt.Sprintf("must be at most %d (the tick counter has 32 bits), got %d", MaxInterval, v)})
		}
	}
	interval("event_interval", c.EventInterval)
	interval("global_queue_interval", c.GlobalQueueInterval)
	return errors.Join(errs...)
}

func init() {
	core.Register(core.Module{
		Kind:      core.KindScheduler,
		Name:      "currentthread",
		Doc:       "single-threaded scheduler: tasks run on the goroutine inside BlockOn",
		NewConfig: func() any { c := DefaultConfig(); return &c },
		New: func(cfg, params any) (any, error) {
			return New(*cfg.(*Config), *params.(*core.SchedulerParams))
		},
	})
}

// Scheduler is the current-thread scheduler. Create it with New; it
// implements core.Scheduler and core.MetricsSource.
type Scheduler struct {
	cfg    Config
	p      core.SchedulerParams
	tasks  *core.TaskSet
	driver core.Driver
	time   *core.Time
	worker *worker

	// mu guards inject and closed.
	mu        sync.Mutex
	inject    core.TaskQueue
	closed    bool
	injectLen atomic.Int64 // mirror of inject.Len(), written under mu
	isClosed  atomic.Bool  // mirror of closed

	// core is the token of the goroutine allowed to run tasks.
	core       chan struct{}
	shutdownCh chan struct{}
	shutdown   sync.Once
	closeDrv   sync.Once
	// ownerGoroutine is the id of the goroutine holding the core, so a
	// Shutdown called from inside a task can tell it must not wait for
	// the core it is itself holding.
	ownerGoroutine atomic.Uint64

	parked   atomic.Bool
	unparkCh chan struct{}
	timer    *time.Timer

	// Owned by the core holder.
	local    core.TaskQueue
	deferred []core.Waker
	spare    []core.Waker
	tick     uint32
	cx       *core.Context
	counts   counters

	published publishedMetrics
}

type counters struct {
	polls, parks, unparks, local, remote uint64
	batchStart                           time.Time
	batchPolls                           uint64
	pollNanos                            float64
}

type publishedMetrics struct {
	polls, parks, unparks, local, remote, budget atomic.Uint64
	depth                                        atomic.Int64
	meanPoll                                     atomic.Uint64 // float64 bits
}

// worker is the core.Worker handed to tasks in their Context.
type worker struct{ s *Scheduler }

func (w *worker) Scheduler() core.Scheduler { return w.s }
func (w *worker) Defer(wk core.Waker)       { w.s.deferred = append(w.s.deferred, wk) }
func (w *worker) Driver() core.Driver       { return w.s.driver }
func (w *worker) Time() *core.Time          { return w.s.time }

// Blocking implements core.BlockingWorker: the runtime's blocking pool.
func (w *worker) Blocking() core.BlockingSpawner { return w.s.p.Blocking }

// New builds a current-thread scheduler. It creates the runtime's driver,
// if it has one, and owns it from then on.
func New(cfg Config, p core.SchedulerParams) (*Scheduler, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if p.Tasks == nil {
		return nil, fmt.Errorf("currentthread: SchedulerParams.Tasks is nil")
	}
	s := &Scheduler{
		cfg:        cfg,
		p:          p,
		tasks:      p.Tasks,
		time:       p.Time,
		core:       make(chan struct{}, 1),
		shutdownCh: make(chan struct{}),
		unparkCh:   make(chan struct{}, 1),
	}
	if p.NewDriver != nil {
		d, err := p.NewDriver()
		if err != nil {
			return nil, fmt.Errorf("currentthread: creating driver: %w", err)
		}
		s.driver = d
	}
	s.worker = &worker{s: s}
	// A timer armed from another goroutine before our next deadline must
	// cut our park short.
	s.time.SetUnpark(s.unpark)
	s.cx = core.NewWorkerContext(s.worker)
	s.core <- struct{}{}
	if s.driver == nil {
		s.timer = time.NewTimer(time.Hour)
		s.timer.Stop()
	}
	return s, nil
}

// Spawn binds t and queues it.
func (s *Scheduler) Spawn(t *core.Task, from core.Worker) error {
	t.Bind(s)
	if err := s.tasks.Bind(t); err != nil {
		return err
	}
	s.Schedule(t, from)
	return nil
}

// Schedule queues a notified task: on the local queue when called by the
// core holder, otherwise on the injection queue (unparking the holder).
func (s *Scheduler) Schedule(t *core.Task, from core.Worker) {
	if from == core.Worker(s.worker) {
		if s.closedNow() {
			t.Shutdown()
			return
		}
		s.counts.local++
		s.local.Push(t)
		return
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		t.Shutdown()
		return
	}
	s.inject.Push(t)
	s.injectLen.Store(int64(s.inject.Len()))
	s.mu.Unlock()
	s.published.remote.Add(1)
	if s.parked.Load() {
		s.unpark()
	}
}

func (s *Scheduler) closedNow() bool { return s.isClosed.Load() }

func (s *Scheduler) unpark() {
	if s.driver != nil {
		s.driver.Unpark()
		return
	}
	select {
	case s.unparkCh <- struct{}{}:
	default:
	}
}

// BlockOn runs tasks on the calling goroutine until done is closed or the
// scheduler shuts down. If another goroutine is already running the
// scheduler, it waits for done, or to take over once that goroutine leaves.
func (s *Scheduler) BlockOn(root *core.Task, done <-chan struct{}) {
	for {
		select {
		case <-done:
			return
		case <-s.shutdownCh:
			return
		case <-s.core:
			if s.closedNow() {
				s.core <- struct{}{}
				return
			}
			s.ownerGoroutine.Store(core.GoroutineID())
			s.run(done)
			s.ownerGoroutine.Store(0)
			if s.closedNow() {
				// Shut down from inside a task: the cleanup that needs
				// no core is ours to finish.
				s.closeDriver()
			}
			s.core <- struct{}{}
			return
		}
	}
}

func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// run is the owner's loop.
func (s *Scheduler) run(done <-chan struct{}) {
	s.p.Hooks.RunAfterStart()
	defer s.p.Hooks.RunBeforeStop()
	defer s.publish()
	s.counts.batchStart = time.Now()
	for !s.closedNow() && !isDone(done) {
		s.tick++
		if s.tick%uint32(s.cfg.EventInterval) == 0 {
			s.maintenance()
		}
		t := s.next()
		if t == nil {
			if len(s.deferred) > 0 {
				s.parkFor(0)
				continue
			}
			s.parkIdle(done)
			continue
		}
		s.cx.ResetBudget()
		s.counts.polls++
		s.counts.batchPolls++
		if t.Run(s.cx) {
			// Woken during its own poll (a yield or a spent budget): to
			// the back of the queue, behind the tasks already waiting.
			s.local.Push(t)
		}
	}
}

// next picks the next task: the injection queue first every
// GlobalQueueInterval ticks, otherwise the local queue first.
func (s *Scheduler) next() *core.Task {
	if s.tick%uint32(s.cfg.GlobalQueueInterval) == 0 {
		if t := s.popInject(); t != nil {
			return t
		}
	}
	if t := s.local.Pop(); t != nil {
		return t
	}
	return s.popInject()
}

// popInject moves the whole injection queue to the local queue (one lock
// for the batch) and returns its first task.
func (s *Scheduler) popInject() *core.Task {
	if s.injectLen.Load() == 0 {
		return nil
	}
	s.mu.Lock()
	var batch core.TaskQueue
	batch.PushAll(&s.inject)
	s.injectLen.Store(0)
	s.mu.Unlock()
	t := batch.Pop()
	if batch.Len() > 0 {
		// Injected tasks go ahead of nothing: they join the back of the
		// local queue in arrival order.
		s.local.PushAll(&batch)
	}
	return t
}

// maintenance polls the driver and timers without blocking and publishes
// metrics.
func (s *Scheduler) maintenance() {
	s.parkFor(0)
	s.publish()
}

// parkIdle is called with no runnable task. It parks until a wake, an I/O
// event or the next timer deadline.
func (s *Scheduler) parkIdle(done <-chan struct{}) {
	if s.time.CanAutoAdvance() {
		// Look for I/O first; jump the virtual clock only if nothing
		// became runnable.
		s.parkFor(0)
		if s.local.Len() == 0 && s.injectLen.Load() == 0 && len(s.deferred) == 0 {
			s.time.AutoAdvance()
		}
		return
	}
	s.p.Hooks.RunBeforePark()
	timeout := s.time.Parking(-1)
	defer s.time.Unparked()
	s.parked.Store(true)
	if s.injectLen.Load() == 0 && !s.closedNow() && !isDone(done) {
		s.counts.parks++
		s.publish()
		s.parkOn(timeout)
		s.counts.unparks++
		// Time parked is not poll time.
		s.counts.batchStart = time.Now()
	}
	s.parked.Store(false)
	s.afterPark()
	s.p.Hooks.RunAfterUnpark()
}

// parkFor polls the driver for at most d, then fires timers and wakes
// deferred wakers.
func (s *Scheduler) parkFor(d time.Duration) {
	s.parkOn(d)
	s.afterPark()
}

func (s *Scheduler) parkOn(timeout time.Duration) {
	if s.driver != nil {
		if err := s.driver.Park(timeout); err != nil && s.p.Log != nil {
			s.p.Log.Error("currentthread: driver park failed", "err", err)
		}
		return
	}
	switch {
	case timeout == 0:
		select {
		case <-s.unparkCh:
		default:
		}
	case timeout < 0:
		<-s.unparkCh
	default:
		s.timer.Reset(timeout)
		select {
		case <-s.unparkCh:
		case <-s.timer.C:
		}
		s.timer.Stop()
	}
}

func (s *Scheduler) afterPark() {
	s.time.Fire()
	if len(s.deferred) == 0 {
		return
	}
	// Swap buffers: a woken task may defer again while we iterate.
	d := s.deferred
	s.deferred = s.spare[:0]
	for i, w := range d {
		s.cx.Wake(w)
		d[i] = nil
	}
	s.spare = d[:0]
}

// publish copies the owner's counters where Metrics can read them.
func (s *Scheduler) publish() {
	c := &s.counts
	if c.batchPolls > 0 {
		el := time.Since(c.batchStart)
		c.pollNanos = 0.9*c.pollNanos + 0.1*float64(el.Nanoseconds())/float64(c.batchPolls)
		if c.pollNanos == 0 {
			c.pollNanos = float64(el.Nanoseconds()) / float64(c.batchPolls)
		}
	}
	c.batchPolls = 0
	c.batchStart = time.Now()
	p := &s.published
	p.polls.Store(c.polls)
	p.parks.Store(c.parks)
	p.unparks.Store(c.unparks)
	p.local.Store(c.local)
	p.budget.Store(s.cx.BudgetExhaustions())
	p.depth.Store(int64(s.local.Len()))
	p.meanPoll.Store(math.Float64bits(c.pollNanos))
}

// Metrics returns the counters of the scheduler's single worker, as last
// published (at every maintenance tick, park and BlockOn exit).
func (s *Scheduler) Metrics() []core.WorkerMetrics {
	p := &s.published
	return []core.WorkerMetrics{{
		Worker:          0,
		Polls:           p.polls.Load(),
		Parks:           p.parks.Load(),
		Unparks:         p.unparks.Load(),
		LocalSchedules:  p.local.Load(),
		RemoteSchedules: p.remote.Load(),
		BudgetYields:    p.budget.Load(),
		QueueDepth:      int(p.depth.Load()) + int(s.injectLen.Load()),
		MeanPollNanos:   math.Float64frombits(p.meanPoll.Load()),
	}}
}

// Shutdown closes the scheduler, cancels every task and closes the driver.
// Called from a goroutine other than the one running tasks, it waits until
// that goroutine has left its loop. Called from inside a task, it cancels
// every other task at once and the running task when its poll returns; the
// enclosing BlockOn then returns.
func (s *Scheduler) Shutdown() {
	s.shutdown.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.isClosed.Store(true)
		s.mu.Unlock()
		close(s.shutdownCh)
		if owner := s.ownerGoroutine.Load(); owner != 0 && owner == core.GoroutineID() {
			// We are the core holder, inside a task's poll.
			s.cancelAll()
			return
		}
		s.unpark()
		<-s.core // never given back: no task runs again
		s.cancelAll()
		s.closeDriver()
	})
}

func (s *Scheduler) closeDriver() {
	s.closeDrv.Do(func() {
		if s.driver == nil {
			return
		}
		if err := s.driver.Close(); err != nil && s.p.Log != nil {
			s.p.Log.Error("currentthread: closing driver", "err", err)
		}
	})
}

// cancelAll cancels every task and empties both queues. The caller holds
// the core.
func (s *Scheduler) cancelAll() {
	s.tasks.ShutdownAll(0)
	for t := s.local.Pop(); t != nil; t = s.local.Pop() {
		t.Shutdown()
	}
	s.mu.Lock()
	var rest core.TaskQueue
	rest.PushAll(&s.inject)
	s.injectLen.Store(0)
	s.mu.Unlock()
	for t := rest.Pop(); t != nil; t = rest.Pop() {
		t.Shutdown()
	}
	s.deferred = nil
}
