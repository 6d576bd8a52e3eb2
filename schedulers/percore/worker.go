package percore

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

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
	parker *parker
	driver core.Driver
	goid   atomic.Uint64
	done   chan struct{}
	pub    published
	mb     mailbox
	rq     runQueue

	// Owned by the worker's goroutine.
	cx                      *core.Context
	untilGlobal, untilEvent uint32
	// searching: counted in the idle set's searching count.
	searching bool
	rng       uint64
	// deferred holds the wakers of yields, woken after the next driver and
	// timer poll; spare is the other buffer of the pair.
	deferred, spare []core.Waker
	// wakingDeferred collects the tasks woken by wakeDeferred in woken, to
	// queue them after the whole batch.
	wakingDeferred bool
	woken          core.TaskQueue
	stats          counters
	exhausted      uint64
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
	w := &worker{s: s, index: i, parker: newParker(), done: make(chan struct{})}
	w.home = &home{w: w}
	w.rq.exclusive = len(s.workers) == 1
	w.cx = core.NewWorkerContext(w)
	w.untilGlobal = uint32(s.cfg.GlobalQueueInterval)
	w.untilEvent = uint32(s.cfg.EventInterval)
	w.rng = (uint64(time.Now().UnixNano()) ^ uint64(i+1)*0x9E3779B97F4A7C15) | 1
	return w
}

// Scheduler implements core.Worker.
func (w *worker) Scheduler() core.Scheduler { return w.s }

// Defer implements core.Worker: wk is woken after the worker next polls its
// driver and the timers.
func (w *worker) Defer(wk core.Waker) { w.deferred = append(w.deferred, wk) }

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
	w.goid.Store(core.GoroutineID())
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
		w.parker.setDriver(d)
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
			if err := w.poll(); err != nil {
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
	if !w.mb.isEmpty() {
		w.drainMailbox()
	}
	if w.untilGlobal--; w.untilGlobal == 0 {
		w.untilGlobal = uint32(s.cfg.GlobalQueueInterval)
		if t := s.global.take(&w.rq); t != nil {
			return t
		}
	}
	if t := w.rq.pop(); t != nil {
		return t
	}
	return s.global.take(&w.rq)
}

