// Package broadcast is a multi-producer, multi-consumer channel in which
// every receiver sees every message: a bounded ring that senders overwrite
// and receivers read at their own pace.
//
//	tx, rx := broadcast.New[Event](64)
//	rx2 := tx.Subscribe()
//	tx.Send(e)                   // never waits
//	r, ok := rx.Recv().Poll(cx)  // in each receiving task
//
// # Lagging
//
// Senders never wait for slow receivers. The ring keeps the last capacity
// messages (capacity rounded up to a power of two); a receiver that falls
// further behind has lost the oldest ones. Its next receive resolves to a
// [LaggedError] saying how many it missed, and the receiver continues with
// the oldest message still in the ring. A receiver created by Subscribe
// sees only messages sent after it was created.
//
// # Memory
//
// Each slot counts the receivers that have still to read it; the last
// one clears the slot, so a value is not kept alive by the ring once every
// receiver has seen it. A closed receiver releases the slots it had not
// read.
//
// # Waiting
//
// A receiver with nothing to read links its receive future into the
// channel's waiter list (an intrusive list: the node is inside the
// receiver, so waiting allocates nothing). A send moves every waiter to a
// private list and wakes them in batches, outside the lock; a waiter
// dropped meanwhile unlinks itself. Every poll consumes one unit of the
// task's budget first, and a dropped receive loses nothing: messages stay
// in the ring until read or overwritten.
package broadcast

