package workstealing

import "github.com/weftrt/weft/core"

// BlockInPlace runs f, which may block, on the calling goroutine, from
// inside a task polled by a workstealing worker. Before f starts, the
// worker's core (its run queue, LIFO slot, the wakes deferred by tasks
// that yielded, and its place in the idle accounting) is handed to a new
// goroutine, which carries on running the worker's other tasks while f
// blocks; the task that called BlockInPlace
// keeps its own poll going on the current goroutine. When f returns, the
// goroutine takes the core back if the new one has not started yet;
// otherwise it finishes the current poll without a core (its wakes and
// spawns go to the global queue) and then exits, and the new goroutine
// stays.
//
// Outside a workstealing worker (cx is nil, has no worker, belongs to
// another scheduler, or the goroutine already gave its core away) f simply
// runs.
//
// Use it for blocking calls that cannot be moved off the task: a cgo call,
// a mutex held by non-weft code, a synchronous library. For work that can
// be handed off, rt.SpawnBlocking is cheaper and keeps the task polling
// asynchronously. f is not constrained by the task's budget. Shutdown
// waits for f to return, as it waits for any poll in progress.
//
// # Why this and not only Go's own hand-off
//
// When a goroutine blocks in a system call, Go's runtime hands its
// processor (P) to another thread, so other goroutines keep running. That
// does not help weft's tasks: they do not run on goroutines of their own
// but in the worker goroutine's loop, which is the goroutine that blocked.
// Its LIFO slot cannot be stolen, its queue only in halves by searching
// workers, and with one worker nothing else runs at all. BlockInPlace
// moves the loop, not the thread: the new goroutine is a plain goroutine
// owned by the scheduler (not a blocking-pool job, whose cap could leave
// the core with nobody to run it), and Shutdown waits for it like any
// worker goroutine.
func BlockInPlace(cx *core.Context, f func()) {
	var r *runner
	if cx != nil {
		r, _ = cx.Worker().(*runner)
	}
	if r == nil || r.core == nil {
		f()
		return
	}
	s := r.s
	c := r.core
	// Every task but the LIFO one can be stolen; move it where the other
	// workers (and the new goroutine) can reach it.
	if t := c.lifo; t != nil {
		c.lifo = nil
		r.pushLocal(t)
	}
	// Tasks that yielded during this tick wait in the runner's deferred
	// list, which stays with this goroutine: queue them on the core now,
	// or they would wait for f to return.
	r.wakeDeferred()
	r.core = nil
	// Counted before the core is published: a worker that takes the core
	// and goes idle must not see every worker idle while this task runs
	// (pairs with the load in allIdle).
	s.inPlace.Add(1)
	// Pairs with the Swap in runner.main (the new goroutine) and the one
	// below (us): exactly one of them gets the core.
	c.w.handoff.Store(c)
	s.startRunner(c.w)
	f()
	if back := c.w.handoff.Swap(nil); back != nil {
		r.core = back
		s.inPlace.Add(-1)
	}
}
