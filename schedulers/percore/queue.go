package percore

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// Run queue geometry.
const (
	// capacity is the number of slots of a worker's run queue, a power of
	// two so a position maps to its slot with a mask.
	capacity = 256
	mask     = capacity - 1
	// half is what an overflow keeps and what a take from the global queue
	// may fill a run queue to.
	half = capacity / 2
	// stealable is the backlog from which a run queue has something to
	// steal: a steal takes half rounded down, so a lone task stays home.
	stealable = 2
)

// runQueue is one worker's run queue: a ring of capacity task pointers
// with one owner (the worker's goroutine) and, in a pool of more than one
// worker, any number of thieves. No lock.
//
// # Indices
//
// Three free-running 32-bit positions; position p lives in slot p&mask.
//
//	head = steal<<32 | real   one atomic word, so both move together
//	tail                      stored by the owner only
//
//	   steal       real                 tail
//	     | claimed  |  queued (poppable)  |  free ...
//
// real is the next position the owner pops. steal trails real while a
// thief copies the positions [steal, real) it claimed; steal == real means
// no claim. The owner may write a slot only outside [steal, tail), so a
// claim keeps its slots, and every slot the owner pops past it, out of use
// until the thief releases it: a run queue its owner has emptied can still
// have no room (room measures capacity-(tail-steal)).
//
// # Who writes what
//
//   - The owner alone writes tail and the free slots. It pops by moving
//     real one forward with a CAS on head, so a pop and a claim never take
//     the same position.
//   - A thief claims by moving real forward with a CAS that leaves steal
//     behind, copies the claimed tasks into its own run queue, and
//     releases with a second CAS setting steal = real. One thief at a time:
//     one that sees steal != real gives up.
//   - An overflow (a push into a full ring without a claim) claims every
//     position with one CAS, head = tail|tail, moves the newest half out and
//     republishes the oldest half with one tail store.
//
// Go's atomics are sequentially consistent, so these pairs order the plain
// slot accesses: the owner writes a slot then stores tail, a thief loads
// tail then reads the slot; a thief reads its claimed slots then releases
// with a CAS on head, the owner loads head before it writes those slots
// again. The race detector agrees.
//
// # Exclusive queues
//
// A pool of one worker has no thief, so its run queue is exclusive: pops
// store head instead of compare-and-swapping it, and a steal from it is a
// programming error that panics.
type runQueue struct {
	head      atomic.Uint64
	tail      atomic.Uint32
	exclusive bool
	_         [64 - 13]byte // keep the indices off the line of the first slots
	buf       [capacity]*core.Task
}

func pack(steal, real uint32) uint64 { return uint64(steal)<<32 | uint64(real) }

func unpack(h uint64) (steal, real uint32) { return uint32(h >> 32), uint32(h) }

// pushResult says where a push put its task.
type pushResult uint8

const (
	// pushed: the task went into the ring.
	pushed pushResult = iota
	// overflowed: the ring was full; its newest half and the task went to
	// the overflow sink in one batch.
	overflowed
	// claimed: the ring was full while a thief held a claim on it; only the
	// task went to the overflow sink.
	claimed
)

// sink receives what a full run queue cannot keep: the global queue, or a
// recorder in tests. A closed sink shuts the tasks down.
type sink interface {
	// pushOne queues one task, or shuts it down if the sink is closed.
	pushOne(t *core.Task)
	// pushBatch queues every task of b in order in one operation, or shuts
	// them down if the sink is closed, and empties b.
	pushBatch(b *core.TaskQueue)
}

// push appends t (owner only) and returns where it went and the run queue's
// length after the push. A full ring keeps its oldest half and moves its
// newest half and t to o in one batch, in that order, so the oldest tasks,
// which have waited longest, stay to run next; a full ring under a claim
// moves only t, since the claimed slots cannot move and the thief is about
// to free them.
func (q *runQueue) push(t *core.Task, o sink) (pushResult, int) {
	// Only the owner stores tail: this load sees its own last store.
	tail := q.tail.Load()
	for {
		// Pairs with a thief's releasing CAS: once steal has passed a
		// slot, the thief no longer reads it.
		steal, real := unpack(q.head.Load())
		if tail-steal < capacity {
			q.buf[tail&mask] = t
			// Publishes the slot to thieves, which load tail first.
			q.tail.Store(tail + 1)
			return pushed, int(tail + 1 - real)
		}
		if steal != real {
			o.pushOne(t)
			return claimed, int(tail - real)
		}
		if q.overflow(t, real, tail, o) {
			return overflowed, half
		}
		// A thief claimed between the load and the CAS: look again.
	}
}

