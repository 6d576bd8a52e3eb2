//go:build darwin || freebsd || netbsd || openbsd || linux

package readiness

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/drivers/internal/slab"
)

// Readiness bits: the low 16 bits of an IO's readiness word. A driver
// translates its kernel's events into them.
const (
	// Readable: a read may make progress (epoll: EPOLLIN, EPOLLPRI;
	// kqueue: an EVFILT_READ event).
	Readable uint64 = 1 << 0
	// Writable: a write may make progress (EPOLLOUT; EVFILT_WRITE).
	Writable uint64 = 1 << 1
	// ReadClosed: reads will see the end of the stream (EPOLLRDHUP,
	// EPOLLHUP; EV_EOF on EVFILT_READ).
	ReadClosed uint64 = 1 << 2
	// WriteClosed: writes will fail (EPOLLHUP; EV_EOF on EVFILT_WRITE).
	WriteClosed uint64 = 1 << 3
	// Errored: the next call reports the socket's error (EPOLLERR; EV_EOF
	// with an errno in fflags).
	Errored uint64 = 1 << 4

	readinessMask uint64 = 1<<16 - 1

	// The driver tick of the last set, 16 bits.
	tickShift        = 16
	tickMask  uint64 = 0xffff << tickShift

	// closedBit is set by CloseHandle (MarkClosed), shutdownBit by the
	// driver's Close (MarkShutdown), failedBit when the kernel refused the
	// descriptor's registration (MarkFailed; the error is in IO.failure).
	// None is ever cleared.
	failedBit   uint64 = 1 << 61
	closedBit   uint64 = 1 << 62
	shutdownBit uint64 = 1 << 63

	// drained is what a short transfer clears: the socket's buffer was
	// emptied or filled, but a hang-up or an error seen with it still
	// stands (once the peer hung up, every later read must see the end of
	// the stream without waiting for an edge that will not come again).
	drained = Readable | Writable
)

// The readiness that lets each direction try its system call.
const (
	// InterestRead is the readiness a read, a receive or an accept waits
	// for.
	InterestRead = Readable | ReadClosed | Errored
	// InterestWrite is the readiness a write, a send or a connect waits
	// for.
	InterestWrite = Writable | WriteClosed | Errored
)

// Event is a snapshot of the readiness word taken by PollReady: the bits
// that matched the caller's interest and the tick they were set at. It is
// what the caller hands back to ClearReadiness after EAGAIN.
type Event struct {
	// Ready is the readiness that matched the interest.
	Ready uint64
	// Tick is the driver's tick when it was set.
	Tick uint16
}

func tickOf(word uint64) uint16 { return uint16((word & tickMask) >> tickShift) }

// IO is a driver's state for one registered descriptor (Tokio's
// ScheduledIo): the readiness word, the list of operations waiting for
// readiness, and the count of system calls in flight that keeps the
// descriptor open while they run. See the package documentation for the
// protocols. Create it with NewIO; it lives in a Slab.
type IO struct {
	slab.Entry

	// readiness is the readiness word: shutdown | closed | tick | bits.
	// Stores are CAS loops in SetReadiness (the driver), ClearReadiness
	// (an operation after EAGAIN) and MarkClosed; every load is by an
	// operation deciding whether to try its system call. All are Go
	// atomics (sequentially consistent), so a load that follows a set in
	// the atomics' total order sees it.
	readiness atomic.Uint64

	// mu guards the waiter list (head, tail and every linked waiter's
	// links and waker). Registration re-checks readiness under mu, and the
	// driver takes mu after setting readiness, so a waiter is either seen
	// by the driver's wake or sees the readiness itself.
	mu         sync.Mutex
	head, tail *Waiter
	nwaiters   int

	// FD is the descriptor, kept open while system calls use it.
	FD FD

	// failure is the error of a registration the kernel refused. It is
	// written once, before failedBit is set, and read only after a load
	// of the word that saw the bit.
	failure error

	// Kind says how to interpret a read of zero bytes: end of stream for
	// a stream, an empty message for a datagram socket.
	Kind Kind
	// Network is the socket's network as the net package names its
	// addresses ("tcp", "udp", "unix", "unixgram").
	Network string
	// UnlinkPath is the filesystem path of a Unix listener the driver
	// bound, removed when the handle is closed (as Go's net does).
	UnlinkPath string
}

// Kind is what a registered descriptor is.
type Kind uint8

// The kinds of descriptor.
const (
	// Stream is a connected stream socket: a read of zero bytes is the
	// end of the stream.
	Stream Kind = iota
	// Listener is a listening socket.
	Listener
	// Datagram is a datagram socket: a read of zero bytes is an empty
	// message.
	Datagram
)

// NewIO returns the state of descriptor fd, of kind and network, with the
// readiness bits initial set; closeFn closes the descriptor when the
// handle is closed and no system call uses it.
func NewIO(fd int, closeFn func(int), kind Kind, network string, initial uint64) *IO {
	s := &IO{Kind: kind, Network: network}
	s.FD.n, s.FD.close = fd, closeFn
	s.readiness.Store(initial)
	return s
}

// Waiter is one operation waiting for readiness. It lives inside the
// operation's future (Tokio's intrusive Waiter), so any number of
// operations can wait on one descriptor in each direction, and dropping a
// future unlinks exactly its own waiter. Go's collector keeps a linked
// waiter alive and never moves it, so the list needs no pinning.
type Waiter struct {
	// prev, next, waker and interest are guarded by the IO's mu.
	prev, next *Waiter
	waker      core.Waker
	interest   uint64
	// linked is written under mu and read without it: an operation that
	// finds it false after being woken knows the driver already unlinked
	// it (the driver stores false before waking, and the wake happens
	// before the re-poll), so it can skip the lock.
	linked atomic.Bool
}

