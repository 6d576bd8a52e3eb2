package sema

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// Locked is the same FIFO batch semaphore as [Sema] for an owner that
// already holds a mutex around every operation on it: a bounded channel
// checks its capacity and appends a message in one critical section, and
// takes a message and hands its slot to the next sender in another. Its
// state is plain fields guarded by that mutex, so it costs no atomic
// operation of its own. Every method must be called with the owner's mutex
// held; wakers are returned in a [waitq.WakeList] for the owner to wake
// after unlocking.
//
// The fairness and cancellation rules are those of Sema: strict FIFO, a
// head waiter keeps partial grants, a dropped waiter hands on what it got.
type Locked struct {
	permits int64
	closed  bool
	waiters waitq.List[LockedWaiter]
	// queued counts the waiters in the list, so that the hot paths test
	// for waiters with a field load (and stay inlinable).
	queued int
}

// Init sets the permit count before the semaphore is shared.
func (s *Locked) Init(permits int64) {
	checkCount(permits)
	s.permits = permits
}

// Available returns the permits that can be acquired at once.
func (s *Locked) Available() int64 { return s.permits }

// IsClosed reports whether Close was called.
func (s *Locked) IsClosed() bool { return s.closed }

// HasWaiters reports whether acquires are queued.
func (s *Locked) HasWaiters() bool { return s.queued != 0 }

// TryAcquire takes n permits if they are available and nobody is queued.
func (s *Locked) TryAcquire(n int64) error {
	switch {
	case s.closed:
		return ErrClosed
	case n == 0:
		return nil
	case s.queued != 0 || s.permits < n:
		return ErrNoPermits
	}
	s.permits -= n
	return nil
}

// ReleaseOne adds one permit and returns the waker of the waiter it
// completed, if any: the common case of a channel receive, without a wake
// list. The caller returns a permit it took, so the count cannot overflow.
func (s *Locked) ReleaseOne() core.Waker {
	if s.ReleaseOneFast() {
		return nil
	}
	return s.ReleaseOneSlow()
}

// ReleaseOneFast is ReleaseOne's common path, small enough to be inlined:
// if nobody waits it adds the permit and reports true; otherwise it does
// nothing and the caller calls ReleaseOneSlow.
func (s *Locked) ReleaseOneFast() bool {
	if s.queued != 0 {
		return false
	}
	s.permits++
	return true
}

// ReleaseOneSlow is ReleaseOne when waiters are queued.
func (s *Locked) ReleaseOneSlow() core.Waker {
	w := s.waiters.Front()
	if w.remaining > 1 {
		w.remaining--
		return nil
	}
	return s.grant(w)
}

// grant completes the head waiter w and returns its waker.
func (s *Locked) grant(w *LockedWaiter) core.Waker {
	w.node.Unlink()
	s.queued--
	w.remaining = 0
	wk := w.waker
	w.waker = nil
	return wk
}

// Release adds n permits, completing waiters from the head of the queue,
// and collects their wakers in wl. If wl fills up it stops and returns the
// permits it has not handed out yet; the caller unlocks, wakes wl, locks
// again and calls Release with the rest. It returns 0 when done.
func (s *Locked) Release(n int64, wl *waitq.WakeList) int64 {
	checkCount(n)
	for n > 0 {
		w := s.waiters.Front()
		if w == nil {
			if s.permits+n > MaxPermits {
				panic("weft/sync: permit count overflow")
			}
			s.permits += n
			return 0
		}
		if w.remaining > n {
			w.remaining -= n
			return 0
		}
		n -= w.remaining
		if !wl.Push(s.grant(w)) {
			return n
		}
	}
	return 0
}

// Close makes every queued and later acquire fail with ErrClosed. It wakes
// the queued waiters through wl; if wl fills up it returns true and the
// caller unlocks, wakes wl, locks again and calls Close again.
func (s *Locked) Close(wl *waitq.WakeList) (more bool) {
	s.closed = true
	for {
		w := s.waiters.PopFront()
		if w == nil {
			return false
		}
		s.queued--
		wk := w.waker
		w.waker = nil
		if !wl.Push(wk) {
			return s.queued != 0
		}
	}
}

// LockedWaiter is one acquire on a [Locked] semaphore. Embed it in a
// future; it must not be copied after its first poll. All its methods are
// called with the owner's mutex held.
type LockedWaiter struct {
	node      waitq.Node[LockedWaiter]
	waker     core.Waker
	remaining int64
	needed    int64
	sem       *Locked
	phase     phase
}

// Reset prepares w to acquire n permits from s. It panics if w is queued.
// Reset itself needs no lock: a waiter that is not queued is its owner's.
func (w *LockedWaiter) Reset(s *Locked, n int64) {
	if w.phase == phaseQueued {
		panic("weft/sync: future reused while it is still waiting")
	}
	checkCount(n)
	w.sem = s
	w.needed = n
	w.remaining = 0
	w.waker = nil
	w.phase = phaseIdle
}

// Pending reports whether w is queued.
func (w *LockedWaiter) Pending() bool { return w.phase == phaseQueued }

// Grab is the fast path of a first Poll, small enough to be inlined: it
// takes the permits and completes w if they are available at once and
// nobody is queued, and reports whether it did. When it reports false,
// Poll does the rest.
func (w *LockedWaiter) Grab() bool {
	s := w.sem
	if w.phase != phaseIdle || s.closed || s.permits < w.needed || s.queued != 0 {
		return false
	}
	s.permits -= w.needed
	w.phase = phaseDone
	return true
}

// Poll tries to acquire the permits, as [Waiter.Poll].
func (w *LockedWaiter) Poll(cx *core.Context) (bool, error) {
	s := w.sem
	switch w.phase {
	case phaseIdle:
		if s.closed {
			w.phase = phaseDone
			return true, ErrClosed
		}
		if w.needed == 0 || (s.queued == 0 && s.permits >= w.needed) {
			s.permits -= w.needed
			w.phase = phaseDone
			return true, nil
		}
		// Queue behind everyone with what is available (nothing when
		// others are queued: released permits went to them).
		w.remaining = w.needed - s.permits
		s.permits = 0
		w.waker = cx.Waker()
		s.waiters.PushBack(&w.node, w)
		s.queued++
		w.phase = phaseQueued
		return false, nil
	case phaseQueued:
		if w.remaining == 0 {
			w.phase = phaseDone
			return true, nil
		}
		if s.closed {
			// Close unlinked us; give back what we were given.
			w.phase = phaseDone
			if got := w.needed - w.remaining; got > 0 {
				s.permits += got // no waiters remain on a closed semaphore
			}
			return true, ErrClosed
		}
		w.waker = cx.Waker()
		return false, nil
	case phaseDropped:
		panic("weft/sync: future polled after Drop")
	default:
		panic("weft/sync: future polled after it completed")
	}
}

// Drop abandons the acquire, as [Waiter.Drop]. It returns the permits the
// waiter had been given, which the caller must pass to Release (they may
// complete the next waiters); it returns 0 if there are none.
func (w *LockedWaiter) Drop() int64 {
	switch w.phase {
	case phaseIdle:
		w.phase = phaseDropped
		return 0
	case phaseQueued:
		w.phase = phaseDropped
		if w.node.Unlink() {
			w.sem.queued--
		}
		w.waker = nil
		return w.needed - w.remaining
	}
	return 0
}
