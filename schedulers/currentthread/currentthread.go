// Package currentthread is weft's single-threaded scheduler: every task runs
// on the goroutine that called BlockOn, and only while a BlockOn is in
// progress. Between BlockOn calls spawned tasks stay suspended; the next
// BlockOn resumes them.
//
// # Queues
//
// Two FIFO queues hold runnable tasks. The run queue is touched only by the
// goroutine that owns the scheduler's core (the one inside BlockOn), without
// a lock: tasks spawned or woken from inside a task go there. The global
// queue (globalq.Queue, from the scheduler kit in schedulers/internal)
// takes tasks from any other goroutine under a mutex, with an atomic length
// mirror so the owner's common "is it empty?" check takes no lock. Every
// GlobalQueueInterval ticks (31 by default) the owner looks at the global
// queue first, so remote work cannot starve behind local work.
//
// # Driver, timers and parking
//
// Every EventInterval ticks (61 by default) the owner polls the driver with
// a zero timeout, fires due timers and wakes the wakers deferred by yielding
// tasks. With nothing to run it parks: on the driver when the runtime has
// one, otherwise on a notification, for at most the time left until the next
// timer deadline. With an auto-advancing virtual clock it moves the clock to
// the next deadline instead of parking.
//
// A remote wake must unpark a parked owner, and must not pay for a system
// call when the owner is busy. The owner stores parked=true and then checks
// the global queue's length (and the spawn queue's, with a policy); a
// waker stores the new length (globalq.Queue stores its length mirror
// under its lock, on every push) and then loads parked. Both are
// sequentially consistent atomics, so at least one of the two sees the
// other: either the owner finds the task or the waker unparks it.
//
// # Scheduling policy
//
// By default the run order is the one above: FIFO, with the global queue
// looked at every GlobalQueueInterval ticks. NewWithPolicy builds a
// scheduler whose run order a Policy decides instead, a plain Go value
// that holds the runnable tasks: the scheduler tells it each task that
// was spawned (Spawned) or became runnable again (Woken), asks it which
// task to poll next (Next; a task it returns is being polled) and tells it
// each task that completed (Completed). Every call comes from the
// goroutine running the scheduler, one at a time, so a policy needs no
// lock. With a policy the scheduler hands it the global queue's tasks at
// every tick, so it always chooses among every runnable task it can know
// of; the driver, the timers, parking and shutdown work as without one.
// The plugin scheduler (module plugin, package plugins) is this hook
// served by a policy in another process.
//
// The default path pays for the hook only a predictable nil check where a
// task is queued or picked: no interface call, no allocation.
//
// # Several BlockOn callers
//
// The core is a token in a one-slot channel. The BlockOn caller holding it
// runs every task; other callers wait for their root to complete (run by the
// owner) or for the token, whichever comes first.
//
// # Shutdown
//
// Shutdown closes the global queue and the task set, waits for the owner
// to leave its loop (the owner checks at every tick), cancels every task
// (their futures' Drop runs) and drains both queues, then closes the
// driver. After it returns no task is polled and BlockOn returns at once.
package currentthread

import (
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/deferred"
	"github.com/weftrt/weft/schedulers/internal/globalq"
	"github.com/weftrt/weft/schedulers/internal/metrics"
	"github.com/weftrt/weft/schedulers/internal/module"
)

// Config is the currentthread module's configuration subtree.
type Config struct {
	// EventInterval is how many ticks pass between polls of the driver and
	// timers while tasks keep the scheduler busy. Between 1 and
	// MaxInterval.
	EventInterval int `koanf:"event_interval"`
	// GlobalQueueInterval is how many ticks pass between checks of the
	// global queue ahead of the run queue. Between 1 and MaxInterval.
	GlobalQueueInterval int `koanf:"global_queue_interval"`
}

// MaxInterval bounds the intervals: a worker counts ticks in 32 bits.
const MaxInterval = module.MaxTickInterval

// DefaultConfig returns the defaults: event interval 61, global queue
// interval 31.
func DefaultConfig() Config { return Config{EventInterval: 61, GlobalQueueInterval: 31} }

