package workstealing

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// Local run queue geometry.
const (
	// queueCapacity is the number of slots of a worker's run queue. A
	// power of two, so an index maps to its slot with a mask.
	queueCapacity = 256
	queueMask     = queueCapacity - 1
	// queueHalf is what an overflow moves out, the most a steal takes,
	// and the most a worker pulls from the global queue at once.
	queueHalf = queueCapacity / 2
)

// localQueue is a worker's run queue: a ring of queueCapacity task
// pointers with one owner and any number of thieves, and no lock.
//
// # Indices
//
// Three free-running 32-bit indices count positions; a position maps to
// the slot pos&queueMask. Because they are wider than the ring they never
// need resetting, a full ring (tail-steal == capacity) is told from an
// empty one (tail == real), and an index that went round the ring once is
// never mistaken for itself (no ABA within 2^32 operations).
//
//	head = steal<<32 | real    one atomic word, so both move together
//	tail                       written by the owner only
//
//	          steal        real                     tail
//	            |  claimed   |   queued (poppable)    |  free ...
//	  ----------+------------+------------------------+---------------
//
// real is the next position the owner pops. steal trails real while a
// thief copies the positions [steal, real) it claimed; steal == real means
// no thief is active. A slot is free for the owner to write only when it
// is outside [steal, tail), which is why the owner measures fullness as
// tail-steal, not tail-real.
//
// # Who writes what
//
//   - The owner alone writes tail and the slots at and after tail. It pops
//     by moving real forward one with a CAS on head, so a pop and a claim
//     never take the same position: whichever CAS lands second fails and
//     retries on the new word.
//   - A thief claims by moving real forward n with a CAS that leaves steal
//     where it was, copies the n tasks, then releases the claim with a
//     second CAS that sets steal = real. Only one thief at a time: a thief
//     that sees steal != real gives up at once.
//   - An overflow (the owner pushing into a full ring while no thief is
//     active) claims every position with one CAS, head = tail|tail, takes
//     the newest half out and republishes the oldest half by storing tail
//     (see push).
//
// # Memory ordering
//
// Go's atomics are sequentially consistent, so each pairing below is
// a synchronising store/load pair in the sense of the Go memory model:
//
//   - The owner writes a slot, then stores tail; a thief loads tail, then
//     reads the slot. The slot write happens before the read.
//   - A thief reads its claimed slots, then releases the claim with a CAS
//     on head; the owner loads head (seeing steal move) before it writes
//     those slots again. The read happens before the overwrite.
//
// The slots themselves are plain pointers: every access to a slot is
// ordered by one of these pairs, so there is no data race on them, and
// the race detector agrees. Slots are cleared when their task leaves the
// ring so the ring does not keep finished tasks reachable.
type localQueue struct {
	head atomic.Uint64
	tail atomic.Uint32
	_    [64 - 12]byte // keep the indices off the line of the first slots
	buf  [queueCapacity]*core.Task
}

func pack(steal, real uint32) uint64 { return uint64(steal)<<32 | uint64(real) }

func unpack(h uint64) (steal, real uint32) { return uint32(h >> 32), uint32(h) }

// overflow receives what does not fit in a full run queue: the global
// queue, or a recorder in tests.
type overflow interface {
	// overflowOne queues one task.
	overflowOne(t *core.Task)
	// overflowBatch queues every task of b in order, in one operation, and
	// empties b.
	overflowBatch(b *core.TaskQueue)
}

// pushOutcome says where push put its task.
type pushOutcome uint8

const (
	// pushedLocal: the task went into the ring.
	pushedLocal pushOutcome = iota
	// pushedOverflow: the ring was full; its newest half and the task went
	// to the overflow in one batch.
	pushedOverflow
	// pushedAroundClaim: the ring was full while a thief held a claim;
	// only the task went to the overflow, since the thief is about to
	// free slots and the claimed ones cannot be moved.
	pushedAroundClaim
)