// Linked reports whether w is in a waiter list. An operation that finds it
// false after being woken may skip Remove (the driver unlinked it before
// the wake).
func (w *Waiter) Linked() bool { return w.linked.Load() }

// SetReadiness ORs ready into the word and stamps it with the driver's
// tick. Only the driver calls it, from Park, before waking the waiters (see
// mu). Pairs with the load in PollReady and the CAS in ClearReadiness.
func (s *IO) SetReadiness(tick uint16, ready uint64) {
	for {
		cur := s.readiness.Load()
		next := (cur &^ tickMask) | ready | uint64(tick)<<tickShift
		if s.readiness.CompareAndSwap(cur, next) {
			return
		}
	}
}

// ClearReadiness removes the bits of ev that are in mask, unless the driver
// set readiness again since ev was taken (the tick moved on): that newer
// event may stand for data that arrived after the system call that
// prompted the clear, and clearing it would leave the operation waiting
// for an edge that already came. Pairs with SetReadiness's CAS.
//
// After EAGAIN an operation clears all of ev (mask ^0): the call proved
// its direction open and empty (or full), closed and error bits included;
// a stale hang-up left set would make every later call spin on EAGAIN.
// After a short transfer it clears only drained.
func (s *IO) ClearReadiness(ev Event, mask uint64) {
	for {
		cur := s.readiness.Load()
		if tickOf(cur) != ev.Tick {
			return
		}
		next := cur &^ (ev.Ready & mask & readinessMask)
		if next == cur || s.readiness.CompareAndSwap(cur, next) {
			return
		}
	}
}

// MarkFailed records that registering the descriptor failed with err:
// every pending and later operation fails with it. Pairs with the load in
// PollReady (check reads failure only after seeing failedBit).
func (s *IO) MarkFailed(err error) {
	s.failure = err
	s.readiness.Or(failedBit)
}

// MarkClosed records that the handle was closed: pending and later
// operations fail with ErrClosed. The caller then wakes every waiter.
// Pairs with the loads in PollReady.
func (s *IO) MarkClosed() { s.readiness.Or(closedBit) }

// MarkShutdown records that the driver closed: pending and later
// operations fail with ErrDriverClosed. The caller then wakes every
// waiter. Pairs with the loads in PollReady.
func (s *IO) MarkShutdown() { s.readiness.Or(shutdownBit) }

// Readiness returns the readiness bits of the word (for tests and
// diagnostics: any use to decide is racy, which is what PollReady is for).
func (s *IO) Readiness() uint64 { return s.readiness.Load() & readinessMask }

// ClosedErr is the error of an operation that found the descriptor
// closing: ErrDriverClosed if the driver closed, ErrClosed otherwise.
func (s *IO) ClosedErr() error {
	if s.readiness.Load()&shutdownBit != 0 {
		return ErrDriverClosed
	}
	return ErrClosed
}

// Release removes a Unix listener's socket file and closes the descriptor
// once no system call uses it. The driver calls it once, after
// unregistering the handle and waking its waiters.
func (s *IO) Release() {
	if s.UnlinkPath != "" {
		_ = unix.Unlink(s.UnlinkPath)
	}
	s.FD.BeginClose()
}

// PollReady reports whether the operation owning w may try its system
// call: (event, nil, true) when the readiness word intersects interest,
// (_, err, true) when the handle or driver is closed, and (_, nil, false)
// after registering cx's waker in w. It never blocks.
func (s *IO) PollReady(cx *core.Context, w *Waiter, interest uint64) (Event, error, bool) {
	cur := s.readiness.Load()
	if ev, err, ok := s.check(cur, interest); ok {
		if w.linked.Load() {
			s.Remove(w)
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
	return Event{}, nil, false
}

// check interprets a readiness word for interest.
func (s *IO) check(cur, interest uint64) (Event, error, bool) {
	switch {
	case cur&shutdownBit != 0:
		return Event{}, ErrDriverClosed, true
	case cur&closedBit != 0:
		return Event{}, ErrClosed, true
	case cur&failedBit != 0:
		// failure was written before failedBit was set (MarkFailed), and
		// this load saw the bit: the write is visible.
		return Event{}, s.failure, true
	case cur&interest != 0:
		return Event{Ready: cur & interest, Tick: tickOf(cur)}, nil, true
	}
	return Event{}, nil, false
}

// Wake unlinks every waiter whose interest intersects ready and appends its
// waker to buf; the caller wakes them after the lock is released (a wake
// may re-enter the driver).
func (s *IO) Wake(ready uint64, buf []core.Waker) []core.Waker {
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

// WakeAll unlinks every waiter and appends its waker to buf.
func (s *IO) WakeAll(buf []core.Waker) []core.Waker {
	return s.Wake(^uint64(0), buf)
}

// Remove unlinks w if it is still linked. Futures call it from Drop.
func (s *IO) Remove(w *Waiter) {
	s.mu.Lock()
	if w.linked.Load() {
		s.unlinkLocked(w)
	}
	s.mu.Unlock()
}

// Waiters returns the number of linked waiters, for tests.
func (s *IO) Waiters() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nwaiters
}

func (s *IO) pushLocked(w *Waiter) {
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

func (s *IO) unlinkLocked(w *Waiter) {
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
