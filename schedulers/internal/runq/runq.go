// Package runq is the run queue of weft's multi-worker schedulers
// (workstealing and percore): a lock-free ring of Capacity task pointers
// with one owner, the worker that pushes and pops, and any number of
// thieves, other workers that steal half of it when they run dry.
//
// What the two schedulers do differently is a parameter, not a copy: how a
// thief splits a backlog (Split: Tokio's half rounded up for workstealing,
// half rounded down for percore, so that a lone task stays with its
// worker), and whether the queue has thieves at all (SetExclusive, for a
// percore pool of one worker). What a full ring does with its newest half
// is up to the Overflow the owner passes to Push: in both schedulers, the
// global queue.
//
// The owner's operations (Push, PushBatch, PushFrom, Pop, and StealInto
// with the queue as the destination) must only be called by the goroutine
// that owns the queue; StealInto on the queue as the victim, Len, IsEmpty
// and HasStealable may be called by any goroutine.
package runq

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// Ring geometry.
const (
	// Capacity is the number of slots of a run queue. A power of two, so
	// a position maps to its slot with a mask.
	Capacity = 256
	mask     = Capacity - 1
	// Half is what an overflow keeps and moves out, and what a worker's
	// take from the global queue may fill its run queue to (see
	// globalq.Queue.Take), so tasks taken from the global queue land in
	// the half an overflow keeps.
	Half = Capacity / 2
)

// Queue is one worker's run queue: a ring of Capacity task pointers with
// one owner and any number of thieves, and no lock. The zero value is an
// empty queue with thieves allowed.
//
// # Indices
//
// Three free-running 32-bit positions count pushes and pops; position p
// lives in slot p&mask. Because they are wider than the ring they never
// need resetting, a full ring (tail-steal == Capacity) is told from an
// empty one (tail == real), and a position that went round the ring once
// is never mistaken for itself (no ABA within 2^32 operations).
//
//	head = steal<<32 | real    one atomic word, so both move together
//	tail                       stored by the owner only
//
//	          steal        real                     tail
//	            |  claimed   |   queued (poppable)    |  free ...
//	  ----------+------------+------------------------+---------------
//
// real is the next position the owner pops. steal trails real while a
// thief copies the positions [steal, real) it claimed; steal == real means
// no thief is active. The owner may write a slot only outside [steal,
// tail), so a claim keeps its slots, and every slot the owner pops past
// it, out of use until the thief releases it: a run queue its owner has
// emptied can still have no room. That is why the owner measures fullness
// as tail-steal (Room), not tail-real (Len).
//
// # Who writes what
//
//   - The owner alone writes tail and the free slots. It pops by moving
//     real forward one with a CAS on head, so a pop and a claim never take
//     the same position: whichever CAS lands second fails and retries on
//     the new word.
//   - A thief claims by moving real forward n with a CAS that leaves steal
//     where it was, copies the n tasks into its own run queue, then
//     releases the claim with a second CAS that sets steal = real. Only
//     one thief at a time: a thief that sees steal != real gives up at
//     once.
//   - An overflow (the owner pushing into a full ring while no thief is
//     active) claims every position with one CAS, head = tail|tail, takes
//     the newest half out and republishes the oldest half by storing tail
//     (see Push).
//
// # Memory ordering
//
// Go's atomics are sequentially consistent, so each pairing below is a
// synchronising store/load pair in the sense of the Go memory model:
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
//
// # Exclusive queues
//
// A queue without thieves (SetExclusive: the run queue of a pool of one
// worker) pops with a plain store of head instead of a compare-and-swap,
// since nobody else can move it, and a steal from it is a programming
// error that panics.
type Queue struct {
	head      atomic.Uint64
	tail      atomic.Uint32
	exclusive bool
	_         [64 - 13]byte // keep the indices off the line of the first slots
	buf       [Capacity]*core.Task
}

func pack(steal, real uint32) uint64 { return uint64(steal)<<32 | uint64(real) }

func unpack(h uint64) (steal, real uint32) { return uint32(h >> 32), uint32(h) }

// SetExclusive makes q a queue without thieves: Pop no longer needs a
// compare-and-swap, and StealInto from q panics. Call it before q is used.
func (q *Queue) SetExclusive() { q.exclusive = true }

// Exclusive reports whether SetExclusive was called.
func (q *Queue) Exclusive() bool { return q.exclusive }

// Overflow receives what a full run queue cannot keep: the global queue,
// or a recorder in tests.
type Overflow interface {
	// OverflowOne queues one task (or shuts it down, if the receiver can
	// no longer queue anything).
	OverflowOne(t *core.Task)
	// OverflowBatch queues every task of b in order, in one operation (or
	// shuts them down), and empties b.
	OverflowBatch(b *core.TaskQueue)
}

// PushResult says where Push put its task.
type PushResult uint8

const (
	// Queued: the task went into the ring.
	Queued PushResult = iota
	// Overflowed: the ring was full; its newest half and the task went to
	// the overflow in one batch.
	Overflowed
	// OverflowedAroundClaim: the ring was full while a thief held a claim
	// on it; only the task went to the overflow, since the claimed slots
	// cannot move and the thief is about to free them.
	OverflowedAroundClaim
)