// Validate reports every invalid key as a *core.ConfigError naming it
// (joined with errors.Join when there are several).
func (c *Config) Validate() error {
	var p module.Problems
	p.TickInterval("event_interval", c.EventInterval)
	p.TickInterval("global_queue_interval", c.GlobalQueueInterval)
	return p.Err()
}

func init() {
	core.RegisterScheduler("currentthread", "single-threaded scheduler: tasks run on the goroutine inside BlockOn", DefaultConfig, New,
		// The default scheduler when no multi-threaded one is linked.
		core.DefaultRank(10))
}

// Scheduler is the current-thread scheduler. Create it with New, or with
// NewWithPolicy for a run order of your own; it implements core.Scheduler
// and core.MetricsSource.
type Scheduler struct {
	cfg    Config
	p      core.SchedulerParams
	tasks  *core.TaskSet
	driver core.Driver
	time   *core.Time
	worker *worker

	// global takes the tasks scheduled from other goroutines.
	global globalq.Queue
	// policy, when set, holds the runnable tasks and picks the next one;
	// nil on the default path. spawns takes the tasks spawned from other
	// goroutines while a policy is set, so that it learns they were
	// spawned rather than woken.
	policy Policy
	spawns globalq.Queue
	// closed is set by Shutdown, after the global queue closed; the owner
	// loads it every tick.
	closed atomic.Bool

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
	rq core.TaskQueue
	// held counts the runnable tasks the policy holds.
	held     int
	deferred deferred.Wakers
	tick     uint32
	wcx      spi.WorkerContext
	cx       *core.Context
	stats    metrics.Counters
	pollTime metrics.PollTime

	pub metrics.Published
}

// worker is the core.Worker handed to tasks in their Context.
type worker struct{ s *Scheduler }

func (w *worker) Scheduler() core.Scheduler { return w.s }
func (w *worker) Defer(wk core.Waker)       { w.s.deferred.Add(wk) }
func (w *worker) Driver() core.Driver       { return w.s.driver }
func (w *worker) Time() *core.Time          { return w.s.time }

// Blocking implements core.BlockingWorker: the runtime's blocking pool.
func (w *worker) Blocking() core.BlockingSpawner { return w.s.p.Blocking }

// New builds a current-thread scheduler. It creates the runtime's driver,
// if it has one, and owns it from then on.
func New(cfg Config, p core.SchedulerParams) (*Scheduler, error) {
	return newScheduler(cfg, p, nil)
}

// NewWithPolicy builds a current-thread scheduler whose run order pol
// decides (see Policy). The scheduler owns pol from then on: it calls it
// only from the goroutine running its tasks, and closes it after Shutdown
// if pol implements io.Closer.
func NewWithPolicy(cfg Config, p core.SchedulerParams, pol Policy) (*Scheduler, error) {
	if pol == nil {
		return nil, fmt.Errorf("currentthread: NewWithPolicy needs a policy, got nil")
	}
	return newScheduler(cfg, p, pol)
}