// idle is called with nothing to run: it runs the tasks that yielded
// (after a driver poll), steals, or parks. It returns a task to run, or nil
// to go round the loop again.
func (w *worker) idle() (*core.Task, error) {
	if len(w.deferred) > 0 {
		return nil, w.poll()
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
	start := w.randN(n)
	for k := 0; k < n; k++ {
		v := s.workers[(start+k)%n]
		if v == w {
			continue
		}
		if got := v.rq.stealInto(&w.rq); got > 0 {
			w.stats.steals++
			w.stats.stolen += uint64(got)
			return w.rq.pop()
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
		t.Reject(f)
		return
	}
	// Ownership moves to this worker. The task is NOTIFIED and in our
	// hands, so no wake reads the binding now (a wake reads it only after
	// winning NOTIFIED from an idle task), and the CAS in Task.Run orders
	// this write before any later wake's read.
	if t.Scheduler() != core.Scheduler(w.home) {
		t.Bind(w.home)
	}
	w.cx.ResetBudget()
	w.stats.polls++
	if t.Run(w.cx) {
		w.pushLocal(t)
	}
}

// pushLocal appends t to the run queue (owner goroutine only), moving the
// newest half to the global queue when it is full, and offers a backlog of
// two or more to an idle worker.
func (w *worker) pushLocal(t *core.Task) {
	w.stats.local++
	if w.wakingDeferred {
		w.woken.Push(t)
		return
	}
	w.push(t)
}

func (w *worker) push(t *core.Task) {
	s := w.s
	switch res, n := w.rq.push(t, s); res {
	case pushed:
		if n >= stealable && len(s.workers) > 1 {
			s.notify()
		}
	default:
		w.stats.overflows++
	}
}

// drainMailbox moves the mailbox's tasks to the back of the run queue.
func (w *worker) drainMailbox() {
	var b core.TaskQueue
	w.mb.takeAll(&b)
	for t := b.Pop(); t != nil; t = b.Pop() {
		w.push(t)
	}
}

// poll polls the driver without blocking, fires due timers, wakes the
// tasks that yielded and publishes the counters. It returns the driver's
// Park error.
func (w *worker) poll() error {
	var err error
	if w.driver != nil && !w.parker.driverIdle() {
		err = w.driver.Park(0)
	}
	if w.s.timers {
		w.s.p.Time.Fire()
	}
	w.wakeDeferred()
	w.publish()
	return err
}

// wakeDeferred wakes the wakers deferred by yields: tasks go to the back of
// this worker's run queue, in one batch.
func (w *worker) wakeDeferred() {
	if len(w.deferred) == 0 {
		return
	}
	d := w.deferred
	w.deferred = w.spare[:0]
	w.wakingDeferred = true
	for i, wk := range d {
		w.cx.Wake(wk)
		d[i] = nil
	}
	w.wakingDeferred = false
	w.spare = d[:0]
	for t := w.woken.Pop(); t != nil; t = w.woken.Pop() {
		w.push(t)
	}
}

// park waits for work. The worker publishes itself idle, stops searching,
// then takes a last look at every queue (see idle for why that order
// loses no work) and sleeps if it finds nothing, in its driver, with the
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
		w.stats.parks++
		w.publish()
		err = w.sleep()
		w.stats.unparks++
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

// hasWork is the last look before a sleep: anything in the mailbox, the
// global queue or another worker's run queue, a failure to deliver, or the
// pool closing.
func (w *worker) hasWork() bool {
	s := w.s
	if s.closed.Load() || !w.mb.isEmpty() || !s.global.isEmpty() || w.rq.len() != 0 {
		return true
	}
	if w.index == 0 && s.deliver.Load() {
		return true
	}
	for _, v := range s.workers {
		if v != w && v.rq.isStealable() {
			return true
		}
	}
	return false
}

// sleep sleeps in the worker's driver (or on its parker) until unparked,
// an I/O event, or, when it takes the free timer slot, the timers' next
// deadline; then fires the due timers.
//
// The timer holder publishes the instant it sleeps until
// (core.Time.Parking), so a task arming an earlier deadline on another
// goroutine unparks it to recompute. With an auto-advancing virtual clock
// it sleeps without a bound: a virtual deadline is reached by advancing
// the clock once the pool is idle, never by waiting.
func (w *worker) sleep() error {
	s := w.s
	timeout := time.Duration(-1)
	holder := false
	if s.timers && s.timerHolder.CompareAndSwap(-1, int32(w.index)) {
		// The holder is published before Parking publishes the instant, so
		// an armer that sees the instant finds the holder.
		holder = true
		virtual := s.p.Time.CanAutoAdvance()
		timeout = s.p.Time.Parking(-1)
		if virtual {
			timeout = -1
		}
	}
	err := w.parker.sleep(timeout)
	if holder {
		s.p.Time.Unparked()
		s.timerHolder.Store(-1)
	}
	if s.timers {
		s.p.Time.Fire()
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
	w.mb.close(&b)
	for t := w.rq.pop(); t != nil; t = w.rq.pop() {
		b.Push(t)
	}
	s.pushBatch(&b)
	d := w.deferred
	w.deferred = nil
	for _, wk := range d {
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
	for t := w.rq.pop(); t != nil; t = w.rq.pop() {
		t.Shutdown()
	}
	var b core.TaskQueue
	w.mb.takeAll(&b)
	shutdownAll(&b)
	w.deferred = nil
	s.tasks.ShutdownAll(w.index)
	w.publish()
	s.barrier.finish()
	// Nobody polls or drops a task any more: the mailbox and the driver
	// may go.
	w.mb.close(&b)
	shutdownAll(&b)
	if w.driver != nil {
		if err := w.driver.Close(); err != nil {
			s.logErr(fmt.Sprintf("percore: closing the driver of worker %d", w.index), err)
		}
	}
}

// randN returns a pseudo-random number in [0, n) (xorshift64*).
func (w *worker) randN(n int) int {
	x := w.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	w.rng = x
	return int(((x * 0x2545F4914F6CDD1D) >> 32) * uint64(n) >> 32)
}
