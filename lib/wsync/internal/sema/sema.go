// Package sema is weft's batch semaphore, the engine under sync.Semaphore,
// sync.Mutex, sync.RWMutex, sync.OnceCell and the capacity of bounded mpsc
// channels (Tokio's batch_semaphore).
//
// # State word
//
// One atomic word holds the available permits and three flags:
//
//	bit 0      CLOSED   acquires fail from now on
//	bit 1      WAITERS  the waiter queue is not empty
//	bit 2      INIT     the word was initialised (see Ensure)
//	bits 3-63  permits  available permits, at most MaxPermits
//
// # Fairness
//
// The queue is strictly FIFO, and a request for n permits is served as a
// unit: released permits go to the head waiter first, even when it needs
// more than are available (it keeps what it got and stays at the head), so
// a large request at the head blocks smaller ones behind it and nobody
// starves. The lock-free fast paths keep this: while WAITERS is set the
// available count is zero (every released permit was handed to a waiter),
// and neither a try-acquire nor the first poll of an acquire may take
// permits then. A release sees WAITERS and takes the slow path.
//
// # Waiters and the lock
//
// The queue and every queued [Waiter]'s waker are guarded by the mutex. A
// waiter's remaining count is written under the mutex and read without it
// by the waiter's owner: the granter unlinks the waiter and takes its waker
// first, then stores remaining = 0 (release); an owner that loads 0
// (acquire) knows the waiter is out of the queue and may be reused. Wakers
// are collected under the lock and woken after it is released.
//
// # Cancellation
//
// Dropping a queued waiter unlinks it in O(1) and returns the permits it
// was already given, partially or fully, through the normal release path,
// so they go to the next waiters: a waiter dropped at the moment it is
// granted passes its permits on and nothing is lost.
package sema