// Push appends t at the tail (owner only) and returns where t went and
// the queue's length after the push. When the ring is full it moves the
// newest half plus t to o in one batch, in that order, and keeps the
// oldest half; when it is full because a thief holds a claim, it sends
// only t.
//
// Why the newest half: the oldest tasks have waited longest, so they stay
// to run next; and tasks a worker takes from the global queue land in the
// oldest half (a take fills the queue at most to Half), so a task is
// never sent back to the global queue before it was polled once.
func (q *Queue) Push(t *core.Task, o Overflow) (PushResult, int) {
	// Only the owner stores tail, so this load sees its own last store.
	tail := q.tail.Load()
	for {
		// Pairs with a thief's releasing CAS: once steal has moved past a
		// slot, the thief is done reading it.
		steal, real := unpack(q.head.Load())
		if tail-steal < Capacity {
			q.buf[tail&mask] = t
			// Publishes the slot to thieves (they load tail before reading
			// slots).
			q.tail.Store(tail + 1)
			return Queued, int(tail + 1 - real)
		}
		if steal != real {
			o.OverflowOne(t)
			return OverflowedAroundClaim, int(tail - real)
		}
		if q.overflow(t, real, tail, o) {
			return Overflowed, Half
		}
		// A thief claimed between the load and the CAS; look again.
	}
}

// overflow moves the newest half of a full ring and t to o. It fails,
// touching nothing, if head is no longer head|head.
//
//	before:  head=h real=h             tail=h+256
//	         [ oldest 128 | newest 128 ]
//	CAS:     head = (h+256)|(h+256)    every position claimed; thieves see empty
//	take:    slots of h+128 .. h+255  ->  batch, then t
//	store:   tail = h+256+128          positions h+256 .. h+383 are the very
//	                                   slots of h .. h+127: the oldest half is
//	                                   back, in order, without a copy
func (q *Queue) overflow(t *core.Task, head, tail uint32, o Overflow) bool {
	// Pairs with thieves' loads of head: a thief that loaded the old word
	// fails its claim CAS and reloads, seeing an empty ring until the tail
	// store below.
	if !q.head.CompareAndSwap(pack(head, head), pack(tail, tail)) {
		return false
	}
	var batch core.TaskQueue
	for pos := head + Half; pos != tail; pos++ {
		i := pos & mask
		batch.Push(q.buf[i])
		q.buf[i] = nil
	}
	batch.Push(t)
	// Republishes the oldest half (same pairing as in Push).
	q.tail.Store(tail + Half)
	o.OverflowBatch(&batch)
	return true
}

// PushBatch appends every task of b, in order, and empties b (owner
// only). Tasks that fit are published with one tail store per run of free
// slots; when the ring is full, Push overflows as usual. It returns how
// many pushes overflowed.
func (q *Queue) PushBatch(b *core.TaskQueue, o Overflow) (overflows int) {
	for b.Len() > 0 {
		room := q.Room()
		if room == 0 {
			if res, _ := q.Push(b.Pop(), o); res != Queued {
				overflows++
			}
			continue
		}
		q.PushFrom(b, min(room, b.Len()))
	}
	return overflows
}

// PushFrom appends the next n tasks popped from b (owner only) without
// overflowing: the caller has made sure they fit (n <= Room). They are
// published with one tail store.
func (q *Queue) PushFrom(b *core.TaskQueue, n int) {
	// Our own tail.
	tail := q.tail.Load()
	for ; n > 0; n-- {
		q.buf[tail&mask] = b.Pop()
		tail++
	}
	// Publishes the tasks to thieves (as in Push).
	q.tail.Store(tail)
}

// Pop removes the oldest queued task (owner only), or returns nil.
func (q *Queue) Pop() *core.Task {
	// Our own tail; head pairs with the thieves' CASes.
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
			// A thief is copying [steal, real); leave its claim alone.
			nh = pack(steal, next)
		}
		// Pairs with a thief's claim CAS: exactly one of the two moves
		// real past this position.
		if q.head.CompareAndSwap(head, nh) {
			i := real & mask
			t := q.buf[i]
			q.buf[i] = nil
			return t
		}
		head = q.head.Load()
	}
}

// Split is how a thief divides a victim's backlog.
type Split uint8

const (
	// HalfUp takes half the backlog, rounded up, so a lone task can be
	// stolen (Tokio's rule; workstealing). The thief takes nothing while
	// its own queue is more than half full, since the tasks would only
	// overflow again. Of the tasks taken, the newest is returned to run
	// now and the others are queued, oldest first.
	HalfUp Split = iota
	// HalfDown takes half the backlog, rounded down, so a lone task stays
	// with its worker (percore), and no more than the thief's queue has
	// room for. Of the tasks taken, the oldest is returned to run now and
	// the others are queued after it.
	HalfDown
)

// Min is the smallest backlog from which a steal with s takes something:
// one task for HalfUp, two for HalfDown.
func (s Split) Min() int {
	if s == HalfDown {
		return 2
	}
	return 1
}

