// Package deferred holds the wakers that tasks defer to a worker's next
// driver and timer poll (core.Worker.Defer, which core.Yield uses), so a
// yielding task lets I/O and timers have their turn before it runs again.
package deferred

import "github.com/weftrt/weft/core"

// Wakers is one worker's deferred wakers. Only the goroutine running the
// worker uses it. It keeps two buffers and swaps them on each WakeAll, so
// deferring and waking allocate nothing once the buffers have grown, and
// a task that defers again while WakeAll runs waits for the next call.
//
// A wake of a deferred task is a yield: the task belongs at the back of
// the run queue. While WakeAll runs, Waking reports true, so that the
// worker's schedule path can Collect such a task instead of queueing it
// (a task whose wake won NOTIFIED is the worker's to queue, so its queue
// link is free); the worker then queues the collected tasks in one batch,
// with one notification of idle workers instead of one per task.
type Wakers struct {
	list, spare []core.Waker
	waking      bool
	woken       core.TaskQueue
}

// Add defers w to the next WakeAll.
func (d *Wakers) Add(w core.Waker) { d.list = append(d.list, w) }

// Len returns the number of deferred wakers.
func (d *Wakers) Len() int { return len(d.list) }

// WakeAll wakes every deferred waker through cx (core.Context.Wake, so a
// task of the worker's scheduler is scheduled from the worker) and
// empties the list. Wakers deferred meanwhile wait for the next call. It
// returns the tasks the worker collected meanwhile (see Collect), which
// the caller queues and so empties.
func (d *Wakers) WakeAll(cx *core.Context) *core.TaskQueue {
	if len(d.list) == 0 {
		return &d.woken
	}
	ws := d.list
	d.list = d.spare[:0]
	d.waking = true
	for i, w := range ws {
		cx.Wake(w)
		ws[i] = nil
	}
	d.waking = false
	d.spare = ws[:0]
	return &d.woken
}

// Waking reports whether WakeAll is running: a task the worker schedules
// now was woken by it.
func (d *Wakers) Waking() bool { return d.waking }

// Collect keeps t, a task woken by WakeAll, for the batch WakeAll
// returns.
func (d *Wakers) Collect(t *core.Task) { d.woken.Push(t) }

// Take removes every deferred waker and returns them, for a worker that
// wakes them some other way (a failed percore worker wakes them as plain
// remote wakes).
func (d *Wakers) Take() []core.Waker {
	ws := d.list
	d.list = nil
	return ws
}

// Drop forgets every deferred waker: their tasks are being shut down.
func (d *Wakers) Drop() {
	d.list = nil
	d.spare = nil
}
