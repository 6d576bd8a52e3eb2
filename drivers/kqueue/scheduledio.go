//go:build darwin || freebsd || netbsd || openbsd || linux

package kqueue

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// Readiness bits: the low 16 bits of a scheduledIO's readiness word.
const (
	readable    uint64 = 1 << 0 // an EVFILT_READ event
	writable    uint64 = 1 << 1 // an EVFILT_WRITE event
	readClosed  uint64 = 1 << 2 // EV_EOF on EVFILT_READ: reads will see end of stream
	writeClosed uint64 = 1 << 3 // EV_EOF on EVFILT_WRITE: writes will fail
	errored     uint64 = 1 << 4 // EV_EOF with an errno in fflags: the next call reports it

	readinessMask uint64 = 1<<16 - 1

	// The driver tick of the last set, 16 bits.
	tickShift        = 16
	tickMask  uint64 = 0xffff << tickShift

	// closedBit is set by CloseHandle, shutdownBit by the driver's Close,
	// failedBit when the kernel refused the descriptor's registration
	// (an EV_ERROR result; the error is in scheduledIO.failure). None is
	// ever cleared.
	failedBit   uint64 = 1 << 61
	closedBit   uint64 = 1 << 62
	shutdownBit uint64 = 1 << 63

	// drained is what a short transfer clears: the socket's buffer was
	// emptied or filled, but a hang-up or an error seen with it still
	// stands (once the peer hung up, every later read must see the end of
	// the stream without waiting for an edge that will not come again).
	drained = readable | writable
)

// The readiness that lets each direction try its system call.
const (
	interestRead  = readable | readClosed | errored
	interestWrite = writable | writeClosed | errored
)

// readyEvent is a snapshot of the readiness word taken by pollReady: the
// bits that matched the caller's interest and the tick they were set at.
// It is what the caller hands back to clearReadiness after EAGAIN.
type readyEvent struct {
	ready uint64
	tick  uint16
}

func tickOf(word uint64) uint16 { return uint16((word & tickMask) >> tickShift) }

// scheduledIO is the driver's state for one registered descriptor (Tokio's
// ScheduledIo): the readiness word, the list of operations waiting for
// readiness, and the count of system calls in flight that keeps the
// descriptor open while they run. See the package documentation for the
// protocols.
type scheduledIO struct {
	// readiness is the readiness word: shutdown | closed | tick | bits.
	// Stores are CAS loops in setReadiness (the driver), clearReadiness
	// (an operation after EAGAIN) and markClosed; every load is by an
	// operation deciding whether to try its system call. All are Go
	// atomics (sequentially consistent), so a load that follows a set in
	// the atomics' total order sees it.
	readiness atomic.Uint64

	// mu guards the waiter list (head, tail and every linked waiter's
	// links and waker). Registration re-checks readiness under mu, and the
	// driver takes mu after setting readiness, so a waiter is either seen
	// by the driver's wake or sees the readiness itself.
	mu         sync.Mutex
	head, tail *waiter
	nwaiters   int

	// fd keeps the descriptor open while system calls use it.
	fd fdRef

	// failure is the error of a registration the kernel refused. It is
	// written once, before failedBit is set, and read only after a load
	// of the word that saw the bit.
	failure error

	// gen is the generation of the slab slot the handle was issued in;
	// an event or handle of another generation is stale.
	gen uint32
	// kind says how to interpret a read of zero bytes: end of stream for
	// a stream, an empty message for a datagram socket.
	kind ioKind
	// network is the socket's network as the net package names its
	// addresses ("tcp", "udp", "unix", "unixgram").
	network string
	// unlinkPath is the filesystem path of a Unix listener the driver
	// bound, removed when the handle is closed (as Go's net does).
	unlinkPath string
}

type ioKind uint8

const (
	kindStream ioKind = iota
	kindListener
	kindDatagram
)

