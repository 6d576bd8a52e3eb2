package percore

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// globalQueue is the pool-wide queue: remote spawns, spawns that leave a
// busy worker, wakes whose owner can no longer take them, and the newest
// half of full run queues. An intrusive FIFO (linked through the tasks, so
// queueing allocates nothing) under one mutex, with its length mirrored in
// an atomic.
//
// Workers read the mirror to decide whether there is anything to take, so
// the common answer, zero, costs no lock; a nonzero answer may be stale by
// the time the lock is held. The mirror is stored only under the lock, so
// its stores follow the queue's own order and a stale length never
// overwrites a newer one. A take stores it after publishing the tasks it
// moved into the run queue, so a worker that reads the length a take left
// also sees those tasks.
//
//	push   lock, refuse if closed, append, store the length, unlock,
//	       then notify (idle)
//	take   load the length (zero: done), lock, move a share into the run
//	       queue, store the length, unlock
//	close  lock, refuse later pushes, store zero, take the rest, unlock,
//	       shut down what was taken
type globalQueue struct {
	mu     sync.Mutex
	list   core.TaskQueue
	closed bool
	// n mirrors list.Len(), stored under mu; see the type comment.
	n atomic.Int64
	// workers is the pool size, the divisor of a take's share.
	workers int
}

// push queues t and reports true, or reports false once the queue is
// closed, leaving t to the caller.
func (g *globalQueue) push(t *core.Task) bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.list.Push(t)
	g.n.Store(int64(g.list.Len()))
	g.mu.Unlock()
	return true
}

// pushAll queues every task of b in order under one lock and empties b, or
// reports false, leaving b untouched, once the queue is closed.
func (g *globalQueue) pushAll(b *core.TaskQueue) bool {
	g.mu.Lock()
	if g.closed {
		g.mu.Unlock()
		return false
	}
	g.list.PushAll(b)
	g.n.Store(int64(g.list.Len()))
	g.mu.Unlock()
	return true
}

// isEmpty reports whether the mirror reads zero (no lock).
func (g *globalQueue) isEmpty() bool { return g.n.Load() == 0 }

// len returns the mirrored length (no lock, a snapshot).
func (g *globalQueue) len() int { return int(g.n.Load()) }

// take moves a share of the queue: one task more than an even split between
// the workers (so a lone task still moves and a burst spreads over the
// workers that look), no more than what is left. It returns the oldest,
// which the caller runs next, and queues the rest at the tail of rq, the
// caller's own run queue: no more than rq has room for and no more than
// fills it to half, so a take into a run queue already half full returns
// only the oldest. Tasks a take queues thus land in the oldest half of rq,
// which an overflow keeps, so none is sent back before it has run; and
// the work under the lock is bounded by half a run queue plus one.
func (g *globalQueue) take(rq *runQueue) *core.Task {
	if g.isEmpty() {
		return nil
	}
	g.mu.Lock()
	n := g.list.Len()
	if n == 0 {
		g.mu.Unlock()
		return nil
	}
	share := min(n/g.workers+1, n)
	// The room read here only grows before pushFrom fills it: only the
	// caller pushes into rq.
	admitted := min(rq.room(), max(half-rq.len(), 0))
	count := min(share, admitted+1)
	first := g.list.Pop()
	if count > 1 {
		rq.pushFrom(&g.list, count-1)
	}
	g.n.Store(int64(g.list.Len()))
	g.mu.Unlock()
	return first
}

// pop removes the oldest task, or returns nil (tests).
func (g *globalQueue) pop() *core.Task {
	if g.isEmpty() {
		return nil
	}
	g.mu.Lock()
	t := g.list.Pop()
	g.n.Store(int64(g.list.Len()))
	g.mu.Unlock()
	return t
}

// close refuses later pushes and returns what was queued. It reports
// whether this call closed the queue.
func (g *globalQueue) close() (rest core.TaskQueue, first bool) {
	g.mu.Lock()
	first = !g.closed
	g.closed = true
	rest.PushAll(&g.list)
	g.n.Store(0)
	g.mu.Unlock()
	return rest, first
}

// isClosed reports whether close has run.
func (g *globalQueue) isClosed() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.closed
}

// shutdownAll shuts down and drops every task of b.
func shutdownAll(b *core.TaskQueue) {
	for t := b.Pop(); t != nil; t = b.Pop() {
		t.Shutdown()
	}
}
