package percore

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/globalq"
	"github.com/weftrt/weft/schedulers/internal/module"
	"github.com/weftrt/weft/schedulers/internal/park"
)

// Scheduler is the thread-per-core scheduler. Create it with New; it
// implements core.Scheduler and core.MetricsSource. Its methods are safe for
// concurrent use.
type Scheduler struct {
	cfg   Config
	p     core.SchedulerParams
	tasks *core.TaskSet
	// timers: the runtime has a timer (p.Time and p.Time.Timer not nil).
	timers bool

	workers []*worker
	idle    *idle
	// rr spreads the idle worker a notifier wakes.
	rr atomic.Uint32

	// global is the pool-wide queue: remote spawns, spawns that leave a
	// busy worker, wakes whose owner can no longer take them, and the
	// newest half of full run queues.
	global globalq.Queue

	// closed is set by close, after the task set and the global queue
	// closed; workers load it every tick and after every park.
	closed     atomic.Bool
	shutdownCh chan struct{}
	closeOnce  sync.Once
	barrier    barrier

	// timerHolder is the index of the worker parked with the timers'
	// next deadline as its timeout, -1 if none. core.Time's unpark
	// function wakes it when an earlier deadline is armed.
	timerHolder atomic.Int32
	// advance moves an auto-advancing virtual clock once the pool is
	// idle; idle workers fire timers through it (park.Advancer).
	advance park.Advancer

	// failure is the first worker failure; deliver is set until worker
	// zero has handed it to the roots.
	failure atomic.Pointer[WorkerError]
	deliver atomic.Bool
	rootsMu sync.Mutex
	roots   map[*core.Task]struct{}

	// wg counts the worker goroutines; Shutdown and a failed New wait on it.
	wg sync.WaitGroup
}

// WorkerError is a worker failure: its driver's Park failed, or its loop
// panicked outside any task. The first one is delivered to the roots the
// pool is running (see BlockOn), whose JoinError wraps it.
type WorkerError struct {
	// Worker is the index of the worker that failed.
	Worker int
	// Err is what failed.
	Err error
}

// Error describes the failure.
func (e *WorkerError) Error() string {
	return fmt.Sprintf("percore: worker %d failed: %v", e.Worker, e.Err)
}

// Unwrap returns the cause.
func (e *WorkerError) Unwrap() error { return e.Err }

// New builds a per-core scheduler with cfg.Workers workers and starts them,
// one at a time: each locks its goroutine to an OS thread, pins it when
// configured, creates its own driver through p.NewDriver (if the runtime
// has one) and reports ready before the next starts. New returns once every
// worker runs, or with the first startup error once the workers already
// started have stopped and their drivers are closed.
func New(cfg Config, p core.SchedulerParams) (*Scheduler, error) {
	if err := module.Check("percore", &cfg, p); err != nil {
		return nil, err
	}
	s := build(cfg, p)
	if cfg.Pin {
		cpus := cfg.CPUs
		if len(cpus) == 0 {
			var err error
			if cpus, err = allowedCPUs(); err != nil {
				return nil, err
			}
		}
		for i, w := range s.workers {
			w.cpu = cpus[i%len(cpus)]
		}
	}
	ready := make(chan error, 1)
	s.wg.Add(1)
	go s.workers[0].main(ready)
	if err := <-ready; err != nil {
		s.wg.Wait()
		return nil, err
	}
	return s, nil
}

// build makes the scheduler's state without starting a goroutine.
func build(cfg Config, p core.SchedulerParams) *Scheduler {
	n := cfg.Workers
	s := &Scheduler{
		cfg:        cfg,
		p:          p,
		tasks:      p.Tasks,
		timers:     p.Time != nil && p.Time.Timer != nil,
		idle:       newIdle(n),
		shutdownCh: make(chan struct{}),
		roots:      map[*core.Task]struct{}{},
	}
	s.barrier.cond.L = &s.barrier.mu
	s.timerHolder.Store(-1)
	if s.timers {
		spi.SetUnpark(p.Time, s.unparkTimerHolder)
	}
	s.workers = make([]*worker, n)
	for i := range s.workers {
		s.workers[i] = newWorker(s, i)
	}
	return s
}

// startOthers starts workers 1 to n-1 from worker zero, each after the
// previous one reported ready, and returns the first startup error.
func (s *Scheduler) startOthers() error {
	for _, w := range s.workers[1:] {
		ready := make(chan error, 1)
		s.wg.Add(1)
		go w.main(ready)
		if err := <-ready; err != nil {
			return err
		}
	}
	return nil
}