// waiter is one operation waiting for readiness. It lives inside the
// operation's future (Tokio's intrusive Waiter), so any number of
// operations can wait on one descriptor in each direction, and dropping a
// future unlinks exactly its own waiter. Go's collector keeps a linked
// waiter alive and never moves it, so the list needs no pinning.
type waiter struct {
	// prev, next, waker and interest are guarded by the scheduledIO's mu.
	prev, next *waiter
	waker      core.Waker
	interest   uint64
	// linked is written under mu and read without it: an operation that
	// finds it false after being woken knows the driver already unlinked
	// it (the driver stores false before waking, and the wake happens
	// before the re-poll), so it can skip the lock.
	linked atomic.Bool
}

// setReadiness ORs ready into the word and stamps it with the driver's
// tick. Only the driver calls it, from Park, before waking the waiters (see
// mu). Pairs with the load in pollReady and the CAS in clearReadiness.
func (s *scheduledIO) setReadiness(tick uint16, ready uint64) {
	for {
		cur := s.readiness.Load()
		next := (cur &^ tickMask) | ready | uint64(tick)<<tickShift
		if s.readiness.CompareAndSwap(cur, next) {
			return
		}
	}
}

// clearReadiness removes the bits of ev that are in mask, unless the driver
// set readiness again since ev was taken (the tick moved on): that newer
// event may stand for data that arrived after the system call that
// prompted the clear, and clearing it would leave the operation waiting
// for an edge that already came. Pairs with setReadiness's CAS.
//
// After EAGAIN an operation clears all of ev (mask ^0): the call proved
// its direction open and empty (or full), closed and error bits included;
// a stale hang-up left set would make every later call spin on EAGAIN.
// After a short transfer it clears only drained.
func (s *scheduledIO) clearReadiness(ev readyEvent, mask uint64) {
	for {
		cur := s.readiness.Load()
		if tickOf(cur) != ev.tick {
			return
		}
		next := cur &^ (ev.ready & mask & readinessMask)
		if next == cur || s.readiness.CompareAndSwap(cur, next) {
			return
		}
	}
}

// markFailed records that registering the descriptor failed with err:
// every pending and later operation fails with it. Pairs with the load in
// pollReady (check reads failure only after seeing failedBit).
func (s *scheduledIO) markFailed(err error) {
	s.failure = err
	s.readiness.Or(failedBit)
}

// markClosed sets bit (closedBit or shutdownBit) in the word; pending and
// later operations observe it in pollReady. The caller then wakes every
// waiter. Pairs with the loads in pollReady.
func (s *scheduledIO) markClosed(bit uint64) { s.readiness.Or(bit) }

// pollReady reports whether the operation owning w may try its system
// call: (event, nil, true) when the readiness word intersects interest,
// (_, err, true) when the handle or driver is closed, and (_, nil, false)
// after registering cx's waker in w. It never blocks.
func (s *scheduledIO) pollReady(cx *core.Context, w *waiter, interest uint64) (readyEvent, error, bool) {
	cur := s.readiness.Load()
	if ev, err, ok := s.check(cur, interest); ok {
		if w.linked.Load() {
			s.remove(w)
		}
		return ev, err, true
	}
	s.mu.Lock()
	// Re-check under mu: a set that raced with the load above either is
	// visible now, or its driver's wake will take mu after we unlock and
	// find w in the list.
	cur = s.readiness.Load()
	if ev, err, ok := s.check(cur, interest); ok {
		if w.linked.Load() {
			s.unlinkLocked(w)
		}
		s.mu.Unlock()
		return ev, err, true
	}
	w.waker = cx.Waker()
	w.interest = interest
	if !w.linked.Load() {
		s.pushLocked(w)
	}
	s.mu.Unlock()
	return readyEvent{}, nil, false
}

// check interprets a readiness word for interest.
func (s *scheduledIO) check(cur, interest uint64) (readyEvent, error, bool) {
	switch {
	case cur&shutdownBit != 0:
		return readyEvent{}, errDriverClosed, true
	case cur&closedBit != 0:
		return readyEvent{}, errClosed, true
	case cur&failedBit != 0:
		// failure was written before failedBit was set (markFailed), and
		// this load saw the bit: the write is visible.
		return readyEvent{}, s.failure, true
	case cur&interest != 0:
		return readyEvent{ready: cur & interest, tick: tickOf(cur)}, nil, true
	}
	return readyEvent{}, nil, false
}

