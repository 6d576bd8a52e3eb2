package wsync

import (
	gosync "sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// Notify wakes tasks that wait for an event, without carrying data. It is
// the building block for conditions a task checks itself ("a new item is
// queued", "shut down now").
//
//   - [Notify.NotifyOne] wakes the oldest waiter. If nobody waits it stores
//     a single permit instead, which the next [Notify.Notified] future
//     consumes at its first poll; several NotifyOne calls with nobody
//     waiting still store one permit.
//   - [Notify.NotifyWaiters] wakes every waiter that exists at the time of
//     the call, and stores nothing: a later waiter is unaffected. A Notified
//     future counts as existing from the moment Notified returns, not from
//     its first poll, so the pattern "create the future, check the
//     condition, then wait" cannot miss a NotifyWaiters in between.
//
// The zero value is ready to use. A Notify must not be copied after first
// use.
type Notify struct {
	// state holds the permit/waiting state in its low two bits and, above
	// them, the number of NotifyWaiters calls so far.
	state   atomic.Uint64
	mu      gosync.Mutex
	waiters waitq.List[notifyWaiter] // guarded by mu
}

// Low bits of Notify.state. WAITING is entered and left only under mu;
// EMPTY and NOTIFIED also change without the lock (a NotifyOne storing a
// permit, a first poll consuming it), always by compare-and-swap.
const (
	notifyEmpty    uint64 = 0 // no waiter, no permit
	notifyWaiting  uint64 = 1 // the waiter list is not empty
	notifyNotified uint64 = 2 // a permit is stored
	notifyMask     uint64 = 3
	notifyCallUnit uint64 = 4 // one NotifyWaiters call in the high bits
)

func notifyCalls(s uint64) uint64 { return s >> 2 }

// How a waiter was released; stored atomically by the notifier after it
// unlinked the waiter.
const (
	notifiedNone uint32 = iota
	notifiedOne
	notifiedAll
)

type notifyWaiter struct {
	node  waitq.Node[notifyWaiter]
	waker core.Waker // guarded by Notify.mu
	// notified is written by the notifier under mu, after unlinking the
	// waiter and taking its waker, and read by the owner without the lock.
	notified atomic.Uint32
}

// Notified returns a future that resolves when the Notify is notified: by
// a stored permit, by a NotifyOne that picks it, or by a NotifyWaiters
// called after this call returned.
func (n *Notify) Notified() *NotifiedFuture { return n.NotifiedInto(new(NotifiedFuture)) }

// NotifiedInto is [Notify.Notified] without an allocation: it starts the
// wait in f, which must not be waiting, and returns f.
func (n *Notify) NotifiedInto(f *NotifiedFuture) *NotifiedFuture {
	if f.phase == waitQueued {
		panic("weft/sync: NotifiedFuture reused while it is still waiting")
	}
	f.n = n
	f.calls = notifyCalls(n.state.Load())
	f.phase = waitIdle
	f.w.waker = nil
	f.w.notified.Store(notifiedNone)
	return f
}

// NotifyOne wakes the oldest waiter, or stores a permit for the next one if
// nobody waits. It may be called from any goroutine; inside a poll prefer
// [Notify.NotifyOneFrom].
func (n *Notify) NotifyOne() { n.NotifyOneFrom(nil) }

// NotifyOneFrom is [Notify.NotifyOne] called from inside a poll with that
// poll's Context: the task it wakes is scheduled on the calling worker.
func (n *Notify) NotifyOneFrom(cx *core.Context) {
	cur := n.state.Load()
	for cur&notifyMask != notifyWaiting {
		// Nobody waits: store the permit (idempotent).
		if n.state.CompareAndSwap(cur, cur&^notifyMask|notifyNotified) {
			return
		}
		cur = n.state.Load()
	}
	n.mu.Lock()
	w := n.notifyOneLocked()
	n.mu.Unlock()
	waitq.Wake(cx, w)
}

// notifyOneLocked hands one notification to the oldest waiter, or stores a
// permit, and returns the waker to wake after unlocking.
func (n *Notify) notifyOneLocked() core.Waker {
	for {
		cur := n.state.Load()
		if cur&notifyMask != notifyWaiting {
			if n.state.CompareAndSwap(cur, cur&^notifyMask|notifyNotified) {
				return nil
			}
			continue
		}
		w := n.waiters.PopFront()
		wk := w.waker
		w.waker = nil
		w.notified.Store(notifiedOne)
		if n.waiters.Empty() {
			n.setLowLocked(notifyEmpty)
		}
		return wk
	}
}

// setLowLocked sets the low bits to v, keeping the call count. Called with
// mu held.
func (n *Notify) setLowLocked(v uint64) {
	for {
		cur := n.state.Load()
		if n.state.CompareAndSwap(cur, cur&^notifyMask|v) {
			return
		}
	}
}

// NotifyWaiters wakes every task waiting at the time of the call,
// including Notified futures created but not yet polled. It stores no
// permit. It may be called from any goroutine.
func (n *Notify) NotifyWaiters() { n.NotifyWaitersFrom(nil) }

// NotifyWaitersFrom is [Notify.NotifyWaiters] called from inside a poll
// with that poll's Context.
func (n *Notify) NotifyWaitersFrom(cx *core.Context) {
	n.mu.Lock()
	for {
		cur := n.state.Load()
		next := cur + notifyCallUnit
		if cur&notifyMask == notifyWaiting {
			next = next&^notifyMask | notifyEmpty
		}
		if n.state.CompareAndSwap(cur, next) {
			break
		}
	}
	if n.waiters.Empty() {
		n.mu.Unlock()
		return
	}
	// Move the current waiters aside so that waiters arriving while the
	// batches are woken (they belong to the next round) are not touched.
	taken := new(waitq.List[notifyWaiter])
	n.waiters.TakeAll(taken)
	var wl waitq.WakeList
	for {
		w := taken.PopFront()
		if w == nil {
			break
		}
		wk := w.waker
		w.waker = nil
		w.notified.Store(notifiedAll)
		if !wl.Push(wk) {
			n.mu.Unlock()
			wl.WakeAll(cx)
			n.mu.Lock()
		}
	}
	n.mu.Unlock()
	wl.WakeAll(cx)
}

// Phases of the waiting futures of this package; only the owner reads or
// writes them.
const (
	waitIdle    uint8 = iota // started, not yet polled
	waitQueued               // polled, in a waiter list or just released
	waitDone                 // reported ready
	waitDropped              // dropped
)

// NotifiedFuture is the future of [Notify.Notified]: a [core.Future] of
// [core.Unit] and a [core.Dropper]. Its zero value is ready for
// [Notify.NotifiedInto]. It must not be copied once polled.
type NotifiedFuture struct {
	w     notifyWaiter
	n     *Notify
	calls uint64 // NotifyWaiters calls seen when the future was created
	phase uint8
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *NotifiedFuture) Poll(cx *core.Context) (core.Unit, bool) {
	switch f.phase {
	case waitDone:
		panic("weft/sync: NotifiedFuture polled after it completed")
	case waitDropped:
		panic("weft/sync: NotifiedFuture polled after Drop")
	}
	if !cx.Proceed() {
		return core.Unit{}, false
	}
	if f.phase == waitIdle {
		return f.first(cx)
	}
	// Pairs with the store in the notifier: it unlinked us before.
	if f.w.notified.Load() != notifiedNone {
		f.phase = waitDone
		return core.Unit{}, true
	}
	n := f.n
	n.mu.Lock()
	if f.w.notified.Load() != notifiedNone || notifyCalls(n.state.Load()) != f.calls {
		// Notified, or a NotifyWaiters has taken us aside and not reached
		// us yet: leave its private list and complete.
		f.w.node.Unlink()
		f.w.waker = nil
		n.mu.Unlock()
		f.phase = waitDone
		return core.Unit{}, true
	}
	f.w.waker = cx.Waker()
	n.mu.Unlock()
	return core.Unit{}, false
}

func (f *NotifiedFuture) first(cx *core.Context) (core.Unit, bool) {
	n := f.n
	cur := n.state.Load()
	for {
		if notifyCalls(cur) != f.calls {
			f.phase = waitDone
			return core.Unit{}, true
		}
		if cur&notifyMask != notifyNotified {
			break
		}
		if n.state.CompareAndSwap(cur, cur&^notifyMask|notifyEmpty) {
			f.phase = waitDone
			return core.Unit{}, true
		}
		cur = n.state.Load()
	}
	n.mu.Lock()
	for {
		cur = n.state.Load()
		if notifyCalls(cur) != f.calls {
			n.mu.Unlock()
			f.phase = waitDone
			return core.Unit{}, true
		}
		low := cur & notifyMask
		if low == notifyNotified {
			if n.state.CompareAndSwap(cur, cur&^notifyMask|notifyEmpty) {
				n.mu.Unlock()
				f.phase = waitDone
				return core.Unit{}, true
			}
			continue
		}
		if low == notifyWaiting || n.state.CompareAndSwap(cur, cur&^notifyMask|notifyWaiting) {
			break
		}
	}
	f.w.waker = cx.Waker()
	n.waiters.PushBack(&f.w.node, &f.w)
	f.phase = waitQueued
	n.mu.Unlock()
	return core.Unit{}, false
}

// Drop implements [core.Dropper]. A waiting future leaves the list. If a
// NotifyOne had already chosen it, the notification is passed on to the
// next waiter (or stored as the permit), so it is never lost.
func (f *NotifiedFuture) Drop() {
	if f.phase != waitQueued {
		if f.phase == waitIdle {
			f.phase = waitDropped
		}
		return
	}
	f.phase = waitDropped
	n := f.n
	n.mu.Lock()
	if f.w.node.Unlink() && n.waiters.Empty() && n.state.Load()&notifyMask == notifyWaiting {
		n.setLowLocked(notifyEmpty)
	}
	f.w.waker = nil
	var wk core.Waker
	if f.w.notified.Load() == notifiedOne {
		wk = n.notifyOneLocked()
	}
	n.mu.Unlock()
	waitq.Wake(nil, wk)
}