// push appends t at the tail (owner only). When the ring is full it moves
// the newest half plus t to o in one batch; when it is full because a
// thief holds a claim, it sends only t.
//
// Why the newest half: the oldest tasks have waited longest, so they stay
// to run next; and tasks a worker pulls from the global queue land in the
// oldest half (it pulls at most half a ring, into an empty ring), so a
// task is never sent back to the global queue before it was polled once.
func (q *localQueue) push(t *core.Task, o overflow) pushOutcome {
	// Only the owner stores tail, so this load sees its own last store.
	tail := q.tail.Load()
	for {
		// Pairs with a thief's releasing CAS: once steal has moved past
		// a slot, the thief is done reading it.
		steal, real := unpack(q.head.Load())
		if tail-steal < queueCapacity {
			q.buf[tail&queueMask] = t
			// Publishes the slot to thieves (they load tail before
			// reading slots).
			q.tail.Store(tail + 1)
			return pushedLocal
		}
		if steal != real {
			o.overflowOne(t)
			return pushedAroundClaim
		}
		if q.pushOverflow(t, real, tail, o) {
			return pushedOverflow
		}
		// A thief claimed between the load and the CAS; look again.
	}
}

// pushOverflow moves the newest half of a full ring and t to o. It
// fails, touching nothing, if head is no longer head|head.
//
//	before:  head=h real=h             tail=h+256
//	         [ oldest 128 | newest 128 ]
//	CAS:     head = (h+256)|(h+256)    every position claimed; thieves see empty
//	take:    slots of h+128 .. h+255  ->  batch, then t
//	store:   tail = h+256+128          positions h+256 .. h+383 are the very
//	                                   slots of h .. h+127: the oldest half is
//	                                   back, in order, without a copy
func (q *localQueue) pushOverflow(t *core.Task, head, tail uint32, o overflow) bool {
	// Pairs with thieves' loads of head: a thief that loaded the old word
	// fails its claim CAS and reloads, seeing an empty ring until the tail
	// store below.
	if !q.head.CompareAndSwap(pack(head, head), pack(tail, tail)) {
		return false
	}
	var batch core.TaskQueue
	for pos := head + queueHalf; pos != tail; pos++ {
		i := pos & queueMask
		batch.Push(q.buf[i])
		q.buf[i] = nil
	}
	batch.Push(t)
	// Republishes the oldest half (same pairing as in push).
	q.tail.Store(tail + queueHalf)
	o.overflowBatch(&batch)
	return true
}

// pushAll appends every task of b, in order, and empties b (owner only).
// Tasks that fit are published with one tail store per run of free slots;
// when the ring is full, push overflows as usual. It returns how many
// pushes overflowed.
func (q *localQueue) pushAll(b *core.TaskQueue, o overflow) (overflows int) {
	for b.Len() > 0 {
		tail := q.tail.Load()
		// Pairs with a thief's releasing CAS, as in push.
		steal, _ := unpack(q.head.Load())
		room := queueCapacity - int(tail-steal)
		if room == 0 {
			if q.push(b.Pop(), o) != pushedLocal {
				overflows++
			}
			continue
		}
		for n := min(room, b.Len()); n > 0; n-- {
			q.buf[tail&queueMask] = b.Pop()
			tail++
		}
		q.tail.Store(tail)
	}
	return overflows
}

// pop removes the oldest queued task (owner only), or returns nil.
func (q *localQueue) pop() *core.Task {
	// Our own tail; head pairs with the thieves' CASes.
	tail := q.tail.Load()
	head := q.head.Load()
	for {
		steal, real := unpack(head)
		if real == tail {
			return nil
		}
		next := real + 1
		var nh uint64
		if steal == real {
			nh = pack(next, next)
		} else {
			// A thief is copying [steal, real); leave its claim alone.
			nh = pack(steal, next)
		}
		// Pairs with a thief's claim CAS: exactly one of the two moves
		// real past this position.
		if q.head.CompareAndSwap(head, nh) {
			i := real & queueMask
			t := q.buf[i]
			q.buf[i] = nil
			return t
		}
		head = q.head.Load()
	}
}