// wake unlinks every waiter whose interest intersects ready and appends its
// waker to buf; the caller wakes them after the lock is released (a wake
// may re-enter the driver).
func (s *scheduledIO) wake(ready uint64, buf []core.Waker) []core.Waker {
	s.mu.Lock()
	for w := s.head; w != nil; {
		next := w.next
		if w.interest&ready != 0 {
			s.unlinkLocked(w)
			if w.waker != nil {
				buf = append(buf, w.waker)
				w.waker = nil
			}
		}
		w = next
	}
	s.mu.Unlock()
	return buf
}

// wakeAll unlinks every waiter and appends its waker to buf.
func (s *scheduledIO) wakeAll(buf []core.Waker) []core.Waker {
	return s.wake(^uint64(0), buf)
}

// remove unlinks w if it is still linked. Futures call it from Drop.
func (s *scheduledIO) remove(w *waiter) {
	s.mu.Lock()
	if w.linked.Load() {
		s.unlinkLocked(w)
	}
	s.mu.Unlock()
}

// waiters returns the number of linked waiters, for tests.
func (s *scheduledIO) waiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nwaiters
}

func (s *scheduledIO) pushLocked(w *waiter) {
	w.prev, w.next = s.tail, nil
	if s.tail != nil {
		s.tail.next = w
	} else {
		s.head = w
	}
	s.tail = w
	s.nwaiters++
	w.linked.Store(true)
}

func (s *scheduledIO) unlinkLocked(w *waiter) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		s.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		s.tail = w.prev
	}
	w.prev, w.next = nil, nil
	s.nwaiters--
	w.linked.Store(false)
}

// fdRef counts the system calls using a descriptor so that closing the
// handle never closes the descriptor under a call in flight (which could
// then act on an unrelated descriptor that reused the number). It is a
// small cousin of Go's internal fdMutex:
//
//	acquire:   v = add(1);  closing set?  release, fail
//	release:   v = add(-1); v == closing? CAS closing -> closing|closed, close
//	close:     v = add(closing); v == closing? same CAS, close
//
// Whoever takes the count to "closing, no calls" closes the descriptor,
// and the CAS to closed makes sure only one of them does, even when a late
// acquire bounces off in between (it may be the one that closes). The
// closing is done here, by whichever method wins, so no caller can drop
// the duty.
type fdRef struct {
	// v holds fdClosing | fdClosed | count. Every operation is an atomic
	// read-modify-write, ordered with the others on the same word.
	v atomic.Uint64
	n int // the descriptor, immutable after registration
	// close closes n. It is the driver's (the kqueue back end must see
	// the close: the emulation drops the descriptor's knotes), set before
	// the fdRef is shared and never changed.
	close func(int)
}

const (
	fdClosing uint64 = 1 << 63
	fdClosed  uint64 = 1 << 62
)

// acquire reports whether the descriptor may be used; if it returns true
// the caller must call release when its system call returns.
func (r *fdRef) acquire() bool {
	if r.v.Add(1)&fdClosing != 0 {
		r.release()
		return false
	}
	return true
}

// release ends a use, and closes the descriptor if the handle was closed
// while the call ran and this was the last use.
func (r *fdRef) release() {
	if r.v.Add(^uint64(0)) == fdClosing {
		r.finish()
	}
}

// beginClose marks the descriptor closing and closes it at once if no
// call uses it; otherwise the last release does. Calls after the first do
// nothing.
func (r *fdRef) beginClose() {
	for {
		cur := r.v.Load()
		if cur&fdClosing != 0 {
			return
		}
		if r.v.CompareAndSwap(cur, cur|fdClosing) {
			if cur == 0 {
				r.finish()
			}
			return
		}
	}
}

// finish closes the descriptor if nobody has: the CAS from "closing, no
// calls" to closed has exactly one winner.
func (r *fdRef) finish() {
	if r.v.CompareAndSwap(fdClosing, fdClosing|fdClosed) {
		if r.close != nil {
			r.close(r.n)
		}
	}
}

// isClosed reports whether the descriptor was closed.
func (r *fdRef) isClosed() bool { return r.v.Load()&fdClosed != 0 }
