package percore

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/deferred"
	"github.com/weftrt/weft/schedulers/internal/globalq"
	"github.com/weftrt/weft/schedulers/internal/metrics"
	"github.com/weftrt/weft/schedulers/internal/park"
	"github.com/weftrt/weft/schedulers/internal/runq"
)

// split is how a percore thief divides a backlog: half, rounded down, so
// a lone task stays with its worker.
const split = runq.HalfDown

// worker is one worker of the pool: what other goroutines reach (its run
// queue's shared end, its mailbox, its parker, its published counters) and
// what only its own goroutine touches (the rest). *worker implements
// core.Worker, so tasks polled on it see it in their Context.
type worker struct {
	s     *Scheduler
	index int
	// cpu is the CPU the worker's thread is pinned to, when pinning.
	cpu int
	// home is the worker seen as a core.Scheduler: tasks the worker owns
	// are bound to it, so a wake finds the owner without a lookup.
	home   *home
	parker *park.Parker
	driver core.Driver
	goid   atomic.Uint64
	done   chan struct{}
	pub    metrics.Published
	// mb is the worker's mailbox: how the rest of the world hands the
	// worker the tasks it owns, a wake from outside the pool (a driver, a
	// timer, another goroutine) of a task the worker last polled. A
	// globalq.Queue, so the worker's per-tick "anything for me?" costs one
	// load of its length mirror. After pushing, the sender unparks the
	// worker (park.Parker.Unpark), whose state machine makes the wake
	// impossible to lose whether the worker is running, deciding to park,
	// or parked in its driver. The mailbox closes when its worker fails or
	// reaches the end of its shutdown; a closed mailbox refuses tasks, and
	// the sender routes them to the global queue instead (or shuts them
	// down once that is closed too). Its Pushes are the worker's remote
	// schedules.
	mb globalq.Queue
	rq runq.Queue

	// Owned by the worker's goroutine.
	wcx                     spi.WorkerContext
	cx                      *core.Context
	untilGlobal, untilEvent uint32
	// searching: counted in the idle set's searching count.
	searching bool
	rng       runq.Rand
	// deferred holds the wakers of yields, woken after the next driver and
	// timer poll; the tasks they wake are collected and queued after the
	// whole batch.
	deferred deferred.Wakers
	stats    metrics.Counters
}

// home is a worker seen as the core.Scheduler its tasks are bound to (see
// the package documentation, "Ownership").
type home struct{ w *worker }

// Spawn implements core.Scheduler through the worker's scheduler.
func (h *home) Spawn(t *core.Task, from core.Worker) error { return h.w.s.Spawn(t, from) }

// Schedule implements core.Scheduler: the task's owner is h's worker.
func (h *home) Schedule(t *core.Task, from core.Worker) { h.w.s.schedule(t, h.w, from) }

// BlockOn implements core.Scheduler through the worker's scheduler.
func (h *home) BlockOn(root *core.Task, done <-chan struct{}) { h.w.s.BlockOn(root, done) }

// Shutdown implements core.Scheduler through the worker's scheduler.
func (h *home) Shutdown() { h.w.s.Shutdown() }

func newWorker(s *Scheduler, i int) *worker {
	w := &worker{s: s, index: i, parker: park.New(), done: make(chan struct{})}
	w.home = &home{w: w}
	if len(s.workers) == 1 {
		w.rq.SetExclusive()
	}
	w.wcx = spi.NewWorkerContext(w)
	w.cx = w.wcx.Context()
	w.untilGlobal = uint32(s.cfg.GlobalQueueInterval)
	w.untilEvent = uint32(s.cfg.EventInterval)
	w.rng.Seed(uint64(time.Now().UnixNano()), i)
	return w
}

// Scheduler implements core.Worker.
func (w *worker) Scheduler() core.Scheduler { return w.s }

// Defer implements core.Worker: wk is woken after the worker next polls its
// driver and the timers.
func (w *worker) Defer(wk core.Waker) { w.deferred.Add(wk) }

// Driver implements core.Worker: the worker's own driver.
func (w *worker) Driver() core.Driver { return w.driver }

// Time implements core.Worker.
func (w *worker) Time() *core.Time { return w.s.p.Time }