// stealInto moves half of q's queued tasks, rounded up, into dst (whose
// owner is the caller) and returns the last of them to run now, with the
// number taken. It takes nothing when dst is more than half full (the
// tasks would only overflow again), when another thief holds a claim on
// q, or when q is empty.
func (q *localQueue) stealInto(dst *localQueue) (*core.Task, int) {
	// dst is ours: its tail is our own store; its head may move under
	// its own thieves, which only frees room.
	dstTail := dst.tail.Load()
	dstSteal, _ := unpack(dst.head.Load())
	if dstTail-dstSteal > queueHalf {
		return nil, 0
	}
	n := q.claimInto(dst, dstTail)
	if n == 0 {
		return nil, 0
	}
	// The last task copied runs now; the others become dst's queue.
	n--
	i := (dstTail + n) & queueMask
	t := dst.buf[i]
	dst.buf[i] = nil
	if n > 0 {
		// Publishes the copied tasks to dst's thieves (as in push).
		dst.tail.Store(dstTail + n)
	}
	return t, int(n) + 1
}

// claimInto claims half of q's queue, rounded up, copies it into dst's
// slots from dstTail on (without publishing them), releases the claim, and
// returns how many it copied.
func (q *localQueue) claimInto(dst *localQueue, dstTail uint32) uint32 {
	first, n := q.claim()
	if n == 0 {
		return 0
	}
	for i := uint32(0); i < n; i++ {
		s := (first + i) & queueMask
		d := (dstTail + i) & queueMask
		dst.buf[d] = q.buf[s]
		q.buf[s] = nil
	}
	q.release(first)
	return n
}

// claim is a thief's first step: it moves real forward by half the queue,
// rounded up, leaving steal behind, and returns the first claimed position
// and the count (0 if another thief is active or the queue is empty).
func (q *localQueue) claim() (first, n uint32) {
	head := q.head.Load()
	for {
		steal, real := unpack(head)
		if steal != real {
			return 0, 0
		}
		// Pairs with the owner's tail store: the slots below tail are
		// written.
		tail := q.tail.Load()
		n = tail - real
		n -= n / 2
		if n == 0 {
			return 0, 0
		}
		// Pairs with the owner's pop CAS (see pop).
		if q.head.CompareAndSwap(head, pack(steal, real+n)) {
			return real, n
		}
		head = q.head.Load()
	}
}

// release ends the claim that started at first: steal catches up with
// real, which the owner may have moved meanwhile.
func (q *localQueue) release(first uint32) {
	head := q.head.Load()
	for {
		steal, real := unpack(head)
		if steal != first {
			panic("workstealing: a run queue claim changed hands")
		}
		// Pairs with the owner's head loads in push: after this the
		// claimed slots may be written again.
		if q.head.CompareAndSwap(head, pack(real, real)) {
			return
		}
		head = q.head.Load()
	}
}

// len returns the number of queued tasks, claimed ones excluded. Any
// goroutine may call it; from another goroutine it is a snapshot.
func (q *localQueue) len() int {
	// Both loads pair with the owner's and thieves' stores; from the
	// owner, tail is exact.
	_, real := unpack(q.head.Load())
	return int(q.tail.Load() - real)
}

// isEmpty reports whether no task is queued (a snapshot).
func (q *localQueue) isEmpty() bool { return q.len() == 0 }

// remaining returns how many tasks the owner can push before the ring is
// full, counting claimed slots as taken (owner only).
func (q *localQueue) remaining() int {
	steal, _ := unpack(q.head.Load())
	return queueCapacity - int(q.tail.Load()-steal)
}
