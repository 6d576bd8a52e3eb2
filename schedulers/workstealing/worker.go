package workstealing

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/deferred"
	"github.com/weftrt/weft/schedulers/internal/metrics"
	"github.com/weftrt/weft/schedulers/internal/park"
	"github.com/weftrt/weft/schedulers/internal/runq"
)

// worker is the shared half of a worker: what other goroutines reach to
// steal from it, wake it, hand its core over, and read its metrics.
type worker struct {
	index int
	// rq is the worker's run queue. Its owner methods (Push, PushBatch,
	// Pop, and the global queue's Take into it) are called only by the
	// goroutine holding the core; thieves call StealInto, anyone may call
	// Len.
	rq     runq.Queue
	parker *park.Parker
	// handoff carries the core to a goroutine that takes over the worker:
	// the first one at New, and a new one when the running task calls
	// BlockInPlace.
	handoff atomic.Pointer[workerCore]
	pub     metrics.Published
}

// workerCore is the right to run a worker: the state only the goroutine
// running the worker touches, so none of it needs synchronisation. It
// moves to another goroutine as a whole (BlockInPlace).
type workerCore struct {
	w *worker
	// untilEvent and untilGlobal count the ticks (passes of the worker
	// loop) left until the next maintenance and the next look at the
	// global queue ahead of the run queue. Countdowns rather than a tick
	// modulo the intervals: no division on the hot path.
	untilEvent, untilGlobal uint32
	// lifo holds the task most recently woken or spawned by the running
	// task. It runs before the run queue, so a task that hands work to
	// another (a message, a spawned helper) has it done while the data is
	// still in cache. Not stealable.
	lifo *core.Task
	// lifoEnabled is cleared after max_lifo_polls LIFO polls in a row, so
	// two tasks waking each other cannot starve the queue; it is set again
	// at the end of the tick.
	lifoEnabled bool
	// searching: the worker counts itself in idle's searching count.
	searching bool
	// gqi is the current global queue interval.
	gqi uint32
	rng runq.Rand
	// stats are the worker's counts, published to pub; pollTime is the
	// mean poll time the global queue interval is tuned from.
	stats    metrics.Counters
	pollTime metrics.PollTime
}

// runner is one goroutine running a worker: it implements core.Worker,
// so tasks see it in their Context. It normally holds the worker's core
// for its whole life; after BlockInPlace hands the core to a new runner,
// the old one finishes the current poll without a core and exits.
type runner struct {
	s *Scheduler
	// core is the worker this goroutine runs, nil once handed off. Only
	// this goroutine reads or writes it: a Context never leaves its poll.
	core *workerCore
	// wcx is the goroutine's worker context; cx is its Context.
	wcx spi.WorkerContext
	cx  *core.Context
	// deferred holds wakers queued by Context.Defer (yields), woken after
	// the next driver and timer poll; their wakes are yields (to the back
	// of the run queue), collected and queued in one batch, with one
	// notification at the end instead of one per task.
	deferred deferred.Wakers
	// exhausted is how much of cx.BudgetExhaustions is already counted.
	exhausted uint64
	goid      atomic.Uint64
	done      chan struct{}
}

// Scheduler implements core.Worker: the scheduler this worker belongs to.
func (r *runner) Scheduler() core.Scheduler { return r.s }

// Defer implements core.Worker: w is woken after the worker next polls
// its driver and timers.
func (r *runner) Defer(w core.Waker) { r.deferred.Add(w) }

// Driver implements core.Worker.
func (r *runner) Driver() core.Driver { return r.s.drv.driver }

// Time implements core.Worker.
func (r *runner) Time() *core.Time { return r.s.p.Time }

// Blocking implements core.BlockingWorker: the runtime's blocking pool.
func (r *runner) Blocking() core.BlockingSpawner { return r.s.p.Blocking }

// main is a runner goroutine's body.
func (r *runner) main(w *worker) {
	s := r.s
	defer close(r.done)
	defer s.forget(r)
	r.goid.Store(spi.GoroutineID())
	// Pairs with the Store in New or BlockInPlace, and with the Swap by
	// which BlockInPlace's goroutine may take its core back.
	c := w.handoff.Swap(nil)
	if c == nil {
		// BlockInPlace's goroutine took its core back before we started.
		return
	}
	r.core = c
	s.p.Hooks.RunAfterStart()
	defer s.p.Hooks.RunBeforeStop()
	r.run()
}

// run is the worker loop (Tokio's Context::run). It returns when the
// scheduler shuts down or the core is handed to another goroutine.
func (r *runner) run() {
	s := r.s
	c := r.core
	c.lifoEnabled = s.cfg.LIFOSlot
	c.pollTime.Start(c.stats.Polls)
	for {
		if s.closed.Load() {
			r.shutdown()
			return
		}
		if c.untilEvent--; c.untilEvent == 0 {
			c.untilEvent = s.eventInterval
			// Maintenance: I/O, timers and deferred wakes get a turn
			// however busy the worker is.
			c.pollTime.End(c.stats.Polls)
			r.parkTimeout(0)
			r.publish()
			c.pollTime.Start(c.stats.Polls)
		}
		t := r.nextTask()
		if t == nil {
			c.pollTime.End(c.stats.Polls)
			t = r.search()
			if t == nil {
				if r.deferred.Len() > 0 {
					// Yielded tasks are waiting: poll the driver and
					// timers, then run them, without parking.
					r.parkTimeout(0)
				} else {
					r.park()
				}
				c.pollTime.Start(c.stats.Polls)
				continue
			}
			c.pollTime.Start(c.stats.Polls)
		}
		if !r.runTask(t) {
			r.lost()
			return
		}
	}
}