// local returns from as one of this scheduler's workers, or nil when the
// caller is not a worker of this pool (a foreign goroutine, a driver, a
// timer, another runtime). A Worker only travels in the Context of a poll
// on its own goroutine, so a non-nil result is the calling goroutine's.
func (s *Scheduler) local(from core.Worker) *worker {
	if w, ok := from.(*worker); ok && w.s == s {
		return w
	}
	return nil
}

// Spawn binds t and queues it. From one of this pool's workers, the new
// task is owned by that worker and stays in its run queue when the run
// queue is empty or the pool has one worker; otherwise it goes to the
// global queue so an idle worker takes it. From anywhere else it goes to
// the global queue. It returns an error wrapping core.ErrShutdown once the
// scheduler is shut down; t is then untouched.
func (s *Scheduler) Spawn(t *core.Task, from core.Worker) error {
	w := s.local(from)
	if w != nil {
		spi.Bind(t, w.home)
	} else {
		// Provisional: whichever worker first polls the task owns it.
		// Until then the task is NOTIFIED, so no wake reads the binding.
		spi.Bind(t, s.workers[0].home)
	}
	if err := s.tasks.Bind(t); err != nil {
		return err
	}
	if w != nil && (len(s.workers) == 1 || w.rq.Len() == 0) {
		w.pushLocal(t)
		return nil
	}
	s.pushGlobal(t)
	return nil
}

// Schedule queues a task whose wake won the NOTIFIED transition; see
// schedule. Tasks reach it through their owner's home, which passes the
// owner along.
func (s *Scheduler) Schedule(t *core.Task, from core.Worker) {
	owner, ok := t.Scheduler().(*home)
	if !ok || owner.w.s != s {
		owner = s.workers[0].home
	}
	s.schedule(t, owner.w, from)
}

// schedule is the wake routing rule:
//
//  1. A wake from inside a poll on one of this pool's workers (from is
//     that worker) queues the task in that worker's run queue, which then
//     owns it: the task runs where the data its waker produced is cached.
//     A task woken during its own poll is the same case, handled by the
//     worker when the poll returns: back of the same run queue.
//  2. Any other wake (a driver, a timer, another goroutine) goes to the
//     mailbox of the task's owner, the worker that last polled it, and
//     unparks that worker: a task keeps running on its core.
//  3. If the owner's mailbox is closed (the owner failed or is shutting
//     down), the task goes to the global queue; once that is closed too,
//     the task is shut down instead.
func (s *Scheduler) schedule(t *core.Task, owner *worker, from core.Worker) {
	if s.closed.Load() {
		spi.Shutdown(t)
		return
	}
	if w := s.local(from); w != nil {
		w.pushLocal(t)
		return
	}
	if owner.mb.Push(t) {
		owner.parker.Unpark()
		return
	}
	s.pushGlobal(t)
}

// pushGlobal queues t on the global queue and wakes an idle worker, or shuts
// t down once the queue is closed.
func (s *Scheduler) pushGlobal(t *core.Task) {
	if s.global.PushOrShutdown(t) {
		s.notify()
	}
}

// globalOverflow is the scheduler seen as the runq.Overflow of its
// workers' run queues: what a full run queue moves out goes to the global
// queue, and an idle worker is woken for it.
type globalOverflow Scheduler

// overflow returns s as the overflow of its run queues.
func (s *Scheduler) overflow() *globalOverflow { return (*globalOverflow)(s) }

// OverflowOne implements runq.Overflow: t goes to the global queue, or is
// shut down once that is closed.
func (o *globalOverflow) OverflowOne(t *core.Task) { (*Scheduler)(o).pushGlobal(t) }

// OverflowBatch implements runq.Overflow: one lock for the batch, one
// notification, or every task shut down once the global queue is closed.
func (o *globalOverflow) OverflowBatch(b *core.TaskQueue) {
	s := (*Scheduler)(o)
	if !s.global.PushBatch(b) {
		globalq.ShutdownAll(b)
		return
	}
	s.notify()
}

// notify wakes one idle worker for work any worker may run, unless a
// worker is searching (it will find the work) or none is idle. The caller
// has published the work first; see idle for why that order is enough.
func (s *Scheduler) notify() {
	d := s.idle
	// The fast path of every push: two loads, no write.
	if d.searching.Load() > 0 || d.parked.Load()&^d.failed.Load() == 0 {
		return
	}
	if i := d.pick(int(s.rr.Add(1)) % len(s.workers)); i >= 0 {
		s.workers[i].parker.Unpark()
	}
}

