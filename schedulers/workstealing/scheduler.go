package workstealing

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/globalq"
	"github.com/weftrt/weft/schedulers/internal/module"
	"github.com/weftrt/weft/schedulers/internal/park"
)

// Scheduler is the work-stealing scheduler. Create it with New; it
// implements core.Scheduler and core.MetricsSource. Its methods are safe
// for concurrent use.
type Scheduler struct {
	cfg           Config
	p             core.SchedulerParams
	tasks         *core.TaskSet
	eventInterval uint32

	workers []*worker
	idle    *idle
	drv     driverSlot

	// global takes what the workers cannot keep to themselves (see the
	// package documentation).
	global globalq.Queue

	// closed is set once Shutdown starts (after the queues closed); the
	// workers' loads every tick and in the park loop pair with that
	// store, and the unparks that follow it end any park.
	closed atomic.Bool
	// shutdownCh is closed, releasing BlockOn callers, once the tasks
	// have been cancelled.
	shutdownCh  chan struct{}
	closeOnce   sync.Once
	releaseOnce sync.Once

	// advance moves an auto-advancing virtual clock once every worker is
	// idle; parked workers fire timers through it (park.Advancer).
	advance park.Advancer
	// inPlace counts goroutines that handed their core away in
	// BlockInPlace and are still running their task.
	inPlace atomic.Int32

	// runners are the goroutines running (or about to run, or finishing
	// without) a worker; Shutdown waits for all but its caller.
	runnersMu sync.Mutex
	runners   map[*runner]struct{}

	// finalCores collects the cores of workers that finished shutting
	// down; the last one to arrive runs the single-threaded phase.
	finalMu    sync.Mutex
	finalCores []*workerCore
}

// New builds a work-stealing scheduler with cfg.Workers workers and starts
// their goroutines. It creates the runtime's driver through p.NewDriver,
// if the runtime has one, and owns it from then on (Shutdown closes it).
func New(cfg Config, p core.SchedulerParams) (*Scheduler, error) {
	s, err := build(cfg, p)
	if err != nil {
		return nil, err
	}
	for _, w := range s.workers {
		s.startRunner(w)
	}
	return s, nil
}

// build makes the scheduler without starting a goroutine; New starts them.
// Tests build one to drive its parts by hand.
func build(cfg Config, p core.SchedulerParams) (*Scheduler, error) {
	if err := module.Check("workstealing", &cfg, p); err != nil {
		return nil, err
	}
	s := &Scheduler{
		cfg:           cfg,
		p:             p,
		tasks:         p.Tasks,
		eventInterval: uint32(cfg.EventInterval),
		idle:          newIdle(cfg.Workers),
		shutdownCh:    make(chan struct{}),
		runners:       map[*runner]struct{}{},
	}
	var d core.Driver
	if p.NewDriver != nil {
		var err error
		if d, err = p.NewDriver(); err != nil {
			return nil, fmt.Errorf("workstealing: creating driver: %w", err)
		}
	}
	s.drv.driver = d
	if q, ok := d.(core.QuiescentDriver); ok {
		q.OnActive(s.driverActive)
	}
	s.drv.time = p.Time
	s.drv.enabled = d != nil || s.drv.hasTimers()
	s.drv.holder.Store(-1)
	if s.drv.hasTimers() {
		spi.SetUnpark(p.Time, s.unparkHolder)
	}

	seed := uint64(time.Now().UnixNano())
	s.workers = make([]*worker, cfg.Workers)
	for i := range s.workers {
		w := &worker{index: i, parker: park.New()}
		// Every parker may be the driver slot's holder.
		w.parker.SetDriver(d)
		c := &workerCore{w: w, lifoEnabled: cfg.LIFOSlot}
		c.pollTime.Seed(initialMeanPoll)
		c.rng.Seed(seed, i)
		c.gqi = tunedGlobalQueueInterval(cfg.GlobalQueueInterval, &c.pollTime)
		c.untilGlobal = c.gqi
		c.untilEvent = uint32(cfg.EventInterval)
		w.handoff.Store(c)
		s.workers[i] = w
	}
	return s, nil
}

// startRunner starts a goroutine that takes w's core from its handoff
// cell and runs the worker.
func (s *Scheduler) startRunner(w *worker) {
	r := &runner{s: s, done: make(chan struct{})}
	r.wcx = spi.NewWorkerContext(r)
	r.cx = r.wcx.Context()
	s.runnersMu.Lock()
	s.runners[r] = struct{}{}
	s.runnersMu.Unlock()
	go r.main(w)
}

// forget removes a finished runner.
func (s *Scheduler) forget(r *runner) {
	s.runnersMu.Lock()
	delete(s.runners, r)
	s.runnersMu.Unlock()
}

// Spawn binds t to the scheduler and queues it: in the calling worker's
// LIFO slot when from is one of this scheduler's workers (the task runs as
// soon as the spawning task's poll returns), otherwise in the global
// queue, waking a parked worker. It returns an error wrapping
// core.ErrShutdown once the scheduler is shut down; t is then untouched.
func (s *Scheduler) Spawn(t *core.Task, from core.Worker) error {
	spi.Bind(t, s)
	if err := s.tasks.Bind(t); err != nil {
		return err
	}
	s.schedule(t, from)
	return nil
}

// Schedule queues a task whose wake won the NOTIFIED transition. From one
// of this scheduler's workers (a wake inside a poll, through
// core.Context.Wake) it goes to that worker's LIFO slot; from anywhere
// else to the global queue, waking a parked worker. After Shutdown the
// task is shut down instead.
func (s *Scheduler) Schedule(t *core.Task, from core.Worker) { s.schedule(t, from) }

