package workstealing

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// injectQueue is the global queue: tasks scheduled from outside the
// workers, the overflow of full run queues, and wakes from a worker that
// lost its queue to BlockInPlace. It is an intrusive FIFO (linked through
// the tasks, so queueing allocates nothing) under a mutex, with its length
// mirrored in an atomic so that the common question "is it empty?" takes
// no lock.
//
// The mirror is stored under the mutex after every change. A reader that
// sees 0 without the lock may be stale, which is harmless where it is
// used: a worker that wrongly skips the queue looks again at its next
// tick, and a task pushed concurrently is followed by a notify (see
// Scheduler.notifyParked) that covers the race.
type injectQueue struct {
	mu     sync.Mutex
	list   core.TaskQueue
	closed bool
	// remote counts tasks pushed by schedules from outside the workers,
	// under mu (so counting costs nothing extra).
	remote uint64

	// n mirrors list.Len(), stored under mu after every change. Its
	// lock-free loads pair with those stores; a push's store also pairs
	// with the last searcher's load in notifyIfWorkPending (see idle).
	n atomic.Int64
}

// push queues one task scheduled from outside the workers. It reports
// false, queueing nothing, once the queue is closed.
func (q *injectQueue) push(t *core.Task) bool {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return false
	}
	q.list.Push(t)
	q.remote++
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
	return true
}

// pushBatch appends every task of b in order and empties b. It reports
// false, leaving b untouched, once the queue is closed.
func (q *injectQueue) pushBatch(b *core.TaskQueue) bool {
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

// overflowOne implements overflow: a task that did not fit in a run
// queue. On a closed queue the task is shut down, as the Scheduler
// contract asks for a task that can no longer be queued.
func (q *injectQueue) overflowOne(t *core.Task) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		t.Shutdown()
		return
	}
	q.list.Push(t)
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
}

// overflowBatch implements overflow for the half of a full run queue.
func (q *injectQueue) overflowBatch(b *core.TaskQueue) {
	if q.pushBatch(b) {
		return
	}
	for t := b.Pop(); t != nil; t = b.Pop() {
		t.Shutdown()
	}
}

// pop removes the oldest task, or returns nil.
func (q *injectQueue) pop() *core.Task {
	if q.n.Load() == 0 {
		return nil
	}
	q.mu.Lock()
	t := q.list.Pop()
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
	return t
}

// popInto removes up to n of the oldest tasks: the first is returned, the
// others are appended to q, the caller's own run queue, which must have
// room for n-1 more. Writing the ring under the lock saves moving each
// task through an intermediate list.
func (q *injectQueue) popInto(n int, dst *localQueue) *core.Task {
	q.mu.Lock()
	t := q.list.Pop()
	if t != nil && n > 1 {
		// Our own tail (the caller owns dst).
		tail := dst.tail.Load()
		for k := 1; k < n; k++ {
			x := q.list.Pop()
			if x == nil {
				break
			}
			dst.buf[tail&queueMask] = x
			tail++
		}
		// Publishes the tasks to dst's thieves (as in localQueue.push).
		dst.tail.Store(tail)
	}
	q.n.Store(int64(q.list.Len()))
	q.mu.Unlock()
	return t
}

// isEmpty reports whether the queue looked empty, without the lock.
func (q *injectQueue) isEmpty() bool { return q.n.Load() == 0 }

// len returns the queue's length, without the lock (a snapshot).
func (q *injectQueue) len() int { return int(q.n.Load()) }

// close stops the queue from accepting tasks and reports whether this call
// closed it.
func (q *injectQueue) close() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	q.closed = true
	return true
}

// drain moves every queued task into into.
func (q *injectQueue) drain(into *core.TaskQueue) {
	q.mu.Lock()
	into.PushAll(&q.list)
	q.n.Store(0)
	q.mu.Unlock()
}

// remoteCount returns how many tasks were scheduled from outside the
// workers.
func (q *injectQueue) remoteCount() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.remote
}