func newScheduler(cfg Config, p core.SchedulerParams, pol Policy) (*Scheduler, error) {
	if err := module.Check("currentthread", &cfg, p); err != nil {
		return nil, err
	}
	s := &Scheduler{
		cfg:        cfg,
		p:          p,
		policy:     pol,
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
	spi.SetUnpark(s.time, s.unpark)
	s.wcx = spi.NewWorkerContext(s.worker)
	s.cx = s.wcx.Context()
	s.core <- struct{}{}
	if s.driver == nil {
		s.timer = time.NewTimer(time.Hour)
		s.timer.Stop()
	}
	return s, nil
}

// Spawn binds t and queues it.
func (s *Scheduler) Spawn(t *core.Task, from core.Worker) error {
	spi.Bind(t, s)
	if err := s.tasks.Bind(t); err != nil {
		return err
	}
	if s.policy != nil {
		s.spawnByPolicy(t, from)
		return nil
	}
	s.Schedule(t, from)
	return nil
}

// spawnByPolicy queues a new task when a policy is set: handed to the
// policy at once when called by the core holder, otherwise through the
// spawn queue (unparking the holder, as Schedule does).
func (s *Scheduler) spawnByPolicy(t *core.Task, from core.Worker) {
	if from != core.Worker(s.worker) {
		if s.spawns.PushOrShutdown(t) && s.parked.Load() {
			s.unpark()
		}
		return
	}
	if s.closedNow() {
		spi.Shutdown(t)
		return
	}
	s.stats.LocalSchedules++
	s.held++
	s.policy.Spawned(t)
}

// Schedule queues a notified task: on the run queue when called by the
// core holder, otherwise on the global queue (unparking the holder).
func (s *Scheduler) Schedule(t *core.Task, from core.Worker) {
	if from == core.Worker(s.worker) {
		if s.closedNow() {
			spi.Shutdown(t)
			return
		}
		s.stats.LocalSchedules++
		if s.policy != nil {
			s.wokenByPolicy(t)
			return
		}
		s.rq.Push(t)
		return
	}
	if !s.global.PushOrShutdown(t) {
		return
	}
	// The push stored the queue's length; see the package documentation
	// for why loading parked after it loses no wake.
	if s.parked.Load() {
		s.unpark()
	}
}

// wokenByPolicy hands a runnable task to the policy (owner only). It is a
// call of its own, kept off the default path's inlined queue push.
func (s *Scheduler) wokenByPolicy(t *core.Task) {
	s.held++
	s.policy.Woken(t)
}

func (s *Scheduler) closedNow() bool { return s.closed.Load() }

// remoteEmpty reports whether no task waits in the queues fed by other
// goroutines.
func (s *Scheduler) remoteEmpty() bool { return s.global.IsEmpty() && s.spawns.IsEmpty() }

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
			s.ownerGoroutine.Store(spi.GoroutineID())
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
	s.pollTime.Start(s.stats.Polls)
	for !s.closedNow() && !isDone(done) {
		s.tick++
		if s.tick%uint32(s.cfg.EventInterval) == 0 {
			s.maintenance()
		}
		t := s.next()
		if t == nil {
			if s.deferred.Len() > 0 {
				s.parkFor(0)
				continue
			}
			s.parkIdle(done)
			continue
		}
		s.wcx.ResetBudget()
		s.stats.Polls++
		if spi.Run(t, s.cx) {
			// Woken during its own poll (a yield or a spent budget): to
			// the back of the queue, behind the tasks already waiting.
			if s.policy != nil {
				s.wokenByPolicy(t)
			} else {
				s.rq.Push(t)
			}
		} else if s.policy != nil && t.IsComplete() {
			s.policy.Completed(t)
		}
	}
}

// next picks the next task: the global queue first every
// GlobalQueueInterval ticks, otherwise the run queue first; or the
// policy's choice when one is set.
func (s *Scheduler) next() *core.Task {
	if s.policy != nil {
		return s.nextByPolicy()
	}
	if s.tick%uint32(s.cfg.GlobalQueueInterval) == 0 {
		if t := s.takeGlobal(); t != nil {
			return t
		}
	}
	if t := s.rq.Pop(); t != nil {
		return t
	}
	return s.takeGlobal()
}

// takeGlobal moves the whole global queue to the run queue (one lock for
// the batch) and returns its first task.
func (s *Scheduler) takeGlobal() *core.Task {
	if s.global.IsEmpty() {
		return nil
	}
	var batch core.TaskQueue
	s.global.TakeAll(&batch)
	t := batch.Pop()
	if batch.Len() > 0 {
		// Tasks from the global queue go ahead of nothing: they join the
		// back of the run queue in arrival order.
		s.rq.PushAll(&batch)
	}
	return t
}

// nextByPolicy hands the policy the tasks queued by other goroutines and
// takes its choice. A policy that holds runnable tasks must return one,
// and one that holds none must return nil: anything else would lose a task
// or run one twice, so it is a bug reported at once.
func (s *Scheduler) nextByPolicy() *core.Task {
	s.handOver()
	t := s.policy.Next()
	switch {
	case t == nil && s.held > 0:
		panic(fmt.Sprintf("currentthread: policy %T returned no task while holding %d runnable", s.policy, s.held))
	case t != nil && s.held == 0:
		panic(fmt.Sprintf("currentthread: policy %T returned task %v while holding none", s.policy, t.ID()))
	case t != nil:
		s.held--
	}
	return t
}