// Blocking implements core.BlockingWorker: the runtime's blocking pool.
func (w *worker) Blocking() core.BlockingSpawner { return w.s.p.Blocking }

// main is the worker goroutine's body. It reports its startup on ready:
// nil once its thread, pinning and driver are set and (for worker zero)
// every other worker has started, or the startup error.
func (w *worker) main(ready chan<- error) {
	s := w.s
	defer s.wg.Done()
	defer close(w.done)
	if s.cfg.locked() {
		runtime.LockOSThread()
		if !s.cfg.Pin {
			// A pinned thread is never unlocked: when this goroutine
			// exits, Go ends the thread instead of reusing it with our
			// affinity.
			defer runtime.UnlockOSThread()
		}
	}
	w.goid.Store(spi.GoroutineID())
	if err := w.start(); err != nil {
		ready <- err
		return
	}
	s.barrier.enter()
	if w.index == 0 {
		if err := s.startOthers(); err != nil {
			// Stop the workers already started; each drains and passes
			// the barrier with us. New returns the error once all
			// goroutines are gone.
			s.close()
			w.cleanup()
			ready <- err
			return
		}
	}
	ready <- nil
	s.p.Hooks.RunAfterStart()
	if err := w.runSafe(); err != nil {
		s.fail(w, err)
		w.degrade()
	}
	w.cleanup()
	s.p.Hooks.RunBeforeStop()
}

// start pins the worker's thread and creates its driver.
func (w *worker) start() error {
	s := w.s
	if s.cfg.Pin {
		if err := pinThread(w.cpu); err != nil {
			return err
		}
	}
	if s.p.NewDriver != nil {
		d, err := s.p.NewDriver()
		if err != nil {
			return fmt.Errorf("percore: creating the driver of worker %d: %w", w.index, err)
		}
		w.driver = d
		w.parker.SetDriver(d)
		if q, ok := d.(core.QuiescentDriver); ok {
			// Moves the worker into its driver when I/O is registered
			// while it is parked off it (see park.Parker.Park).
			q.OnActive(w.parker.Activate)
		}
	}
	return nil
}

// runSafe runs the worker loop, turning a panic outside any task (tasks
// recover their own) into the worker's failure.
func (w *worker) runSafe() (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
		}
	}()
	return w.run()
}

// run is the worker loop. It returns nil when the pool closes, or the
// error that ends the worker (a driver Park error).
func (w *worker) run() error {
	s := w.s
	for {
		if s.closed.Load() {
			return nil
		}
		if w.index == 0 && s.deliver.Load() {
			s.deliverFailure()
		}
		if w.untilEvent--; w.untilEvent == 0 {
			w.untilEvent = uint32(s.cfg.EventInterval)
			// I/O, timers and yielded tasks get a turn however busy the
			// worker is.
			if err := w.maintenance(); err != nil {
				return err
			}
		}
		t := w.next()
		if t == nil {
			var err error
			if t, err = w.idle(); err != nil {
				return err
			}
			if t == nil {
				continue
			}
		}
		w.runTask(t)
	}
}

// next returns the next task from the mailbox, the run queue or the global
// queue (ahead of the run queue every global_queue_interval ticks), or nil.
func (w *worker) next() *core.Task {
	s := w.s
	if !w.mb.IsEmpty() {
		w.drainMailbox()
	}
	if w.untilGlobal--; w.untilGlobal == 0 {
		w.untilGlobal = uint32(s.cfg.GlobalQueueInterval)
		if t := s.global.Take(&w.rq, len(s.workers)); t != nil {
			return t
		}
	}
	if t := w.rq.Pop(); t != nil {
		return t
	}
	return s.global.Take(&w.rq, len(s.workers))
}

// idle is called with nothing to run: it runs the tasks that yielded
// (after a driver poll), steals, or parks. It returns a task to run, or nil
// to go round the loop again.
func (w *worker) idle() (*core.Task, error) {
	if w.deferred.Len() > 0 {
		return nil, w.maintenance()
	}
	if len(w.s.workers) > 1 {
		if t := w.search(); t != nil {
			return t, nil
		}
	}
	return nil, w.park()
}