// unparkTimerHolder wakes the worker parked until the timers' next
// deadline. core.Time calls it when an earlier deadline is armed.
func (s *Scheduler) unparkTimerHolder() {
	if h := s.timerHolder.Load(); h >= 0 {
		s.workers[h].parker.Unpark()
	}
}

// tryAutoAdvance moves an auto-advancing virtual clock to the next timer
// deadline and fires what is due, if the whole pool is idle: every worker
// has published itself idle (or failed) and every queue and mailbox is
// empty. It reports whether it moved the clock. The last worker to go idle
// always makes this check, so an idle pool with armed timers never parks
// on virtual time.
func (s *Scheduler) tryAutoAdvance() bool {
	if !s.timers {
		return false
	}
	return s.advance.TryAdvance(s.p.Time, s.quiescent)
}

// quiescent reports whether nothing can run without an outside event. The
// idle set is read before the queues: a worker empties its queues before
// it publishes its bit.
func (s *Scheduler) quiescent() bool {
	if s.closed.Load() || !s.idle.allIdle() || !s.global.IsEmpty() {
		return false
	}
	for _, w := range s.workers {
		if w.rq.Len() != 0 || !w.mb.IsEmpty() {
			return false
		}
	}
	return true
}

// BlockOn waits until done is closed (the runtime closes it when root, a
// task the workers run, completes), or the scheduler shuts down. Any
// number of goroutines may wait at once; none of them runs tasks.
//
// While it waits, root is one of the pool's roots. The first worker
// failure is delivered to the roots as commonware delivers it to worker
// zero's root: worker zero wakes each root, and the worker that next takes
// a root from a queue cancels it instead of polling it, with the failure
// as the cause. So rt.BlockOn returns a cancelled core.JoinError wrapping
// the *WorkerError (errors.As finds it), unless the root completed first.
// A root that is being polled when the failure arrives takes it before
// its next poll, never during one.
func (s *Scheduler) BlockOn(root *core.Task, done <-chan struct{}) {
	if root != nil {
		s.rootsMu.Lock()
		s.roots[root] = struct{}{}
		failed := s.failure.Load() != nil
		dead := s.idle.allFailed()
		s.rootsMu.Unlock()
		defer func() {
			s.rootsMu.Lock()
			delete(s.roots, root)
			s.rootsMu.Unlock()
		}()
		if dead {
			// No worker polls any more, so the root is not running:
			// cancel it here.
			spi.Reject(root, s.failure.Load())
		} else if failed {
			// Queued already (it was just spawned), or idle after a poll
			// that raced with the registration: either way the next
			// worker to take it cancels it.
			root.Wake()
		}
	}
	select {
	case <-done:
	case <-s.shutdownCh:
	}
}

// isRoot reports whether t is the root of a running BlockOn.
func (s *Scheduler) isRoot(t *core.Task) bool {
	s.rootsMu.Lock()
	_, ok := s.roots[t]
	s.rootsMu.Unlock()
	return ok
}

// rejectRoots cancels every root with the first failure. The last worker
// to fail calls it: no worker polls any more, so no root is running.
func (s *Scheduler) rejectRoots() {
	f := s.failure.Load()
	for _, r := range s.rootList() {
		spi.Reject(r, f)
	}
}

// rootList returns the roots of the running BlockOn calls (a snapshot).
func (s *Scheduler) rootList() []*core.Task {
	s.rootsMu.Lock()
	defer s.rootsMu.Unlock()
	roots := make([]*core.Task, 0, len(s.roots))
	for r := range s.roots {
		roots = append(roots, r)
	}
	return roots
}

// Failure returns the first worker failure, or nil.
func (s *Scheduler) Failure() error {
	if f := s.failure.Load(); f != nil {
		return f
	}
	return nil
}

// fail records a worker failure. The first one is handed to worker zero,
// which delivers it to the roots (deliverFailure); later ones are logged.
func (s *Scheduler) fail(w *worker, err error) {
	f := &WorkerError{Worker: w.index, Err: err}
	s.logErr("percore: worker failed", f)
	// The roots lock orders the record with BlockOn's registration: a
	// root registered after it sees the failure, one registered before is
	// found by the delivery.
	s.rootsMu.Lock()
	first := s.failure.CompareAndSwap(nil, f)
	s.rootsMu.Unlock()
	if first {
		s.deliver.Store(true)
		s.workers[0].parker.Unpark()
	}
}