// handOver gives the policy every task waiting in the spawn and global
// queues: the spawns first, each queue in arrival order.
func (s *Scheduler) handOver() {
	var batch core.TaskQueue
	if !s.spawns.IsEmpty() {
		s.spawns.TakeAll(&batch)
		for t := batch.Pop(); t != nil; t = batch.Pop() {
			s.held++
			s.policy.Spawned(t)
		}
	}
	if !s.global.IsEmpty() {
		s.global.TakeAll(&batch)
		for t := batch.Pop(); t != nil; t = batch.Pop() {
			s.held++
			s.policy.Woken(t)
		}
	}
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
	if spi.CanAutoAdvance(s.time) {
		// Look for I/O first; jump the virtual clock only if nothing
		// became runnable.
		s.parkFor(0)
		if s.rq.Len() == 0 && s.held == 0 && s.remoteEmpty() && s.deferred.Len() == 0 {
			spi.AutoAdvance(s.time)
		}
		return
	}
	s.p.Hooks.RunBeforePark()
	timeout := spi.Parking(s.time, -1)
	defer spi.Unparked(s.time)
	s.parked.Store(true)
	if s.remoteEmpty() && !s.closedNow() && !isDone(done) {
		s.stats.Parks++
		s.publish()
		s.parkOn(timeout)
		s.stats.Unparks++
		// Time parked is not poll time.
		s.pollTime.Start(s.stats.Polls)
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
	spi.Fire(s.time)
	s.deferred.WakeAll(s.cx)
}

// publish folds the polls since the last publish into the mean poll time
// and copies the owner's counters where Metrics can read them.
func (s *Scheduler) publish() {
	s.pollTime.End(s.stats.Polls)
	s.pollTime.Start(s.stats.Polls)
	s.stats.BudgetYields = s.cx.BudgetExhaustions()
	s.pub.Store(&s.stats, s.rq.Len()+s.held, &s.pollTime)
}

// Metrics returns the counters of the scheduler's single worker, as last
// published (at every maintenance tick, park and BlockOn exit).
// QueueDepth counts the run queue (or the tasks a policy holds) as last
// published and the global queue as it is now; RemoteSchedules are the
// global queue's pushes.
func (s *Scheduler) Metrics() []core.WorkerMetrics {
	m := s.pub.Snapshot(0)
	m.QueueDepth += s.global.Len() + s.spawns.Len()
	m.RemoteSchedules = s.global.Pushes() + s.spawns.Pushes()
	return []core.WorkerMetrics{m}
}

// Shutdown closes the scheduler, cancels every task and closes the driver.
// Called from a goroutine other than the one running tasks, it waits until
// that goroutine has left its loop. Called from inside a task, it cancels
// every other task at once and the running task when its poll returns; the
// enclosing BlockOn then returns.
func (s *Scheduler) Shutdown() {
	s.shutdown.Do(func() {
		s.global.Close()
		s.spawns.Close()
		s.closed.Store(true)
		close(s.shutdownCh)
		if owner := s.ownerGoroutine.Load(); owner != 0 && owner == spi.GoroutineID() {
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

// closeDriver closes the driver and the policy, once, after the loop has
// ended for good.
func (s *Scheduler) closeDriver() {
	s.closeDrv.Do(func() {
		if c, ok := s.policy.(io.Closer); ok {
			if err := c.Close(); err != nil && s.p.Log != nil {
				s.p.Log.Error("currentthread: closing the policy", "err", err)
			}
		}
		if s.driver == nil {
			return
		}
		if err := s.driver.Close(); err != nil && s.p.Log != nil {
			s.p.Log.Error("currentthread: closing driver", "err", err)
		}
	})
}

// cancelAll cancels every task and empties the queues. The caller holds
// the core. The tasks a policy holds are cancelled with the task set; the
// policy is not asked for them (it may answer slowly) and drops them when
// it is closed, or with itself.
func (s *Scheduler) cancelAll() {
	s.tasks.ShutdownAll(0)
	globalq.ShutdownAll(&s.rq)
	var rest core.TaskQueue
	s.global.TakeAll(&rest)
	s.spawns.TakeAll(&rest)
	globalq.ShutdownAll(&rest)
	s.deferred.Drop()
}
