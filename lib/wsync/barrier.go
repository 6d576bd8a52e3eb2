package wsync

import (
	gosync "sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// Barrier lets n tasks wait for each other: the first n-1 Wait futures stay
// pending until the n-th arrives, then all n resolve and the barrier starts
// a new generation. Exactly one of each generation's n waits resolves to
// true (it is the leader: the one that completed the generation).
//
// A task arrives when its Wait future is first polled. A Wait future
// dropped before its generation completes withdraws its arrival, so a
// task that gives up (a timeout, a select) does not count towards n; one
// dropped after the generation completed has nothing to withdraw.
//
// A Barrier must not be copied after first use.
type Barrier struct {
	mu      gosync.Mutex
	n       int
	arrived int
	gen     uint64
	waiters waitq.List[barrierWaiter]
}

type barrierWaiter struct {
	node  waitq.Node[barrierWaiter]
	waker core.Waker // guarded by Barrier.mu
	// released is set by the task completing the generation, under mu,
	// after it unlinked the waiter; the owner reads it without the lock.
	released atomic.Bool
}

// NewBarrier returns a barrier for n tasks. A barrier for zero tasks
// behaves as one for one task: every Wait resolves at once as leader.
func NewBarrier(n int) *Barrier {
	if n < 1 {
		n = 1
	}
	return &Barrier{n: n}
}

// Wait returns a future that resolves when n tasks are waiting, to true for
// exactly one of them.
func (b *Barrier) Wait() *BarrierWaitFuture { return b.WaitInto(new(BarrierWaitFuture)) }

// WaitInto is [Barrier.Wait] without an allocation: it starts the wait in
// f, which must not be waiting, and returns f.
func (b *Barrier) WaitInto(f *BarrierWaitFuture) *BarrierWaitFuture {
	if f.phase == waitQueued {
		panic("weft/sync: BarrierWaitFuture reused while it is still waiting")
	}
	f.b = b
	f.phase = waitIdle
	f.w.waker = nil
	f.w.released.Store(false)
	return f
}

// BarrierWaitFuture is the future of [Barrier.Wait]: a [core.Future] of
// bool (true for the generation's leader) and a [core.Dropper]. Its zero
// value is ready for [Barrier.WaitInto]. It must not be copied once polled.
type BarrierWaitFuture struct {
	w     barrierWaiter
	b     *Barrier
	gen   uint64 // the generation it arrived in
	phase uint8
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *BarrierWaitFuture) Poll(cx *core.Context) (bool, bool) {
	switch f.phase {
	case waitDone:
		panic("weft/sync: BarrierWaitFuture polled after it completed")
	case waitDropped:
		panic("weft/sync: BarrierWaitFuture polled after Drop")
	}
	if !cx.Proceed() {
		return false, false
	}
	b := f.b
	if f.phase == waitQueued {
		// Pairs with the Store of the task that completed the generation,
		// made after it unlinked us.
		if f.w.released.Load() {
			f.phase = waitDone
			return false, true
		}
		b.mu.Lock()
		if f.w.released.Load() || b.gen != f.gen {
			// Released, possibly still on the releaser's private list.
			f.w.node.Unlink()
			f.w.waker = nil
			b.mu.Unlock()
			f.phase = waitDone
			return false, true
		}
		f.w.waker = cx.Waker()
		b.mu.Unlock()
		return false, false
	}
	b.mu.Lock()
	b.arrived++
	if b.arrived < b.n {
		f.gen = b.gen
		f.w.waker = cx.Waker()
		b.waiters.PushBack(&f.w.node, &f.w)
		f.phase = waitQueued
		b.mu.Unlock()
		return false, false
	}
	// The n-th arrival: release the generation.
	b.arrived = 0
	b.gen++
	f.phase = waitDone
	if b.waiters.Empty() {
		b.mu.Unlock()
		return true, true
	}
	taken := new(waitq.List[barrierWaiter])
	b.waiters.TakeAll(taken)
	var wl waitq.WakeList
	for {
		w := taken.PopFront()
		if w == nil {
			break
		}
		wk := w.waker
		w.waker = nil
		w.released.Store(true)
		if !wl.Push(wk) {
			b.mu.Unlock()
			wl.WakeAll(cx)
			b.mu.Lock()
		}
	}
	b.mu.Unlock()
	wl.WakeAll(cx)
	return true, true
}

// Drop implements [core.Dropper]. A wait dropped before its generation
// completed withdraws its arrival.
func (f *BarrierWaitFuture) Drop() {
	if f.phase != waitQueued {
		if f.phase == waitIdle {
			f.phase = waitDropped
		}
		return
	}
	f.phase = waitDropped
	b := f.b
	b.mu.Lock()
	f.w.node.Unlink()
	f.w.waker = nil
	if !f.w.released.Load() && b.gen == f.gen {
		b.arrived--
	}
	b.mu.Unlock()
}
