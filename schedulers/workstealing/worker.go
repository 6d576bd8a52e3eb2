package workstealing

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

// worker is the shared half of a worker: what other goroutines reach to
// steal from it, wake it, hand its core over, and read its metrics.
type worker struct {
	index int
	// queue is the worker's run queue. Its owner methods (push, pushAll,
	// pop, and injectQueue.popInto into it) are called only by the
	// goroutine holding the core;
	// thieves call stealInto, anyone may call len.
	queue  localQueue
	parker *parker
	// handoff carries the core to a goroutine that takes over the worker:
	// the first one at New, and a new one when the running task calls
	// BlockInPlace.
	handoff atomic.Pointer[workerCore]
	pub     published
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
	gqi   uint32
	rng   uint64
	stats stats
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
	cx   *core.Context
	// deferred holds wakers queued by Context.Defer (yields), woken after
	// the next driver and timer poll. spare is the other buffer of the
	// pair, so waking allocates nothing.
	deferred, spare []core.Waker
	// wakingDeferred makes wakes of deferred tasks yields (to the back of
	// the run queue), collected in woken and queued in one batch, with
	// one notification at the end instead of one per task.
	wakingDeferred bool
	woken          core.TaskQueue
	// exhausted is how much of cx.BudgetExhaustions is already counted.
	exhausted uint64
	goid      atomic.Uint64
	done      chan struct{}
}

// Scheduler implements core.Worker: the scheduler this worker belongs to.
func (r *runner) Scheduler() core.Scheduler { return r.s }

// Defer implements core.Worker: w is woken after the worker next polls
// its driver and timers.
func (r *runner) Defer(w core.Waker) { r.deferred = append(r.deferred, w) }

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
	r.goid.Store(core.GoroutineID())
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
	c.stats.startProcessing()
	for {
		if s.closed.Load() {
			r.shutdown()
			return
		}
		if c.untilEvent--; c.untilEvent == 0 {
			c.untilEvent = s.eventInterval
			// Maintenance: I/O, timers and deferred wakes get a turn
			// however busy the worker is.
			c.stats.endProcessing()
			r.parkTimeout(0)
			r.publish()
			c.stats.startProcessing()
		}
		t := r.nextTask()
		if t == nil {
			c.stats.endProcessing()
			t = r.stealWork()
			if t == nil {
				if len(r.deferred) > 0 {
					// Yielded tasks are waiting: poll the driver and
					// timers, then run them, without sleeping.
					r.parkTimeout(0)
				} else {
					r.park()
				}
				c.stats.startProcessing()
				continue
			}
			c.stats.startProcessing()
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
		return c.nextLocal()
	}
	if t := c.nextLocal(); t != nil {
		return t
	}
	return r.takeGlobal()
}

// takeGlobal takes a share of the global queue: one more than an even
// split between the workers (so a lone task moves too, and a burst spreads
// out), but no more than fills the run queue to half. It returns the first
// task to run now and queues the rest locally, or returns nil.
//
// Filling at most to half keeps taken tasks in the oldest half of the
// ring, which an overflow never moves, so a task is not sent back to the
// global queue before it has been polled. A worker whose queue is at least
// half full still takes one task each global queue interval: that is the
// fairness guarantee for the global queue.
func (r *runner) takeGlobal() *core.Task {
	s := r.s
	if s.inject.isEmpty() {
		return nil
	}
	c := r.core
	// Only this goroutine pushes to the ring, so the room measured here
	// can only grow before popInto fills it.
	room := max(c.w.queue.remaining()-queueHalf, 0)
	n := min(s.inject.len()/len(s.workers)+1, room+1)
	return s.inject.popInto(n, &c.w.queue)
}

func (c *workerCore) nextLocal() *core.Task {
	if t := c.lifo; t != nil {
		c.lifo = nil
		return t
	}
	return c.w.queue.pop()
}

// tuneGlobalQueueInterval applies a new tuned interval when it differs by
// more than 2 from the current one, so that noise does not make it jitter.
func (c *workerCore) tuneGlobalQueueInterval(fixed int) {
	next := c.stats.tunedGlobalQueueInterval(fixed)
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
		s.transitionWorkerFromSearching()
	}
	r.cx.ResetBudget()
	c.stats.polls++
	c.stats.batchPolls++
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
		c.stats.lifoHits++
		if lifoPolls >= s.cfg.MaxLIFOPolls {
			// Whatever this poll schedules goes to the back of the
			// queue.
			c.lifoEnabled = false
		}
		c.stats.polls++
		c.stats.batchPolls++
		r.poll(t)
	}
}