// nextTask returns the next task from the worker's own queues or the
// global queue, or nil.
func (r *runner) nextTask() *core.Task {
	c := r.core
	if c.untilGlobal--; c.untilGlobal == 0 {
		// Fairness: the global queue first, however much local work
		// there is.
		c.tuneGlobalQueueInterval(r.s.cfg.GlobalQueueInterval)
		c.untilGlobal = c.gqi
		if t := r.takeGlobal(); t != nil {
			return t
		}
		return c.nextOwn()
	}
	if t := c.nextOwn(); t != nil {
		return t
	}
	return r.takeGlobal()
}

// takeGlobal takes a share of the global queue (see globalq.Queue.Take:
// one more than an even split between the workers, filling the run queue
// at most to half). It returns the first task to run now and queues the
// rest in the run queue, or returns nil.
func (r *runner) takeGlobal() *core.Task {
	return r.s.global.Take(&r.core.w.rq, len(r.s.workers))
}

// nextOwn returns the task in the LIFO slot, else the oldest of the run
// queue, or nil.
func (c *workerCore) nextOwn() *core.Task {
	if t := c.lifo; t != nil {
		c.lifo = nil
		return t
	}
	return c.w.rq.Pop()
}

// tuneGlobalQueueInterval applies a new tuned interval when it differs by
// more than 2 from the current one, so that noise does not make it jitter.
func (c *workerCore) tuneGlobalQueueInterval(fixed int) {
	next := tunedGlobalQueueInterval(fixed, &c.pollTime)
	if next > c.gqi+2 || c.gqi > next+2 || fixed > 0 {
		c.gqi = next
	}
}

// runTask polls t, then whatever the polls put in the LIFO slot, up to
// max_lifo_polls of them and only while the budget lasts. LIFO tasks run
// on t's budget: to the rest of the system they are part of t's turn. It
// reports false when the core was handed to another goroutine meanwhile.
func (r *runner) runTask(t *core.Task) bool {
	s := r.s
	c := r.core
	if c.searching {
		c.searching = false
		s.stopSearch()
	}
	r.wcx.ResetBudget()
	c.stats.Polls++
	r.poll(t)
	lifoPolls := 0
	for {
		c = r.core
		if c == nil {
			return false
		}
		t = c.lifo
		if t == nil {
			c.lifoEnabled = s.cfg.LIFOSlot
			return true
		}
		c.lifo = nil
		if r.cx.BudgetRemaining() <= 0 {
			// Out of budget: the LIFO task waits its turn at the back.
			r.pushLocal(t)
			c.lifoEnabled = s.cfg.LIFOSlot
			return true
		}
		lifoPolls++
		c.stats.LIFOHits++
		if lifoPolls >= s.cfg.MaxLIFOPolls {
			// Whatever this poll schedules goes to the back of the
			// queue.
			c.lifoEnabled = false
		}
		c.stats.Polls++
		r.poll(t)
	}
}

// poll runs t once and requeues it if it was woken during its own poll (a
// self-wake or a spent budget): at the back, as a yield.
func (r *runner) poll(t *core.Task) {
	if spi.Run(t, r.cx) {
		if r.core != nil {
			r.scheduleLocal(t, true)
		} else {
			r.s.scheduleRemote(t)
		}
	}
}

// scheduleLocal queues t on this worker: at the back of the run queue for
// a yield or with the LIFO slot off, otherwise in the LIFO slot, whose
// previous occupant goes to the back of the run queue.
func (r *runner) scheduleLocal(t *core.Task, yield bool) {
	c := r.core
	c.stats.LocalSchedules++
	if r.deferred.Waking() {
		r.deferred.Collect(t)
		return
	}
	if yield || !c.lifoEnabled {
		r.pushLocal(t)
	} else {
		prev := c.lifo
		c.lifo = t
		if prev == nil {
			// Only the LIFO slot changed, and it cannot be stolen:
			// nobody to tell.
			return
		}
		r.pushLocal(prev)
	}
	// The run queue grew: let a parked worker come and steal.
	r.s.notify()
}

// pushLocal appends t to the run queue, overflowing to the global queue.
func (r *runner) pushLocal(t *core.Task) {
	c := r.core
	if res, _ := c.w.rq.Push(t, &r.s.global); res != runq.Queued {
		c.stats.Overflows++
	}
}