import (
	"errors"
	"fmt"
	gosync "sync"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// ErrClosed is the result of a receive once every sender handle is closed
// and the receiver has read everything left in the ring.
var ErrClosed = errors.New("weft/broadcast: channel closed")

// ErrEmpty is returned by TryRecv when there is nothing new to read.
var ErrEmpty = errors.New("weft/broadcast: nothing to receive")

// ErrNoReceivers is returned by Send when no receiver exists; the value is
// not kept.
var ErrNoReceivers = errors.New("weft/broadcast: no receivers")

// LaggedError is the result of a receive by a receiver that fell more than
// the ring's capacity behind: Missed messages were overwritten before it
// read them. The receiver's next receive returns the oldest message still
// in the ring.
type LaggedError struct {
	Missed uint64
}

// Error implements error.
func (e LaggedError) Error() string {
	return fmt.Sprintf("weft/broadcast: receiver lagged behind and missed %d messages", e.Missed)
}

type slot[T any] struct {
	// seq is the position of the message in the slot plus one (0: never
	// written).
	seq uint64
	// rem counts the receivers that have still to read the message.
	rem int
	val T
}

// shared is the channel's state, guarded by mu.
type shared[T any] struct {
	mu      gosync.Mutex
	buf     []slot[T]
	mask    uint64
	tail    uint64 // position of the next message
	rxCount int
	txCount int
	closed  bool // every sender handle is closed
	waiters waitq.List[RecvFuture[T]]
}

// New returns a broadcast channel whose ring keeps the last capacity
// messages (rounded up to a power of two), a sender and a first receiver.
// It panics if capacity is below 1 or above 1<<30.
func New[T any](capacity int) (*Sender[T], *Receiver[T]) {
	if capacity < 1 || capacity > 1<<30 {
		panic("weft/broadcast: capacity must be between 1 and 1<<30")
	}
	size := 1
	for size < capacity {
		size <<= 1
	}
	sh := &shared[T]{buf: make([]slot[T], size), mask: uint64(size - 1), txCount: 1, rxCount: 1}
	return &Sender[T]{sh: sh}, newReceiver(sh, 0)
}

// Sender is a handle to the sending side. It may be used from many tasks
// and goroutines at once. Sending never waits.
type Sender[T any] struct {
	sh     *shared[T]
	closed bool // guarded by sh.mu
}

// Send appends v to the ring and wakes every waiting receiver. It returns
// the number of receivers that will see v, or [ErrNoReceivers] (v is
// dropped) when there are none, or [ErrClosed] if this handle was closed.
// Inside a poll prefer [Sender.SendFrom].
func (tx *Sender[T]) Send(v T) (int, error) { return tx.SendFrom(nil, v) }

// SendFrom is [Sender.Send] called from inside a poll with that poll's
// Context: the receivers it wakes are scheduled on the calling worker.
func (tx *Sender[T]) SendFrom(cx *core.Context, v T) (int, error) {
	sh := tx.sh
	sh.mu.Lock()
	if tx.closed {
		sh.mu.Unlock()
		return 0, ErrClosed
	}
	n := sh.rxCount
	if n == 0 {
		sh.mu.Unlock()
		return 0, ErrNoReceivers
	}
	s := &sh.buf[sh.tail&sh.mask]
	s.seq = sh.tail + 1
	s.rem = n
	s.val = v
	sh.tail++
	sh.wakeAllAndUnlock(cx)
	return n, nil
}

// wakeAllAndUnlock wakes every waiting receiver and releases mu. Called
// with mu held.
func (sh *shared[T]) wakeAllAndUnlock(cx *core.Context) {
	if sh.waiters.Empty() {
		sh.mu.Unlock()
		return
	}
	// Move the waiters aside: receivers that start waiting while we wake
	// in batches belong to the next send.
	taken := new(waitq.List[RecvFuture[T]])
	sh.waiters.TakeAll(taken)
	var wl waitq.WakeList
	for {
		f := taken.PopFront()
		if f == nil {
			break
		}
		wk := f.waker
		f.waker = nil
		if !wl.Push(wk) {
			sh.mu.Unlock()
			wl.WakeAll(cx)
			sh.mu.Lock()
		}
	}
	sh.mu.Unlock()
	wl.WakeAll(cx)
}

// Subscribe returns a new receiver that sees the messages sent from now
// on.
func (tx *Sender[T]) Subscribe() *Receiver[T] {
	sh := tx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.rxCount++
	return newReceiver(sh, sh.tail)
}

// Clone returns a new sender handle. It panics if tx was closed.
func (tx *Sender[T]) Clone() *Sender[T] {
	sh := tx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if tx.closed {
		panic("weft/broadcast: Clone of a closed Sender")
	}
	sh.txCount++
	return &Sender[T]{sh: sh}
}

// Close releases this handle. When the last sender handle is closed,
// receivers get [ErrClosed] once they have read what is left. Closing twice
// does nothing.
func (tx *Sender[T]) Close() {
	sh := tx.sh
	sh.mu.Lock()
	if tx.closed {
		sh.mu.Unlock()
		return
	}
	tx.closed = true
	sh.txCount--
	if sh.txCount > 0 {
		sh.mu.Unlock()
		return
	}
	sh.closed = true
	sh.wakeAllAndUnlock(nil)
}

// ReceiverCount returns the number of receivers not yet closed.
func (tx *Sender[T]) ReceiverCount() int {
	tx.sh.mu.Lock()
	defer tx.sh.mu.Unlock()
	return tx.sh.rxCount
}

// Receiver reads the channel at its own position. It belongs to one task
// (or goroutine) at a time.
type Receiver[T any] struct {
	sh     *shared[T]
	next   uint64 // position of the next message to read; guarded by sh.mu
	closed bool   // guarded by sh.mu
	recv   RecvFuture[T]
}

func newReceiver[T any](sh *shared[T], next uint64) *Receiver[T] {
	rx := &Receiver[T]{sh: sh, next: next}
	rx.recv.rx = rx
	return rx
}

// Recv returns a future that resolves to the next message, to a
// [LaggedError] if messages were lost, or to [ErrClosed] once every sender
// is closed and the receiver read everything. It is cancel-safe. The
// future is the receiver's own, reused by every call.
func (rx *Receiver[T]) Recv() *RecvFuture[T] {
	rx.recv.done = false
	return &rx.recv
}

// TryRecv is Recv without waiting: it returns [ErrEmpty] when there is
// nothing new.
func (rx *Receiver[T]) TryRecv() (T, error) {
	sh := rx.sh
	sh.mu.Lock()
	v, ok, err := rx.recvLocked()
	sh.mu.Unlock()
	if !ok {
		return v, ErrEmpty
	}
	return v, err
}

// recvLocked reads the next message. ok is false when there is nothing to
// read yet. Called with sh.mu held.
func (rx *Receiver[T]) recvLocked() (v T, ok bool, err error) {
	sh := rx.sh
	if rx.closed {
		return v, true, ErrClosed
	}
	if rx.next == sh.tail {
		if sh.closed {
			return v, true, ErrClosed
		}
		return v, false, nil
	}
	if size := uint64(len(sh.buf)); sh.tail-rx.next > size {
		oldest := sh.tail - size
		missed := oldest - rx.next
		rx.next = oldest
		return v, true, LaggedError{Missed: missed}
	}
	s := &sh.buf[rx.next&sh.mask]
	v = s.val
	s.rem--
	if s.rem == 0 {
		var zero T
		s.val = zero
	}
	rx.next++
	return v, true, nil
}

// Len returns how many messages the receiver has still to read (at most
// the ring's capacity).
func (rx *Receiver[T]) Len() int {
	sh := rx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	return int(min(sh.tail-rx.next, uint64(len(sh.buf))))
}

// Resubscribe returns a new receiver that sees the messages sent from now
// on, as [Sender.Subscribe].
func (rx *Receiver[T]) Resubscribe() *Receiver[T] {
	sh := rx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.rxCount++
	return newReceiver(sh, sh.tail)
}

// Close releases the receiver: the slots it had not read no longer wait
// for it, and Send no longer counts it. Closing twice does nothing.
func (rx *Receiver[T]) Close() {
	sh := rx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if rx.closed {
		return
	}
	rx.closed = true
	sh.rxCount--
	rx.recv.node.Unlink()
	rx.recv.waker = nil
	from := rx.next
	if size := uint64(len(sh.buf)); sh.tail-from > size {
		from = sh.tail - size
	}
	for pos := from; pos < sh.tail; pos++ {
		s := &sh.buf[pos&sh.mask]
		s.rem--
		if s.rem == 0 {
			var zero T
			s.val = zero
		}
	}
}

// RecvFuture is the future of [Receiver.Recv]: a [core.Future] of
// [core.Result] of T and a [core.Dropper]. It is the receiver's waiter
// node.
type RecvFuture[T any] struct {
	rx    *Receiver[T]
	node  waitq.Node[RecvFuture[T]]
	waker core.Waker // guarded by sh.mu
	done  bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget first.
func (f *RecvFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	if f.done {
		panic("weft/broadcast: RecvFuture polled after it completed")
	}
	if !cx.Proceed() {
		return core.Result[T]{}, false
	}
	sh := f.rx.sh
	sh.mu.Lock()
	v, ok, err := f.rx.recvLocked()
	if ok {
		f.node.Unlink()
		f.waker = nil
		sh.mu.Unlock()
		f.done = true
		return core.Result[T]{Value: v, Err: err}, true
	}
	f.waker = cx.Waker()
	if !f.node.Linked() {
		sh.waiters.PushBack(&f.node, f)
	}
	sh.mu.Unlock()
	return core.Result[T]{}, false
}

// Drop implements [core.Dropper]: the receive stops waiting. Nothing is
// lost; the next receive reads the same message.
func (f *RecvFuture[T]) Drop() {
	sh := f.rx.sh
	sh.mu.Lock()
	f.node.Unlink()
	f.waker = nil
	sh.mu.Unlock()
	f.done = true
}