// deliverFailure, run by worker zero between polls (or by a failed worker
// zero), wakes every root so the worker that next takes it from a queue
// cancels it with the failure (see worker.runTask). A root never receives
// the failure in the middle of a poll: cancelling a running task would
// finish it with core.ErrAborted instead.
func (s *Scheduler) deliverFailure() {
	if !s.deliver.CompareAndSwap(true, false) {
		return
	}
	for _, r := range s.rootList() {
		r.Wake()
	}
}

// Shutdown closes the task set, the global queue and the pool, cancels
// every task (each future's Drop runs), and waits until every worker has
// stopped: each drains its queues and the task set, waits at the shutdown
// barrier for every other worker to do the same, and only then closes its
// mailbox and its driver, since a task polled on one worker may hold
// handles of another worker's driver. No task is polled after Shutdown
// returns; BlockOn callers return once every task not being polled at that
// moment is cancelled.
//
// Called from inside a task (on a worker's goroutine), Shutdown does not
// wait: the workers stop once that task's poll returns, and a later
// Shutdown from outside waits for them. It is idempotent.
func (s *Scheduler) Shutdown() {
	s.closeOnce.Do(func() {
		// The caller's drain counts at the barrier, so no driver closes
		// while it drops a future that uses one.
		s.barrier.enter()
		s.close()
		s.tasks.ShutdownAll(0)
		s.barrier.leave()
		close(s.shutdownCh)
	})
	if s.onWorkerGoroutine() {
		return
	}
	s.wg.Wait()
}

// close closes the task set, then the global queue (so a task the closed
// queue refuses belongs to the closed set, which shutdown clears), marks
// the pool closed, releases the workers waiting for the close and unparks
// every worker.
func (s *Scheduler) close() {
	s.tasks.Close()
	s.global.Close()
	var rest core.TaskQueue
	s.global.TakeAll(&rest)
	s.closed.Store(true)
	s.barrier.markClosed()
	for _, w := range s.workers {
		w.parker.Unpark()
	}
	globalq.ShutdownAll(&rest)
}

// onWorkerGoroutine reports whether the caller is one of the workers.
func (s *Scheduler) onWorkerGoroutine() bool {
	self := spi.GoroutineID()
	for _, w := range s.workers {
		// Pairs with the store at the start of worker.main.
		if w.goid.Load() == self {
			return true
		}
	}
	return false
}

// logErr reports an error, when the runtime gave a logger.
func (s *Scheduler) logErr(msg string, err error) {
	if s.p.Log != nil {
		s.p.Log.Error(msg, "err", err)
	}
}

// Config returns the configuration the scheduler was built with.
func (s *Scheduler) Config() Config { return s.cfg }

// Workers returns the number of workers.
func (s *Scheduler) Workers() int { return len(s.workers) }

// barrier is the shutdown barrier. closed releases the workers that wait
// for the pool to close (a failed worker drains only a closed set); active
// counts the workers that have started and the Shutdown caller while it
// drains, none of which may still be polling or dropping a task when a
// driver closes. One condition variable signals both.
type barrier struct {
	mu     sync.Mutex
	cond   sync.Cond
	closed bool
	active int
}

// enter counts one more participant. Workers enter before they report
// ready, so finish waits for every worker that started.
func (b *barrier) enter() {
	b.mu.Lock()
	b.active++
	b.mu.Unlock()
}

// markClosed releases waitClosed.
func (b *barrier) markClosed() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.cond.Broadcast()
}

// waitClosed blocks until the pool has closed.
func (b *barrier) waitClosed() {
	b.mu.Lock()
	for !b.closed {
		b.cond.Wait()
	}
	b.mu.Unlock()
}

// leave counts one participant less without waiting for the others.
func (b *barrier) leave() {
	b.mu.Lock()
	b.active--
	last := b.active == 0
	b.mu.Unlock()
	if last {
		b.cond.Broadcast()
	}
}

// finish counts the caller out, then blocks until every other participant
// has done the same. Each worker calls it once, after it has drained.
func (b *barrier) finish() {
	b.mu.Lock()
	b.active--
	if b.active == 0 {
		b.mu.Unlock()
		b.cond.Broadcast()
		return
	}
	for b.active != 0 {
		b.cond.Wait()
	}
	b.mu.Unlock()
}