// search steals half of the first stealable backlog of another worker,
// scanning each once from a random one, unless half the pool searches
// already.
func (w *worker) search() *core.Task {
	s := w.s
	if !w.searching {
		if !s.idle.tryStartSearch() {
			return nil
		}
		w.searching = true
	}
	n := len(s.workers)
	start := w.rng.N(n)
	for k := 0; k < n; k++ {
		v := s.workers[(start+k)%n]
		if v == w {
			continue
		}
		// The oldest task taken runs now, the others wait in our run
		// queue.
		if t, got := v.rq.StealInto(&w.rq, split); t != nil {
			w.stats.Steals++
			w.stats.StolenTasks += uint64(got)
			return t
		}
	}
	return nil
}

// runTask polls t once on this worker, which owns it from then on, and
// queues it again at the back of the run queue if it was woken during its
// own poll.
func (w *worker) runTask(t *core.Task) {
	s := w.s
	if w.searching {
		w.searching = false
		// The last searcher to find work hands the search on: a notifier
		// that saw it searching woke nobody.
		if s.idle.stopSearch() {
			s.notify()
		}
	}
	// A root takes the pool's first failure before its next poll: the
	// task is NOTIFIED and in our hands, not running, so Reject completes
	// it at once with the failure as the cause.
	if f := s.failure.Load(); f != nil && s.isRoot(t) {
		spi.Reject(t, f)
		return
	}
	// Ownership moves to this worker. The task is NOTIFIED and in our
	// hands, so no wake reads the binding now (a wake reads it only after
	// winning NOTIFIED from an idle task), and the CAS in spi.Run orders
	// this write before any later wake's read.
	if t.Scheduler() != core.Scheduler(w.home) {
		spi.Bind(t, w.home)
	}
	w.wcx.ResetBudget()
	w.stats.Polls++
	if spi.Run(t, w.cx) {
		w.pushLocal(t)
	}
}

// pushLocal appends t to the run queue (owner goroutine only), moving the
// newest half to the global queue when it is full, and offers a backlog of
// two or more to an idle worker.
func (w *worker) pushLocal(t *core.Task) {
	w.stats.LocalSchedules++
	if w.deferred.Waking() {
		w.deferred.Collect(t)
		return
	}
	w.push(t)
}

func (w *worker) push(t *core.Task) {
	s := w.s
	switch res, n := w.rq.Push(t, s.overflow()); res {
	case runq.Queued:
		if n >= split.Min() && len(s.workers) > 1 {
			s.notify()
		}
	default:
		w.stats.Overflows++
	}
}

// drainMailbox moves the mailbox's tasks to the back of the run queue.
func (w *worker) drainMailbox() {
	var b core.TaskQueue
	w.mb.TakeAll(&b)
	for t := b.Pop(); t != nil; t = b.Pop() {
		w.push(t)
	}
}

// maintenance polls the driver without blocking, fires due timers, wakes
// the tasks that yielded and publishes the counters. It returns the
// driver's Park error.
func (w *worker) maintenance() error {
	var err error
	if w.driver != nil && !w.parker.DriverQuiescent() {
		err = w.driver.Park(0)
	}
	if w.s.timers {
		spi.Fire(w.s.p.Time)
	}
	w.wakeDeferred()
	w.publish()
	return err
}

// wakeDeferred wakes the wakers deferred by yields: tasks go to the back of
// this worker's run queue, in one batch.
func (w *worker) wakeDeferred() {
	woken := w.deferred.WakeAll(w.cx)
	for t := woken.Pop(); t != nil; t = woken.Pop() {
		w.push(t)
	}
}

// park waits for work. The worker publishes itself idle, stops searching,
// then takes a last look at every queue (see idle for why that order
// loses no work) and parks if it finds nothing, in its driver, with the
// timers' next deadline as its timeout if it holds the timers. After each
// wake it looks again; a notifier that picked it has cleared its bit and
// counted it as searching.
func (w *worker) park() error {
	s := w.s
	s.p.Hooks.RunBeforePark()
	s.idle.publish(w.index)
	if w.searching {
		w.searching = false
		s.idle.stopSearch()
	}
	var err error
	for {
		if w.hasWork() {
			break
		}
		if s.tryAutoAdvance() {
			// Fired timers wake tasks into their owners' mailboxes;
			// look again.
			continue
		}
		w.stats.Parks++
		w.publish()
		err = w.parkWithTimers()
		w.stats.Unparks++
		if err != nil || !s.idle.isIdle(w.index) {
			break
		}
	}
	if !s.idle.withdraw(w.index) {
		// A notifier took our bit and counted us as searching.
		w.searching = true
	}
	s.p.Hooks.RunAfterUnpark()
	return err
}