// search looks for work elsewhere: half of another worker's run queue,
// rounded up, starting from a random worker, then the global queue. It
// does not look when half the workers are already searching.
func (r *runner) search() *core.Task {
	s := r.s
	c := r.core
	if !c.searching {
		c.searching = s.idle.tryStartSearch()
		if !c.searching {
			return nil
		}
	}
	n := len(s.workers)
	start := c.rng.N(n)
	for i := 0; i < n; i++ {
		w := s.workers[(start+i)%n]
		if w == c.w {
			continue
		}
		if t, k := w.rq.StealInto(&c.w.rq, runq.HalfUp); t != nil {
			c.stats.Steals++
			c.stats.StolenTasks += uint64(k)
			return t
		}
	}
	return s.global.Pop()
}

// park waits for work (Tokio's Context::park): the worker enters the
// parked list, then parks until it is woken with something to do or the
// scheduler closes.
func (r *runner) park() {
	s := r.s
	c := r.core
	s.p.Hooks.RunBeforePark()
	if r.transitionToParked() {
		for !s.closed.Load() {
			if !s.tryAutoAdvance() {
				c.stats.Parks++
				r.publish()
				r.parkTimeout(-1)
				c.stats.Unparks++
			}
			if r.transitionFromParked() {
				break
			}
		}
	}
	s.p.Hooks.RunAfterUnpark()
}

// parkTimeout parks (d < 0) or only polls the driver and timers (d == 0),
// then wakes the deferred tasks and, if the worker now has more than one
// task while nobody searches, wakes a parked worker to share them.
func (r *runner) parkTimeout(d time.Duration) {
	s := r.s
	c := r.core
	p := c.w.parker
	switch {
	case d == 0:
		s.pollDriver(p, s.logErr)
	case p.Consume():
		// An unpark arrived before we parked.
	case s.drv.tryLock():
		s.parkDriver(c.w.index, p, d, s.logErr)
		s.drv.unlock()
	default:
		p.Wait()
	}
	r.wakeDeferred()
	if !c.searching && c.w.rq.Len()+b2i(c.lifo != nil) > 1 {
		s.notify()
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// wakeDeferred wakes the wakers deferred by yielding tasks. Tasks go to
// the back of this worker's run queue (or to the global queue when the
// core is gone).
func (r *runner) wakeDeferred() {
	if woken := r.deferred.WakeAll(r.cx); woken.Len() > 0 {
		c := r.core
		c.stats.Overflows += uint64(c.w.rq.PushBatch(woken, &r.s.global))
	}
}

// transitionToParked enters the parked list unless the worker has work.
// The last searcher to give up re-checks every queue (see idle).
func (r *runner) transitionToParked() bool {
	s := r.s
	c := r.core
	if c.lifo != nil || !c.w.rq.IsEmpty() {
		return false
	}
	last := s.idle.transitionToParked(c.w.index, c.searching)
	c.searching = false
	if last {
		s.notifyIfWorkPending()
	}
	return true
}

// transitionFromParked reports whether the worker should stop parking. A
// worker woken by a notifier was counted as searching by it; one that wakes
// with work at hand (its own queue, or the global queue, which a timer or
// the driver filled while it was parked) takes itself out of the parked
// list and runs, not searching.
func (r *runner) transitionFromParked() bool {
	s := r.s
	c := r.core
	if c.lifo != nil || !c.w.rq.IsEmpty() || !s.global.IsEmpty() {
		c.searching = !s.idle.unparkByID(c.w.index)
		return true
	}
	if s.idle.isParked(c.w.index) {
		// A spurious wake, or a wake that was not for us.
		return false
	}
	c.searching = true
	return true
}

// publish copies the worker's counters where Metrics reads them.
func (r *runner) publish() {
	c := r.core
	if ex := r.cx.BudgetExhaustions(); ex != r.exhausted {
		c.stats.BudgetYields += ex - r.exhausted
		r.exhausted = ex
	}
	c.w.pub.Store(&c.stats, c.w.rq.Len(), &c.pollTime)
}

// lost ends a runner whose core went to another goroutine during
// BlockInPlace: the wakers its task deferred since then belong to no
// core, so they are woken into the global queue. If it was the last task
// blocked in place, every worker may be idle now, with none of them about
// to notice: the runner itself considers advancing a virtual clock.
func (r *runner) lost() {
	r.wakeDeferred()
	// Pairs with the load in allIdle.
	if r.s.inPlace.Add(-1) == 0 {
		r.s.tryAutoAdvance()
	}
}

// shutdown is a worker's part of the shutdown (steps 2 to 6 in the
// package documentation).
func (r *runner) shutdown() {
	s := r.s
	c := r.core
	c.pollTime.End(c.stats.Polls)
	// Step 3, in parallel on every worker from a different shard.
	s.tasks.ShutdownAll(c.w.index)
	r.publish()
	r.core = nil
	r.deferred.Drop()
	// Step 5: the last worker to get here finishes alone.
	s.finalMu.Lock()
	s.finalCores = append(s.finalCores, c)
	last := len(s.finalCores) == len(s.workers)
	s.finalMu.Unlock()
	if last {
		s.finish()
	}
}
