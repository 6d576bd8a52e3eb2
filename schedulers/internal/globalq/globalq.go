// Package globalq is the global queue of weft's schedulers: a FIFO of
// tasks under a mutex, with its length mirrored in an atomic so that the
// frequent question "is anything there?" takes no lock.
//
// All three schedulers have one. It receives what the workers cannot keep
// to themselves: tasks scheduled from outside the workers (a spawn from
// any goroutine, a wake from a timer, an I/O driver or another runtime),
// the overflow of full run queues (Queue implements runq.Overflow), and
// spawns a busy percore worker hands on. percore's per-worker mailboxes
// are Queues too: the same shape, with one reader.
//
// A Queue closes once: a closed queue refuses every push, so nothing
// enters it after a scheduler's shutdown has emptied it.
package globalq

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/runq"
)

// Queue is a global queue. The zero value is an empty, open queue. Its
// methods are safe for concurrent use.
//
// The list is intrusive (linked through the tasks, so queueing allocates
// nothing) and guarded by mu. n mirrors its length: it is stored only
// under mu, after every change, so its stores follow the queue's own
// order and a stale length never overwrites a newer one. Readers load it
// without the lock (IsEmpty, Len):
//
//	push   lock, refuse if closed, append, store the length, unlock,
//	       then the pusher loads its scheduler's idle state
//	take   load the length (zero: done), lock, move a share into the
//	       run queue, store the length, unlock
//	close  lock, refuse later pushes, unlock
//
// A reader that sees zero without the lock may be stale, which is
// harmless where the schedulers use it: a worker that wrongly skips the
// queue looks again at its next tick, and for the one case that matters,
// a worker deciding to park, each scheduler pairs the pusher's store of
// the length (sequentially consistent, like every Go atomic) with the
// parking worker's load of it, against the pusher's later load of the
// idle state: at least one of the two sees the other (see each
// scheduler's idle protocol). A take stores the length after publishing
// the tasks it moved into the run queue, so a worker that reads the
// length a take left also sees those tasks.
type Queue struct {
	// The lock and the length are written by every remote schedule; the
	// padding on both sides keeps them off the cache lines of the fields
	// around the queue, which workers read on every tick.
	_      [64]byte
	mu     sync.Mutex
	list   core.TaskQueue
	closed bool
	// pushes counts the tasks queued by Push and PushOrShutdown, under mu
	// (so counting costs nothing extra): the remote schedules of the
	// schedulers' metrics.
	pushes uint64

	// n mirrors list.Len(), stored under mu; see the type comment.
	n atomic.Int64
	_ [64]byte
}

// Push queues t and reports true, or reports false, queueing nothing and
// leaving t to the caller, once the queue is closed. Push counts the task
// in Pushes: it is the push of a task scheduled from outside the workers.
func (q *Queue) Push(t *core.Task) bool { return q.push(t, true) }

// PushOrShutdown queues t like Push and reports true, or, once the queue
// is closed, shuts t down (as the core.Scheduler contract asks for a task
// that can no longer be queued) and reports false.
func (q *Queue) PushOrShutdown(t *core.Task) bool {
	if q.push(t, true) {
		return true
	}
	spi.Shutdown(t)
	return false
}

func (q *Queue) push(t *core.Task, remote bool) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.list.Push(t)
	if remote {
		q.pushes++
	}
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
	return true
}

// PushBatch queues every task of b in order under one lock and empties b,
// or reports false, leaving b untouched, once the queue is closed.
func (q *Queue) PushBatch(b *core.TaskQueue) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.list.PushAll(b)
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
	return true
}

// OverflowOne implements runq.Overflow: a task that did not fit in a run
// queue. On a closed queue the task is shut down. An overflow is not a
// remote schedule: Pushes does not count it.
func (q *Queue) OverflowOne(t *core.Task) {
	if !q.push(t, false) {
		spi.Shutdown(t)
	}
}

// OverflowBatch implements runq.Overflow for the newest half of a full
// run queue: one lock for the batch. On a closed queue the tasks are shut
// down.
func (q *Queue) OverflowBatch(b *core.TaskQueue) {
	if !q.PushBatch(b) {
		ShutdownAll(b)
	}
}

// Pop removes the oldest task, or returns nil.
func (q *Queue) Pop() *core.Task {
	// The common answer, nothing, costs one load inlined in the caller.
	if q.IsEmpty() {
		return nil
	}
	return q.pop()
}

func (q *Queue) pop() *core.Task {
	q.mu.Lock()
	t := q.list.Pop()
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
	return t
}

// Take moves a share of the queue to a worker: one task more than an even
// split between the workers (so a lone task still moves and a burst
// spreads over the workers that look), no more than is queued. It returns
// the oldest, which the caller runs next, and queues the rest at the tail
// of rq, the caller's own run queue: no more than rq has room for and no
// more than fills it to runq.Half, so a take into a run queue already
// half full returns only the oldest.
//
// Tasks a take queues thus land in the oldest half of rq, which an
// overflow keeps, so none is sent back before it has run; the work under
// the lock is bounded by half a run queue plus one; and a worker whose run
// queue is at least half full still takes one task each time it looks,
// which is the global queue's fairness guarantee. Writing the ring under
// the lock saves moving each task through an intermediate list.
func (q *Queue) Take(rq *runq.Queue, workers int) *core.Task {
	// The common answer, nothing, costs one load inlined in the caller.
	if q.IsEmpty() {
		return nil
	}
	return q.take(rq, workers)
}

func (q *Queue) take(rq *runq.Queue, workers int) *core.Task {
	q.mu.Lock()
	n := q.list.Len()
	if n == 0 {
		q.mu.Unlock()
		return nil
	}
	share := min(n/workers+1, n)
	// The room read here only grows before PushFrom fills it: only the
	// caller pushes into rq, and its thieves only free slots.
	admitted := min(rq.Room(), max(runq.Half-rq.Len(), 0))
	count := min(share, admitted+1)
	first := q.list.Pop()
	if count > 1 {
		rq.PushFrom(&q.list, count-1)
	}
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
	return first
}

// TakeAll moves every queued task into into, oldest first.
func (q *Queue) TakeAll(into *core.TaskQueue) {
	q.mu.Lock()
	into.PushAll(&q.list)
	q.n.Store(0)
	q.mu.Unlock()
}

// Close makes the queue refuse every later push and reports whether this
// call closed it. What is queued stays queued (TakeAll empties it).
func (q *Queue) Close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	return true
}

// IsClosed reports whether Close has run.
func (q *Queue) IsClosed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.closed
}

// IsEmpty reports whether the mirrored length reads zero (no lock; see
// Queue for when a stale answer is harmless).
func (q *Queue) IsEmpty() bool { return q.n.Load() == 0 }

// Len returns the mirrored length (no lock, a snapshot).
func (q *Queue) Len() int { return int(q.n.Load()) }

// Pushes returns how many tasks Push and PushOrShutdown have queued since
// the queue was made.
func (q *Queue) Pushes() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.pushes
}

// ShutdownAll shuts down every task of b and empties b.
func ShutdownAll(b *core.TaskQueue) {
	for t := b.Pop(); t != nil; t = b.Pop() {
		spi.Shutdown(t)
	}
}