// hasWork is the last look before a park: anything in the mailbox, the
// global queue or another worker's run queue, a failure to deliver, or the
// pool closing.
func (w *worker) hasWork() bool {
	s := w.s
	if s.closed.Load() || !w.mb.IsEmpty() || !s.global.IsEmpty() || w.rq.Len() != 0 {
		return true
	}
	if w.index == 0 && s.deliver.Load() {
		return true
	}
	for _, v := range s.workers {
		if v != w && v.rq.HasStealable(split) {
			return true
		}
	}
	return false
}

// parkWithTimers parks in the worker's driver (or off it, see
// park.Parker.Park) until unparked, an I/O event, or, when it takes the
// free timer slot, the timers' next deadline; then fires the due timers.
//
// The timer holder publishes the instant it parks until (park.Deadline),
// so a task arming an earlier deadline on another goroutine unparks it to
// recompute. With an auto-advancing virtual clock it parks without a
// bound: a virtual deadline is reached by advancing the clock once the
// pool is idle, never by waiting.
func (w *worker) parkWithTimers() error {
	s := w.s
	timeout := time.Duration(-1)
	holder := false
	if s.timers && s.timerHolder.CompareAndSwap(-1, int32(w.index)) {
		// The holder is published before Deadline publishes the instant,
		// so an armer that sees the instant finds the holder.
		holder = true
		timeout = park.Deadline(s.p.Time, -1)
	}
	err := w.parker.Park(timeout)
	if holder {
		spi.Unparked(s.p.Time)
		s.timerHolder.Store(-1)
	}
	if s.timers {
		// Still published idle: see park.Advancer for why that matters.
		s.advance.FireIdle(s.p.Time)
	}
	return err
}

// degrade is a failed worker's retreat: it leaves the idle set's choices,
// closes its mailbox so wakes of its tasks go to the global queue, moves
// everything it holds there for the other workers, and waits for the pool
// to close.
func (w *worker) degrade() {
	s := w.s
	s.idle.markFailed(w.index)
	if w.searching {
		w.searching = false
		if s.idle.stopSearch() {
			s.notify()
		}
	}
	var b core.TaskQueue
	w.mb.Close()
	w.mb.TakeAll(&b)
	for t := w.rq.Pop(); t != nil; t = w.rq.Pop() {
		b.Push(t)
	}
	s.overflow().OverflowBatch(&b)
	for _, wk := range w.deferred.Take() {
		// A plain wake: to the owner's mailbox, ours is closed, so to the
		// global queue.
		wk.Wake()
	}
	if w.index == 0 {
		s.deliverFailure()
	}
	if s.idle.allFailed() {
		// Nobody is left to take the woken roots: cancel them here.
		// (Marked before this check, so of two workers failing last at
		// once, at least one sees every bit; the roots lock orders it with
		// BlockOn's check.)
		s.rejectRoots()
	}
	s.barrier.waitClosed()
}

// cleanup is the worker's part of the shutdown, once the pool is closed:
// shut down what its queues hold, cancel the task set from its own shard,
// wait at the barrier until every worker and the Shutdown caller are done
// with tasks, then close its mailbox and its driver.
func (w *worker) cleanup() {
	s := w.s
	for t := w.rq.Pop(); t != nil; t = w.rq.Pop() {
		spi.Shutdown(t)
	}
	var b core.TaskQueue
	w.mb.TakeAll(&b)
	globalq.ShutdownAll(&b)
	w.deferred.Drop()
	s.tasks.ShutdownAll(w.index)
	w.publish()
	s.barrier.finish()
	// Nobody polls or drops a task any more: the mailbox and the driver
	// may go.
	w.mb.Close()
	w.mb.TakeAll(&b)
	globalq.ShutdownAll(&b)
	if w.driver != nil {
		if err := w.driver.Close(); err != nil {
			s.logErr(fmt.Sprintf("percore: closing the driver of worker %d", w.index), err)
		}
	}
}