// poll runs t once and requeues it if it was woken during its own poll (a
// self-wake or a spent budget): at the back, as a yield.
func (r *runner) poll(t *core.Task) {
	if t.Run(r.cx) {
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
	c.stats.localSchedules++
	if r.wakingDeferred {
		// The task is ours to queue (its wake won NOTIFIED), so its
		// queue link is free.
		r.woken.Push(t)
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
	// The run queue grew: let a sleeping worker come and steal.
	r.s.notifyParked()
}

// pushLocal appends t to the run queue, overflowing to the global queue.
func (r *runner) pushLocal(t *core.Task) {
	c := r.core
	if c.w.queue.push(t, &r.s.inject) != pushedLocal {
		c.stats.overflows++
	}
}

// stealWork looks for work elsewhere: half of another worker's run queue,
// starting from a random worker, then the global queue. It does not look
// when half the workers are already searching.
func (r *runner) stealWork() *core.Task {
	s := r.s
	c := r.core
	if !c.searching {
		c.searching = s.idle.transitionToSearching()
		if !c.searching {
			return nil
		}
	}
	n := len(s.workers)
	start := c.randN(n)
	for i := 0; i < n; i++ {
		w := s.workers[(start+i)%n]
		if w == c.w {
			continue
		}
		if t, k := w.queue.stealInto(&c.w.queue); t != nil {
			c.stats.steals++
			c.stats.stolen += uint64(k)
			return t
		}
	}
	return s.inject.pop()
}

// randN returns a pseudo-random number in [0, n) (xorshift64*).
func (c *workerCore) randN(n int) int {
	x := c.rng
	x ^= x >> 12
	x ^= x << 25
	x ^= x >> 27
	c.rng = x
	return int(((x * 0x2545F4914F6CDD1D) >> 32) * uint64(n) >> 32)
}

// park waits for work (Tokio's Context::park): the worker enters the
// sleeper list, then sleeps until it is woken with something to do or the
// scheduler closes.
func (r *runner) park() {
	s := r.s
	c := r.core
	s.p.Hooks.RunBeforePark()
	if r.transitionToParked() {
		for !s.closed.Load() {
			if !s.tryAutoAdvance() {
				c.stats.parks++
				r.publish()
				r.parkTimeout(-1)
			}
			if r.transitionFromParked() {
				break
			}
		}
	}
	s.p.Hooks.RunAfterUnpark()
}

// parkTimeout sleeps (d < 0) or only polls the driver and timers (d == 0),
// then wakes the deferred tasks and, if the worker now has more than one
// task while nobody searches, wakes a sleeper to share them.
func (r *runner) parkTimeout(d time.Duration) {
	s := r.s
	c := r.core
	p := c.w.parker
	switch {
	case d == 0:
		s.pollDriver(s.logErr)
	case p.consume():
		// An unpark arrived before we slept.
	case s.drv.tryLock():
		s.parkDriver(c.w.index, p, d, s.logErr)
		s.drv.unlock()
	default:
		p.parkCond()
	}
	r.wakeDeferred()
	if !c.searching && c.w.queue.len()+b2i(c.lifo != nil) > 1 {
		s.notifyParked()
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
	if len(r.deferred) == 0 {
		return
	}
	d := r.deferred
	r.deferred = r.spare[:0]
	r.wakingDeferred = true
	for i, w := range d {
		r.cx.Wake(w)
		d[i] = nil
	}
	r.wakingDeferred = false
	r.spare = d[:0]
	if r.woken.Len() > 0 {
		c := r.core
		c.stats.overflows += uint64(c.w.queue.pushAll(&r.woken, &r.s.inject))
	}
}

// transitionToParked enters the sleeper list unless the worker has work.
// The last searcher to give up re-checks every queue (see idle).
func (r *runner) transitionToParked() bool {
	s := r.s
	c := r.core
	if c.lifo != nil || !c.w.queue.isEmpty() {
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
// the driver filled during its sleep) takes itself out of the sleeper
// list and runs, not searching.
func (r *runner) transitionFromParked() bool {
	s := r.s
	c := r.core
	if c.lifo != nil || !c.w.queue.isEmpty() || !s.inject.isEmpty() {
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
		c.stats.budgetYields += ex - r.exhausted
		r.exhausted = ex
	}
	c.w.pub.store(&c.stats)
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
	c.stats.endProcessing()
	// Step 3, in parallel on every worker from a different shard.
	s.tasks.ShutdownAll(c.w.index)
	r.publish()
	r.core = nil
	r.deferred = nil
	// Step 5: the last worker to get here finishes alone.
	s.finalMu.Lock()
	s.finalCores = append(s.finalCores, c)
	last := len(s.finalCores) == len(s.workers)
	s.finalMu.Unlock()
	if last {
		s.finish()
	}
}