// overflow moves the newest half of a full ring, then t, to o. It fails
// without touching anything if head is no longer head|head.
//
//	before: head = h|h                  tail = h+256
//	CAS:    head = (h+256)|(h+256)      thieves now see an empty ring
//	move:   positions h+128 .. h+255 -> batch, then t
//	store:  tail = h+384                positions h+256 .. h+383 are the
//	                                    slots of h .. h+127: the oldest
//	                                    half is back, in order, uncopied
func (q *runQueue) overflow(t *core.Task, head, tail uint32, o sink) bool {
	// A thief that loaded the old word fails its claim CAS and reloads,
	// seeing an empty ring until the tail store below.
	if !q.head.CompareAndSwap(pack(head, head), pack(tail, tail)) {
		return false
	}
	var batch core.TaskQueue
	for pos := head + half; pos != tail; pos++ {
		i := pos & mask
		batch.Push(q.buf[i])
		q.buf[i] = nil
	}
	batch.Push(t)
	q.tail.Store(tail + half)
	o.pushBatch(&batch)
	return true
}

// pop removes the oldest queued task (owner only), or returns nil.
func (q *runQueue) pop() *core.Task {
	tail := q.tail.Load()
	if q.exclusive {
		// No thief can move head: a plain store of the owner's own word.
		_, real := unpack(q.head.Load())
		if real == tail {
			return nil
		}
		q.head.Store(pack(real+1, real+1))
		i := real & mask
		t := q.buf[i]
		q.buf[i] = nil
		return t
	}
	head := q.head.Load()
	for {
		steal, real := unpack(head)
		if real == tail {
			return nil
		}
		next := real + 1
		nh := pack(next, next)
		if steal != real {
			// A thief is copying [steal, real): leave its claim alone.
			nh = pack(steal, next)
		}
		// Pairs with a thief's claim CAS: exactly one of them moves real
		// past this position.
		if q.head.CompareAndSwap(head, nh) {
			i := real & mask
			t := q.buf[i]
			q.buf[i] = nil
			return t
		}
		head = q.head.Load()
	}
}

// stealInto moves half of q's queued tasks, rounded down, into dst, whose
// owner is the caller, and returns how many it moved. A lone task stays
// with its worker. It moves nothing when another thief holds a claim on q,
// when q has fewer than two tasks, or when dst has no room (a claim on dst
// can leave an empty dst without room). It panics on an exclusive q.
func (q *runQueue) stealInto(dst *runQueue) int {
	if q.exclusive {
		panic("percore: steal from the exclusive run queue of a one-worker pool")
	}
	// dst is ours: tail is our own store; its head only moves under its
	// own thieves, which frees room.
	dstTail := dst.tail.Load()
	dstSteal, _ := unpack(dst.head.Load())
	room := capacity - (dstTail - dstSteal)
	if room == 0 {
		return 0
	}
	first, n := q.claim(room)
	if n == 0 {
		return 0
	}
	for i := uint32(0); i < n; i++ {
		s := (first + i) & mask
		dst.buf[(dstTail+i)&mask] = q.buf[s]
		q.buf[s] = nil
	}
	q.release(first)
	// Publishes the copies to dst's thieves (as push does).
	dst.tail.Store(dstTail + n)
	return int(n)
}

// claim moves real forward by half the queue, rounded down and at most
// limit, leaving steal behind, and returns the first claimed position and
// the count (0 when another claim is held or there is less than two).
func (q *runQueue) claim(limit uint32) (first, n uint32) {
	head := q.head.Load()
	for {
		steal, real := unpack(head)
		if steal != real {
			return 0, 0
		}
		// Pairs with the owner's tail store: the slots below tail are
		// written.
		tail := q.tail.Load()
		n = min((tail-real)/2, limit)
		if n == 0 {
			return 0, 0
		}
		// Pairs with the owner's pop CAS.
		if q.head.CompareAndSwap(head, pack(steal, real+n)) {
			return real, n
		}
		head = q.head.Load()
	}
}

// release ends the claim that started at first: steal catches up with
// real, which the owner may have moved meanwhile.
func (q *runQueue) release(first uint32) {
	head := q.head.Load()
	for {
		steal, real := unpack(head)
		if steal != first {
			panic("percore: a run queue claim changed hands")
		}
		// Pairs with the owner's head loads in push: the claimed slots
		// may be written again after this.
		if q.head.CompareAndSwap(head, pack(real, real)) {
			return
		}
		head = q.head.Load()
	}
}

// len returns the number of queued tasks, claimed ones excluded. From the
// owner it is exact, from anyone else a snapshot.
func (q *runQueue) len() int {
	_, real := unpack(q.head.Load())
	return int(q.tail.Load() - real)
}

// room returns how many tasks the owner can push before the ring is full,
// counting a claim's slots, and those popped past it, as taken.
func (q *runQueue) room() int {
	steal, _ := unpack(q.head.Load())
	return capacity - int(q.tail.Load()-steal)
}

// isStealable reports whether a steal would take something now: a backlog
// of at least two and no claim held (a snapshot).
func (q *runQueue) isStealable() bool {
	steal, real := unpack(q.head.Load())
	return steal == real && q.tail.Load()-real >= stealable
}

// pushFrom appends the next n tasks popped from b (owner only) without
// overflowing: the caller has made sure they fit. Published with one tail store.
func (q *runQueue) pushFrom(b *core.TaskQueue, n int) {
	tail := q.tail.Load()
	for ; n > 0; n-- {
		q.buf[tail&mask] = b.Pop()
		tail++
	}
	q.tail.Store(tail)
}
