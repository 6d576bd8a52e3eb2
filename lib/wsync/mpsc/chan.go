package mpsc

import (
	gosync "sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/sema"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// channel is the state shared by a channel's senders and its receiver.
// One mutex guards all of it: the buffer, the receiver's waker, the closed
// state and, for a bounded channel, the capacity semaphore, so a send
// checks capacity and appends in one critical section, and a receive takes
// a message and hands its slot to the next sender in another.
type channel[T any] struct {
	mu gosync.Mutex
	// queue holds the buffered messages.
	queue ring[T]
	// rxWaker is the waker of a pending receive, taken by the next push or
	// by whatever ends the channel.
	rxWaker core.Waker
	// rxClosed: the receiver closed the channel.
	rxClosed bool
	// closed: no new message can be accepted any more, because the
	// receiver closed the channel or the last sender handle was closed.
	closed bool
	// senders counts the sender handles not yet closed; it is atomic so
	// that Clone and Close of a handle that is not the last take no lock.
	senders atomic.Int64

	// The bounded channel's capacity: sem holds one permit per free slot;
	// a buffered message, or a permit held by a sender, owns one.
	bounded  bool
	capacity int64
	sem      sema.Locked
}

func newChannel[T any](capacity int64) *channel[T] {
	c := &channel[T]{}
	if capacity > 0 {
		c.bounded = true
		c.capacity = capacity
		c.sem.Init(capacity)
	} else {
		c.queue.shrink = true
	}
	c.senders.Store(1)
	return c
}

// pushLocked appends v and takes the waker of a pending receive, to be
// woken after unlocking. Called with mu held by a sender that owns a permit
// (bounded) or checked that the channel accepts messages (unbounded).
func (c *channel[T]) pushLocked(v T) core.Waker {
	c.queue.push(v)
	w := c.rxWaker
	c.rxWaker = nil
	return w
}

// push is pushLocked in its own critical section, waking the receiver.
func (c *channel[T]) push(v T, cx *core.Context) {
	c.mu.Lock()
	w := c.pushLocked(v)
	c.mu.Unlock()
	waitq.Wake(cx, w)
}

// idleLocked reports whether no message can arrive any more: the channel
// is closed and, for a bounded channel, every permit is back and no send
// is queued for one (a permit held by a sender could still become a
// message, and so could a send started before its handle was closed).
// Called with mu held.
func (c *channel[T]) idleLocked() bool {
	return c.closed && (!c.bounded || (c.sem.Available() == c.capacity && !c.sem.HasWaiters()))
}

// takeRxIfEndedLocked returns the waker of a pending receive if the
// channel just ended for it: closed, idle and empty. Whoever returns the
// last permit of a closed channel calls it, so the receiver observes the
// end (Tokio's WakeReceiverOnDrop). Called with mu held.
func (c *channel[T]) takeRxIfEndedLocked() core.Waker {
	if c.rxWaker == nil || c.queue.len() != 0 || !c.idleLocked() {
		return nil
	}
	w := c.rxWaker
	c.rxWaker = nil
	return w
}

// releaseAndUnlock gives n permits back on behalf of a sender that will
// not use them, then unlocks and wakes the senders they completed and, if
// that made a closed channel idle, the receiver. Called with mu held.
func (c *channel[T]) releaseAndUnlock(n int64, cx *core.Context) {
	var wl waitq.WakeList
	for n > 0 {
		if n = c.sem.Release(n, &wl); n == 0 {
			break
		}
		c.mu.Unlock()
		wl.WakeAll(cx)
		c.mu.Lock()
	}
	rx := c.takeRxIfEndedLocked()
	c.mu.Unlock()
	wl.WakeAll(cx)
	waitq.Wake(cx, rx)
}

// closeSender releases one sender handle; the last one closes the channel.
func (c *channel[T]) closeSender() {
	if c.senders.Add(-1) != 0 {
		return
	}
	c.mu.Lock()
	c.closed = true
	rx := c.takeRxIfEndedLocked()
	c.mu.Unlock()
	waitq.Wake(nil, rx)
}

// Receiver is the receiving half of an mpsc channel, bounded or unbounded.
// There is exactly one per channel, owned by one task (or goroutine) at a
// time; it is not safe for concurrent use.
type Receiver[T any] struct {
	c    *channel[T]
	recv RecvFuture[T]
	many RecvManyFuture[T]
}

func newReceiver[T any](c *channel[T]) *Receiver[T] {
	rx := &Receiver[T]{c: c}
	rx.recv.c = c
	rx.many.c = c
	return rx
}

// Recv returns a future that resolves to the next message, or to
// [ErrClosed] once the channel is closed and drained. It is cancel-safe:
// a RecvFuture dropped before it resolved has taken no message.
//
// The future is the receiver's own, reused by every call, so receiving
// allocates nothing; a receive started by a previous call must have
// completed or been dropped.
func (rx *Receiver[T]) Recv() *RecvFuture[T] {
	rx.recv.done = false
	return &rx.recv
}

// RecvMany returns a future that waits for at least one message and then
// appends up to limit buffered messages to dst. It resolves to the extended
// slice, or to dst unchanged with [ErrClosed] once the channel is closed and
// drained. A limit of zero resolves at once with dst. Like Recv it is
// cancel-safe and reuses the receiver's own future.
func (rx *Receiver[T]) RecvMany(dst []T, limit int) *RecvManyFuture[T] {
	rx.many.done = false
	rx.many.dst = dst
	rx.many.limit = limit
	return &rx.many
}

// TryRecv takes the next message without waiting. It returns [ErrEmpty]
// when none is buffered and [ErrClosed] when none will come.
func (rx *Receiver[T]) TryRecv() (T, error) {
	c := rx.c
	c.mu.Lock()
	if v, ok := c.queue.pop(); ok {
		var w core.Waker
		if c.bounded {
			w = c.sem.ReleaseOne()
		}
		c.mu.Unlock()
		waitq.Wake(nil, w)
		return v, nil
	}
	closed := c.idleLocked()
	c.mu.Unlock()
	var zero T
	if closed {
		return zero, ErrClosed
	}
	return zero, ErrEmpty
}

// Close closes the channel from the receiving side: sends not yet granted
// capacity fail with [ErrClosed], while messages already buffered, and
// those sent through permits already reserved, can still be received.
// Receive until [ErrClosed] to drain them.
func (rx *Receiver[T]) Close() {
	c := rx.c
	c.mu.Lock()
	c.rxClosed = true
	c.closed = true
	var wl waitq.WakeList
	for c.bounded && c.sem.Close(&wl) {
		c.mu.Unlock()
		wl.WakeAll(nil)
		c.mu.Lock()
	}
	c.mu.Unlock()
	wl.WakeAll(nil)
}

// Len returns the number of buffered messages.
func (rx *Receiver[T]) Len() int {
	c := rx.c
	c.mu.Lock()
	n := c.queue.len()
	c.mu.Unlock()
	return n
}

// IsClosed reports whether the channel accepts no new message: the
// receiver closed it or every sender handle was closed. Buffered messages
// may remain.
func (rx *Receiver[T]) IsClosed() bool {
	rx.c.mu.Lock()
	defer rx.c.mu.Unlock()
	return rx.c.closed
}

// RecvFuture is the future of [Receiver.Recv]: a [core.Future] of
// [core.Result] of T and a [core.Dropper].
type RecvFuture[T any] struct {
	c *channel[T]
	// waiting: this future's waker is registered in the channel.
	waiting bool
	done    bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget before it looks at the channel.
func (f *RecvFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	if f.done {
		panic("weft/mpsc: RecvFuture polled after it completed")
	}
	if !cx.Proceed() {
		return core.Result[T]{}, false
	}
	c := f.c
	c.mu.Lock()
	if v, ok := c.queue.pop(); ok {
		if f.waiting {
			c.rxWaker = nil
			f.waiting = false
		}
		var w core.Waker
		if c.bounded && !c.sem.ReleaseOneFast() {
			// The freed slot goes to the oldest waiting sender, which
			// runs next on this worker.
			w = c.sem.ReleaseOneSlow()
		}
		c.mu.Unlock()
		if w != nil {
			waitq.Wake(cx, w)
		}
		f.done = true
		return core.Result[T]{Value: v}, true
	}
	if c.idleLocked() {
		c.rxWaker = nil
		c.mu.Unlock()
		f.waiting = false
		f.done = true
		return core.Result[T]{Err: ErrClosed}, true
	}
	c.rxWaker = cx.Waker()
	f.waiting = true
	c.mu.Unlock()
	return core.Result[T]{}, false
}

// Drop implements [core.Dropper]: the receive's waker is withdrawn. No
// message is lost; the next receive gets it.
func (f *RecvFuture[T]) Drop() {
	if f.waiting {
		f.c.mu.Lock()
		f.c.rxWaker = nil
		f.c.mu.Unlock()
		f.waiting = false
	}
	f.done = true
}

// RecvManyFuture is the future of [Receiver.RecvMany]: a [core.Future] of
// [core.Result] of []T and a [core.Dropper].
type RecvManyFuture[T any] struct {
	c       *channel[T]
	dst     []T
	limit   int
	waiting bool
	done    bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget, however many messages it moves.
func (f *RecvManyFuture[T]) Poll(cx *core.Context) (core.Result[[]T], bool) {
	if f.done {
		panic("weft/mpsc: RecvManyFuture polled after it completed")
	}
	if f.limit <= 0 {
		f.done = true
		return core.Result[[]T]{Value: f.dst}, true
	}
	if !cx.Proceed() {
		return core.Result[[]T]{}, false
	}
	c := f.c
	c.mu.Lock()
	dst, k := c.queue.popInto(f.dst, f.limit)
	if k > 0 {
		if f.waiting {
			c.rxWaker = nil
			f.waiting = false
		}
		f.dst = nil
		f.done = true
		if !c.bounded {
			c.mu.Unlock()
			return core.Result[[]T]{Value: dst}, true
		}
		c.releaseAndUnlock(int64(k), cx)
		return core.Result[[]T]{Value: dst}, true
	}
	if c.idleLocked() {
		c.rxWaker = nil
		c.mu.Unlock()
		f.waiting = false
		f.done = true
		dst, f.dst = f.dst, nil
		return core.Result[[]T]{Value: dst, Err: ErrClosed}, true
	}
	c.rxWaker = cx.Waker()
	f.waiting = true
	c.mu.Unlock()
	return core.Result[[]T]{}, false
}

// Drop implements [core.Dropper], as [RecvFuture.Drop].
func (f *RecvManyFuture[T]) Drop() {
	if f.waiting {
		f.c.mu.Lock()
		f.c.rxWaker = nil
		f.c.mu.Unlock()
		f.waiting = false
	}
	f.dst = nil
	f.done = true
}