func (s *Scheduler) schedule(t *core.Task, from core.Worker) {
	if r, ok := from.(*runner); ok && r.s == s && r.core != nil {
		r.scheduleLocal(t, false)
		return
	}
	s.scheduleRemote(t)
}

// scheduleRemote queues t on the global queue and wakes a worker if none
// is searching.
func (s *Scheduler) scheduleRemote(t *core.Task) {
	if s.global.PushOrShutdown(t) {
		s.notify()
	}
}

// notify wakes one parked worker if no worker is searching. The caller
// has published new work first (a queue push); see idle for why that
// order makes the check safe.
func (s *Scheduler) notify() {
	if i := s.idle.pick(); i >= 0 {
		s.workers[i].parker.Unpark()
	}
}

// notifyIfWorkPending is the last searcher's re-check: work that appeared
// after its final scan must not wait for the next push.
func (s *Scheduler) notifyIfWorkPending() {
	for _, w := range s.workers {
		if !w.rq.IsEmpty() {
			s.notify()
			return
		}
	}
	if !s.global.IsEmpty() {
		s.notify()
	}
}

// stopSearch is called by a searcher that found work. If it was the last
// searcher, it wakes another worker to keep searching: where there was
// work there may be more.
func (s *Scheduler) stopSearch() {
	if s.idle.stopSearch() {
		s.notify()
	}
}

// tryAutoAdvance moves an auto-advancing virtual clock to the next timer
// deadline and fires the due timers, if every worker is idle. It reports
// whether it did. See the package documentation for why "every worker is
// idle" is decided as it is.
func (s *Scheduler) tryAutoAdvance() bool {
	return s.advance.TryAdvance(s.p.Time, func() bool {
		if !s.allIdle() {
			return false
		}
		if d := s.drv.driver; d != nil && s.drv.tryLock() {
			// I/O first: a completion that is already in may make a
			// task runnable at the current instant.
			err := d.Park(0)
			s.drv.unlock()
			if err != nil {
				s.logErr(err)
			}
			return s.allIdle()
		}
		return true
	})
}

// allIdle reports whether nothing can run without an outside event: every
// worker is in the parked list, no goroutine is inside BlockInPlace, and
// every queue is empty. The parked count is read before the queues; a
// worker pushes before it parks, so a push it made is seen.
func (s *Scheduler) allIdle() bool {
	if s.closed.Load() || s.inPlace.Load() != 0 {
		return false
	}
	if unparked, _ := s.idle.counts(); unparked != 0 {
		return false
	}
	if !s.global.IsEmpty() {
		return false
	}
	for _, w := range s.workers {
		if !w.rq.IsEmpty() {
			return false
		}
	}
	return true
}

// BlockOn waits until done is closed (the runtime closes it when the root
// task, already spawned and run by the workers, completes) or the
// scheduler shuts down. Any number of goroutines may wait at once; none of
// them runs tasks.
func (s *Scheduler) BlockOn(_ *core.Task, done <-chan struct{}) {
	select {
	case <-done:
	case <-s.shutdownCh:
	}
}

// Shutdown closes the global queue and the task set, wakes every worker,
// cancels every task, and waits until every worker goroutine has stopped;
// the last one drains the queues and closes the driver. No task is polled
// after Shutdown returns, and BlockOn callers return once every task that
// is not being polled at that moment has been cancelled.
//
// Called from inside a task (on a worker goroutine), Shutdown does not
// wait for its own goroutine, which stops when the task's poll returns:
// the calling task is cancelled then. It is idempotent; a second call
// waits like the first.
func (s *Scheduler) Shutdown() {
	s.closeOnce.Do(s.close)
	// Step 3 on the calling goroutine as well as on the workers (it is
	// idempotent): the caller may be a task, whose own worker cannot do
	// it before that task's poll returns.
	s.tasks.ShutdownAll(0)
	s.releaseOnce.Do(func() { close(s.shutdownCh) })
	s.waitRunners()
}

// close is step 1 of the shutdown.
func (s *Scheduler) close() {
	s.global.Close()
	s.tasks.Close()
	s.closed.Store(true)
	for _, w := range s.workers {
		w.parker.Unpark()
	}
}

// waitRunners waits for every runner goroutine except the caller's.
func (s *Scheduler) waitRunners() {
	self := spi.GoroutineID()
	for {
		var wait chan struct{}
		s.runnersMu.Lock()
		for r := range s.runners {
			// Pairs with the store at the start of runner.main; a runner
			// that has not stored yet is not us.
			if r.goid.Load() != self {
				wait = r.done
				break
			}
		}
		s.runnersMu.Unlock()
		if wait == nil {
			return
		}
		<-wait
	}
}

// finish is step 6, run by the last worker to shut down: every queue is
// emptied (its tasks were cancelled in step 3, so this only lets go of
// them) and the driver is closed.
func (s *Scheduler) finish() {
	for _, c := range s.finalCores {
		if t := c.lifo; t != nil {
			c.lifo = nil
			spi.Shutdown(t)
		}
		for t := c.w.rq.Pop(); t != nil; t = c.w.rq.Pop() {
			spi.Shutdown(t)
		}
	}
	var rest core.TaskQueue
	s.global.TakeAll(&rest)
	globalq.ShutdownAll(&rest)
	if d := s.drv.driver; d != nil {
		if err := d.Close(); err != nil {
			s.logErr(fmt.Errorf("closing driver: %w", err))
		}
	}
}

// logErr reports a driver error.
func (s *Scheduler) logErr(err error) {
	if s.p.Log != nil {
		s.p.Log.Error("workstealing: driver error", "err", err)
	}
}

// Config returns the configuration the scheduler was built with.
func (s *Scheduler) Config() Config { return s.cfg }