import (
	"errors"
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

const (
	flagClosed  uint64 = 1 << 0
	flagWaiters uint64 = 1 << 1
	flagInit    uint64 = 1 << 2
	flagMask           = flagClosed | flagWaiters | flagInit
	shift              = 3
)

// MaxPermits is the largest number of permits a semaphore can hold.
const MaxPermits = int64(^uint64(0) >> shift)

// ErrClosed is returned by acquires on a closed semaphore.
var ErrClosed = errors.New("weft/sync: semaphore closed")

// ErrNoPermits is returned by TryAcquire when the permits are not available
// at once (or other waiters are queued ahead).
var ErrNoPermits = errors.New("weft/sync: no permits available")

// Sema is the batch semaphore. Its zero value has no permits.
type Sema struct {
	state   atomic.Uint64
	mu      sync.Mutex
	waiters waitq.List[Waiter] // guarded by mu
}

func permitsOf(w uint64) int64 { return int64(w >> shift) }

// Init sets the permit count of a semaphore that is not yet shared.
func (s *Sema) Init(permits int64) {
	checkCount(permits)
	s.state.Store(flagInit | uint64(permits)<<shift)
}

// Ensure gives a zero-value semaphore its initial permits the first time
// it is used, so that types embedding one (a zero Mutex is unlocked) need
// no constructor. Every operation of such a type calls Ensure first; it
// costs one atomic load once initialised.
func (s *Sema) Ensure(permits int64) {
	if s.state.Load()&flagInit == 0 {
		s.state.CompareAndSwap(0, flagInit|uint64(permits)<<shift)
	}
}

func checkCount(n int64) {
	if n < 0 || n > MaxPermits {
		panic("weft/sync: permit count out of range")
	}
}

// Available returns the permits that can be acquired at once.
func (s *Sema) Available() int64 { return permitsOf(s.state.Load()) }

// IsClosed reports whether Close was called.
func (s *Sema) IsClosed() bool { return s.state.Load()&flagClosed != 0 }

// TryAcquire takes n permits if they are available now and nobody is
// queued; it never waits.
func (s *Sema) TryAcquire(n int64) error {
	checkCount(n)
	cur := s.state.Load()
	for {
		if cur&flagClosed != 0 {
			return ErrClosed
		}
		if n == 0 {
			return nil
		}
		if cur&flagWaiters != 0 || permitsOf(cur) < n {
			return ErrNoPermits
		}
		if s.state.CompareAndSwap(cur, cur-uint64(n)<<shift) {
			return nil
		}
		cur = s.state.Load()
	}
}

// Forget removes up to n available permits without waking anyone and
// returns how many it removed (Tokio's forget_permits).
func (s *Sema) Forget(n int64) int64 {
	checkCount(n)
	cur := s.state.Load()
	for {
		take := min(n, permitsOf(cur))
		if take == 0 {
			return 0
		}
		if s.state.CompareAndSwap(cur, cur-uint64(take)<<shift) {
			return take
		}
		cur = s.state.Load()
	}
}

// Release adds n permits, handing them to queued waiters first. cx is the
// Context of the poll the caller is in, or nil outside a poll; it decides
// how woken tasks are scheduled (see waitq.Wake).
func (s *Sema) Release(n int64, cx *core.Context) {
	if n == 0 {
		return
	}
	checkCount(n)
	cur := s.state.Load()
	for cur&flagWaiters == 0 {
		if permitsOf(cur)+n > MaxPermits || permitsOf(cur)+n < 0 {
			panic("weft/sync: permit count overflow")
		}
		// Pairs with the acquire loads of every later acquirer: data
		// written before the release is visible to whoever takes these
		// permits.
		if s.state.CompareAndSwap(cur, cur+uint64(n)<<shift) {
			return
		}
		cur = s.state.Load()
	}
	s.mu.Lock()
	s.addLocked(n, cx)
}

// addLocked hands n permits to the waiters at the head of the queue and
// adds what is left to the state word. It is called with mu held and
// returns with it released, after waking whoever it granted.
func (s *Sema) addLocked(n int64, cx *core.Context) {
	var wl waitq.WakeList
	rem := n
	for {
		full := false
		for rem > 0 && !full {
			w := s.waiters.Front()
			if w == nil {
				break
			}
			r := w.remaining.Load()
			if r > rem {
				// The head keeps what it got and stays at the head.
				w.remaining.Store(r - rem)
				rem = 0
				break
			}
			rem -= r
			w.node.Unlink()
			wk := w.waker
			w.waker = nil
			// After this store the owner may reuse w: touch it no more.
			w.remaining.Store(0)
			full = !wl.Push(wk)
		}
		if s.waiters.Empty() {
			s.clearWaitersAndAdd(rem)
			rem = 0
		}
		s.mu.Unlock()
		wl.WakeAll(cx)
		if rem == 0 {
			return
		}
		// The wake list filled up: wake that batch without the lock, then
		// serve the next waiters.
		s.mu.Lock()
	}
}

// clearWaitersAndAdd is called with mu held and the queue empty: it clears
// WAITERS and adds n permits.
func (s *Sema) clearWaitersAndAdd(n int64) {
	for {
		cur := s.state.Load()
		if permitsOf(cur)+n > MaxPermits {
			panic("weft/sync: permit count overflow")
		}
		next := (cur &^ flagWaiters) + uint64(n)<<shift
		if s.state.CompareAndSwap(cur, next) {
			return
		}
	}
}

// Close makes every queued and every later acquire, and TryAcquire, fail
// with ErrClosed. Queued waiters are woken; those that already held part of
// their permits give them back when they observe the close. Release still
// adds permits, so a closed semaphore's Available count stays meaningful.
func (s *Sema) Close() { s.CloseFrom(nil) }

// CloseFrom is Close called from inside a poll with that poll's Context:
// the waiters it wakes are scheduled on the calling worker.
func (s *Sema) CloseFrom(cx *core.Context) {
	s.mu.Lock()
	for {
		cur := s.state.Load()
		if s.state.CompareAndSwap(cur, (cur|flagClosed)&^flagWaiters) {
			break
		}
	}
	// Move the waiters to a private list so that nothing (a release in
	// particular) can grant them while they are woken in batches; a waiter
	// dropped meanwhile still unlinks itself under the lock.
	closing := new(waitq.List[Waiter])
	s.waiters.TakeAll(closing)
	var wl waitq.WakeList
	for {
		w := closing.PopFront()
		if w == nil {
			break
		}
		wk := w.waker
		w.waker = nil
		if !wl.Push(wk) {
			s.mu.Unlock()
			wl.WakeAll(cx)
			s.mu.Lock()
		}
	}
	s.mu.Unlock()
	wl.WakeAll(cx)
}

// phase is where a Waiter is in its life; only its owner reads or writes
// it.
type phase uint8

const (
	phaseIdle    phase = iota // reset, not polled yet
	phaseQueued               // in the queue (or granted, not yet seen)
	phaseDone                 // reported ready; the permits are the caller's
	phaseDropped              // dropped
)

// Waiter is one acquire of n permits. Embed it in a future; it must not be
// copied after its first poll. Its zero value must be Reset before use.
type Waiter struct {
	node waitq.Node[Waiter]
	// waker is guarded by sem.mu while the waiter is queued.
	waker core.Waker
	// remaining is the number of permits still owed; see the package
	// documentation for the ownership protocol.
	remaining atomic.Int64
	sem       *Sema
	needed    int64
	phase     phase
}

// Reset prepares w to acquire n permits from s. It panics if w is queued.
func (w *Waiter) Reset(s *Sema, n int64) {
	if w.phase == phaseQueued {
		panic("weft/sync: future reused while it is still waiting")
	}
	checkCount(n)
	w.sem = s
	w.needed = n
	w.phase = phaseIdle
	w.waker = nil
	// remaining is only read once the waiter is queued, and first() sets
	// it before queueing; a stale non-zero value is cleared for clarity
	// only, so the common case skips the (costly) atomic store.
	if w.remaining.Load() != 0 {
		w.remaining.Store(0)
	}
}

// Pending reports whether w is queued: polled, not ready, not dropped.
func (w *Waiter) Pending() bool { return w.phase == phaseQueued }

// Started reports whether w was polled or dropped since its last Reset.
func (w *Waiter) Started() bool { return w.phase != phaseIdle }

// Poll tries to acquire the permits. It returns (true, nil) once they are
// the caller's, (true, ErrClosed) if the semaphore was closed first, and
// (false, nil) while it waits. It does not consume the task's budget; the
// futures embedding it do.
func (w *Waiter) Poll(cx *core.Context) (bool, error) {
	switch w.phase {
	case phaseIdle:
		return w.first(cx)
	case phaseQueued:
		return w.pollQueued(cx)
	case phaseDropped:
		panic("weft/sync: future polled after Drop")
	default:
		panic("weft/sync: future polled after it completed")
	}
}

func (w *Waiter) first(cx *core.Context) (bool, error) {
	s, n := w.sem, w.needed
	un := uint64(n) << shift
	cur := s.state.Load()
	for {
		if cur&flagClosed != 0 {
			w.phase = phaseDone
			return true, ErrClosed
		}
		if n == 0 {
			// Nothing to wait for, even behind other waiters.
			w.phase = phaseDone
			return true, nil
		}
		if cur&flagWaiters != 0 || permitsOf(cur) < n {
			break
		}
		// Pairs with the CAS of the Release that added these permits:
		// what the releaser wrote before is visible to us now.
		if s.state.CompareAndSwap(cur, cur-un) {
			w.phase = phaseDone
			return true, nil
		}
		cur = s.state.Load()
	}
	// Slow path: take the lock before taking a partial share, so that a
	// release between the two cannot miss us.
	s.mu.Lock()
	var took int64
	cur = s.state.Load()
	for {
		if cur&flagClosed != 0 {
			s.mu.Unlock()
			w.phase = phaseDone
			return true, ErrClosed
		}
		avail := permitsOf(cur)
		if cur&flagWaiters == 0 && avail >= n {
			if s.state.CompareAndSwap(cur, cur-un) {
				s.mu.Unlock()
				w.phase = phaseDone
				return true, nil
			}
			cur = s.state.Load()
			continue
		}
		// Queue behind everyone, taking what is available now (nothing
		// when others are queued: the available count is zero then).
		if s.state.CompareAndSwap(cur, (cur&flagMask)|flagWaiters) {
			took = avail
			break
		}
		cur = s.state.Load()
	}
	w.remaining.Store(n - took)
	w.waker = cx.Waker()
	s.waiters.PushBack(&w.node, w)
	w.phase = phaseQueued
	s.mu.Unlock()
	return false, nil
}

func (w *Waiter) pollQueued(cx *core.Context) (bool, error) {
	// Pairs with the release store in addLocked: seeing 0 means the
	// granter unlinked us and is done with w.
	if w.remaining.Load() == 0 {
		w.phase = phaseDone
		return true, nil
	}
	s := w.sem
	s.mu.Lock()
	if w.remaining.Load() == 0 {
		s.mu.Unlock()
		w.phase = phaseDone
		return true, nil
	}
	if s.state.Load()&flagClosed != 0 {
		// Close unlinked us; give back what we were already given.
		w.node.Unlink()
		w.waker = nil
		w.phase = phaseDone
		if got := w.needed - w.remaining.Load(); got > 0 {
			s.addLocked(got, cx)
		} else {
			s.mu.Unlock()
		}
		return true, ErrClosed
	}
	w.waker = cx.Waker()
	s.mu.Unlock()
	return false, nil
}

// Drop abandons the acquire. A queued waiter leaves the queue and the
// permits it was given, if any, are released to the next waiters. Dropping
// an idle, completed or dropped waiter does nothing (the permits of a
// completed acquire belong to the caller).
func (w *Waiter) Drop() {
	if w.phase != phaseQueued {
		if w.phase == phaseIdle {
			w.phase = phaseDropped
		}
		return
	}
	w.phase = phaseDropped
	s := w.sem
	if w.remaining.Load() == 0 {
		// Granted in full but never reported: pass the permits on.
		s.Release(w.needed, nil)
		return
	}
	s.mu.Lock()
	if w.node.Unlink() && s.waiters.Empty() {
		s.clearWaitersAndAdd(0)
	}
	w.waker = nil
	if got := w.needed - w.remaining.Load(); got > 0 {
		s.addLocked(got, nil)
		return
	}
	s.mu.Unlock()
}