// StealInto moves part of q's queued tasks, as s divides them, into dst,
// whose owner is the caller. It returns one of them for the caller to run
// now (which one, s says) and how many it took, that one included. It
// takes nothing when another thief holds a claim on q, when q's backlog
// is below s.Min(), or when dst cannot take them (see Split). It panics
// when q is exclusive.
func (q *Queue) StealInto(dst *Queue, s Split) (*core.Task, int) {
	if q.exclusive {
		panic("runq: steal from an exclusive run queue")
	}
	// dst is ours: its tail is our own store; its head may move under its
	// own thieves, which only frees room.
	dstTail := dst.tail.Load()
	dstSteal, _ := unpack(dst.head.Load())
	used := dstTail - dstSteal
	if (s == HalfUp && used > Half) || used == Capacity {
		return nil, 0
	}
	first, n := q.claim(s, Capacity-used)
	if n == 0 {
		return nil, 0
	}
	// The one to run now: the newest taken for HalfUp, the oldest for
	// HalfDown. The others are copied, in order, to dst's free slots.
	skip := uint32(0)
	if s == HalfUp {
		skip = n - 1
	}
	i := (first + skip) & mask
	run := q.buf[i]
	q.buf[i] = nil
	d := dstTail
	for k := uint32(0); k < n; k++ {
		if k == skip {
			continue
		}
		i := (first + k) & mask
		dst.buf[d&mask] = q.buf[i]
		q.buf[i] = nil
		d++
	}
	q.release(first)
	if d != dstTail {
		// Publishes the copied tasks to dst's thieves (as in Push).
		dst.tail.Store(d)
	}
	return run, int(n)
}

// claim is a thief's first step: it moves real forward by the part of the
// backlog s takes, at most limit, leaving steal behind, and returns the
// first claimed position and the count (0 if another thief is active or
// there is nothing to take).
func (q *Queue) claim(s Split, limit uint32) (first, n uint32) {
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
		if s == HalfDown {
			n /= 2
		} else {
			n -= n / 2
		}
		n = min(n, limit)
		if n == 0 {
			return 0, 0
		}
		// Pairs with the owner's pop CAS (see Pop).
		if q.head.CompareAndSwap(head, pack(steal, real+n)) {
			return real, n
		}
		head = q.head.Load()
	}
}

// release ends the claim that started at first: steal catches up with
// real, which the owner may have moved meanwhile.
func (q *Queue) release(first uint32) {
	head := q.head.Load()
	for {
		steal, real := unpack(head)
		if steal != first {
			panic("runq: a run queue claim changed hands")
		}
		// Pairs with the owner's head loads in Push: after this the
		// claimed slots may be written again.
		if q.head.CompareAndSwap(head, pack(real, real)) {
			return
		}
		head = q.head.Load()
	}
}

// Len returns the number of queued tasks, claimed ones excluded. From the
// owner it is exact, from any other goroutine a snapshot.
func (q *Queue) Len() int {
	// Both loads pair with the owner's and thieves' stores; from the
	// owner, tail is exact.
	_, real := unpack(q.head.Load())
	return int(q.tail.Load() - real)
}

// IsEmpty reports whether no task is queued (a snapshot).
func (q *Queue) IsEmpty() bool { return q.Len() == 0 }

// Room returns how many tasks the owner can push before the ring is full,
// counting a claim's slots, and those popped past it, as taken.
func (q *Queue) Room() int {
	steal, _ := unpack(q.head.Load())
	return Capacity - int(q.tail.Load()-steal)
}

// HasStealable reports whether a steal with s would take something now:
// no claim is held and the backlog is at least s.Min() (a snapshot).
func (q *Queue) HasStealable(s Split) bool {
	steal, real := unpack(q.head.Load())
	return steal == real && int(q.tail.Load()-real) >= s.Min()
}

// Claim is a thief stopped between its two steps: it has claimed tasks of
// a queue and not yet copied them out. Schedulers steal with StealInto;
// tests hold a Claim to check what the owner and the global queue do
// while a thief is active.
type Claim struct {
	q        *Queue
	first, n uint32
}

// HoldClaim claims up to n of q's queued tasks (half the backlog at most,
// rounded up, as a HalfUp thief would) and returns the claim, which holds
// nothing (Len 0) if another claim is held or q is empty.
func (q *Queue) HoldClaim(n int) Claim {
	first, got := q.claim(HalfUp, uint32(n))
	return Claim{q: q, first: first, n: got}
}

// Len returns the number of tasks c claimed.
func (c Claim) Len() int { return int(c.n) }

// Finish copies the claimed tasks out, oldest first, and releases the
// claim (nothing for an empty claim).
func (c Claim) Finish() []*core.Task {
	if c.n == 0 {
		return nil
	}
	out := make([]*core.Task, c.n)
	for i := range out {
		s := (c.first + uint32(i)) & mask
		out[i] = c.q.buf[s]
		c.q.buf[s] = nil
	}
	c.q.release(c.first)
	return out
}
