package mpsc

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/sema"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// MaxCapacity is the largest capacity of a bounded channel.
const MaxCapacity = int(sema.MaxPermits)

// New returns a bounded channel that buffers up to capacity messages. Its
// sender applies back-pressure: a send waits, in FIFO order with the other
// sends, until the receiver has made room. It panics unless
// 1 <= capacity <= [MaxCapacity].
func New[T any](capacity int) (*Sender[T], *Receiver[T]) {
	if capacity < 1 || capacity > MaxCapacity {
		panic("weft/mpsc: bounded channel requires 1 <= capacity <= MaxCapacity")
	}
	c := newChannel[T](int64(capacity))
	return &Sender[T]{c: c}, newReceiver(c)
}

// Sender is a handle to the sending side of a bounded channel. A Sender may
// be used by many tasks and goroutines at once; [Sender.Clone] makes
// another handle, and the channel closes for the receiver when every handle
// has been closed with [Sender.Close].
type Sender[T any] struct {
	c      *channel[T]
	closed atomic.Bool
}

// Clone returns a new handle to the same channel. It panics if tx was
// closed.
func (tx *Sender[T]) Clone() *Sender[T] {
	if tx.closed.Load() {
		panic("weft/mpsc: Clone of a closed Sender")
	}
	tx.c.senders.Add(1)
	return &Sender[T]{c: tx.c}
}

// Close releases this handle. When the last handle is closed the receiver
// sees [ErrClosed] after the buffered messages (and those sent through
// permits still held). Closing a handle twice does nothing.
func (tx *Sender[T]) Close() {
	if tx.closed.CompareAndSwap(false, true) {
		tx.c.closeSender()
	}
}

// IsClosed reports whether the receiver closed the channel: sends can no
// longer succeed.
func (tx *Sender[T]) IsClosed() bool {
	tx.c.mu.Lock()
	defer tx.c.mu.Unlock()
	return tx.c.sem.IsClosed()
}

// Capacity returns how many messages could be sent now without waiting.
func (tx *Sender[T]) Capacity() int {
	tx.c.mu.Lock()
	defer tx.c.mu.Unlock()
	return int(tx.c.sem.Available())
}

// MaxCapacity returns the capacity the channel was created with.
func (tx *Sender[T]) MaxCapacity() int { return int(tx.c.capacity) }

// Send returns a future that waits for capacity and then sends v. It
// resolves to nil once v is in the channel, or to [ErrClosed] if the
// channel was closed first (v was not sent).
//
// Send is cancel-safe: the future sends v in the very poll that finds its
// capacity granted, so a SendFuture dropped before it resolved has not
// sent v, and capacity granted to it goes to the next sender.
func (tx *Sender[T]) Send(v T) *SendFuture[T] { return tx.SendInto(new(SendFuture[T]), v) }

// SendInto is [Sender.Send] without an allocation: it starts sending v
// through f, which must not be waiting, and returns f. A task that sends in
// a loop keeps one SendFuture in its state.
func (tx *Sender[T]) SendInto(f *SendFuture[T], v T) *SendFuture[T] {
	f.w.Reset(&tx.c.sem, 1)
	f.c = tx.c
	f.v = v
	f.handleClosed = tx.closed.Load()
	return f
}

// TrySend sends v if the channel has capacity now. It returns [ErrFull]
// when it has none (or other sends are waiting for it) and [ErrClosed]
// when the receiver closed the channel or this handle is closed; v is not
// sent then. It never waits and may be called from any goroutine.
func (tx *Sender[T]) TrySend(v T) error {
	if tx.closed.Load() {
		return ErrClosed
	}
	c := tx.c
	c.mu.Lock()
	switch c.sem.TryAcquire(1) {
	case nil:
		w := c.pushLocked(v)
		c.mu.Unlock()
		waitq.Wake(nil, w)
		return nil
	case sema.ErrClosed:
		c.mu.Unlock()
		return ErrClosed
	default:
		c.mu.Unlock()
		return ErrFull
	}
}

// Reserve returns a future that waits for capacity for one message and
// resolves to a [Permit] for it, or to [ErrClosed]. Reserving first and
// sending through the permit lets a task decide what to send once it is
// sure it can. A ReserveFuture dropped before it resolved gives back what
// it was granted.
func (tx *Sender[T]) Reserve() *ReserveFuture[T] { return tx.ReserveMany(1) }

// ReserveMany is [Sender.Reserve] for n messages at once: the permit is
// granted as a unit, in FIFO order with the other sends. It panics unless
// 1 <= n <= MaxCapacity().
func (tx *Sender[T]) ReserveMany(n int) *ReserveFuture[T] {
	return tx.ReserveManyInto(new(ReserveFuture[T]), n)
}

// ReserveManyInto is [Sender.ReserveMany] without an allocation: it starts
// the reservation in f, which must not be waiting, and returns f.
func (tx *Sender[T]) ReserveManyInto(f *ReserveFuture[T], n int) *ReserveFuture[T] {
	if n < 1 || int64(n) > tx.c.capacity {
		panic("weft/mpsc: ReserveMany requires 1 <= n <= MaxCapacity()")
	}
	f.w.Reset(&tx.c.sem, int64(n))
	f.c = tx.c
	f.n = n
	f.handleClosed = tx.closed.Load()
	return f
}

// TryReserve reserves capacity for one message if it is available now.
func (tx *Sender[T]) TryReserve() (Permit[T], error) { return tx.TryReserveMany(1) }

// TryReserveMany reserves capacity for n messages if it is available now.
// It returns [ErrFull] or [ErrClosed] otherwise.
func (tx *Sender[T]) TryReserveMany(n int) (Permit[T], error) {
	if n < 1 || int64(n) > tx.c.capacity {
		panic("weft/mpsc: TryReserveMany requires 1 <= n <= MaxCapacity()")
	}
	if tx.closed.Load() {
		return Permit[T]{}, ErrClosed
	}
	c := tx.c
	c.mu.Lock()
	err := c.sem.TryAcquire(int64(n))
	c.mu.Unlock()
	switch err {
	case nil:
		return Permit[T]{c: c, n: n}, nil
	case sema.ErrClosed:
		return Permit[T]{}, ErrClosed
	default:
		return Permit[T]{}, ErrFull
	}
}

// SendFuture is the future of [Sender.Send]: a [core.Future] of error and a
// [core.Dropper]. Its zero value is ready for [Sender.SendInto]. It must not
// be copied once polled.
type SendFuture[T any] struct {
	w            sema.LockedWaiter
	c            *channel[T]
	v            T
	handleClosed bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget before it tries to make progress.
func (f *SendFuture[T]) Poll(cx *core.Context) (error, bool) {
	if !cx.Proceed() {
		return nil, false
	}
	if f.handleClosed {
		f.handleClosed = false
		f.w.Drop()
		f.clear()
		return ErrClosed, true
	}
	c := f.c
	c.mu.Lock()
	if !c.closed && f.w.Grab() {
		// The common case: room at once, nobody queued.
		w := c.pushLocked(f.v)
		c.mu.Unlock()
		f.clear()
		if w != nil {
			waitq.Wake(cx, w)
		}
		return nil, true
	}
	if c.closed && !f.w.Pending() {
		// Every sender handle was closed before this send started.
		c.mu.Unlock()
		f.w.Drop()
		f.clear()
		return ErrClosed, true
	}
	ok, err := f.w.Poll(cx)
	if !ok {
		c.mu.Unlock()
		return nil, false
	}
	var w core.Waker
	if err != nil {
		// Closed while waiting: what we had been granted went back,
		// which may have made the closed channel idle.
		err = ErrClosed
		w = c.takeRxIfEndedLocked()
	} else {
		w = c.pushLocked(f.v)
	}
	c.mu.Unlock()
	f.clear()
	waitq.Wake(cx, w)
	return err, true
}

func (f *SendFuture[T]) clear() {
	var zero T
	f.v = zero
}

// Drop implements [core.Dropper]: a waiting send leaves the queue without
// sending, and capacity it was granted goes to the next sender.
func (f *SendFuture[T]) Drop() {
	f.clear()
	if !f.w.Pending() {
		f.w.Drop()
		return
	}
	c := f.c
	c.mu.Lock()
	c.releaseAndUnlock(f.w.Drop(), nil)
}

// ReserveFuture is the future of [Sender.Reserve] and
// [Sender.ReserveMany]: a [core.Future] of [core.Result] of [Permit] and a
// [core.Dropper]. Its zero value is ready for [Sender.ReserveManyInto]. It
// must not be copied once polled.
type ReserveFuture[T any] struct {
	w            sema.LockedWaiter
	c            *channel[T]
	n            int
	handleClosed bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget before it tries to make progress.
func (f *ReserveFuture[T]) Poll(cx *core.Context) (core.Result[Permit[T]], bool) {
	if !cx.Proceed() {
		return core.Result[Permit[T]]{}, false
	}
	if f.handleClosed {
		f.handleClosed = false
		f.w.Drop()
		return core.Result[Permit[T]]{Err: ErrClosed}, true
	}
	c := f.c
	c.mu.Lock()
	if c.closed && !f.w.Pending() {
		c.mu.Unlock()
		f.w.Drop()
		return core.Result[Permit[T]]{Err: ErrClosed}, true
	}
	ok, err := f.w.Poll(cx)
	if !ok {
		c.mu.Unlock()
		return core.Result[Permit[T]]{}, false
	}
	if err != nil {
		w := c.takeRxIfEndedLocked()
		c.mu.Unlock()
		waitq.Wake(cx, w)
		return core.Result[Permit[T]]{Err: ErrClosed}, true
	}
	c.mu.Unlock()
	return core.Result[Permit[T]]{Value: Permit[T]{c: c, n: f.n}}, true
}

// Drop implements [core.Dropper]: a waiting reservation leaves the queue
// and gives back what it was granted.
func (f *ReserveFuture[T]) Drop() {
	if !f.w.Pending() {
		f.w.Drop()
		return
	}
	c := f.c
	c.mu.Lock()
	c.releaseAndUnlock(f.w.Drop(), nil)
}

// Permit is capacity reserved in a bounded channel for Len more messages.
// Sending through it never waits and never fails. Whatever is not sent must
// be given back with [Permit.Release]; a permit that is simply forgotten
// keeps its capacity, and the receiver, once every sender is closed, waits
// for it. A Permit is a value owned by one task; do not copy it and use
// both copies.
type Permit[T any] struct {
	c *channel[T]
	n int
}

// Len returns how many messages the permit can still send.
func (p *Permit[T]) Len() int { return p.n }

// Send sends v using one unit of the permit. It panics if the permit is
// used up. It may be called from any goroutine; inside a poll prefer
// [Permit.SendFrom].
func (p *Permit[T]) Send(v T) { p.SendFrom(nil, v) }

// SendFrom is [Permit.Send] called from inside a poll with that poll's
// Context: a receiver it wakes is scheduled on the calling worker.
func (p *Permit[T]) SendFrom(cx *core.Context, v T) {
	if p.n <= 0 {
		panic("weft/mpsc: Send through a used-up Permit")
	}
	p.n--
	p.c.push(v, cx)
}

// Release gives the unused capacity back to the channel. Releasing an
// empty permit does nothing.
func (p *Permit[T]) Release() {
	if p.n > 0 {
		n := p.n
		p.n = 0
		p.c.mu.Lock()
		p.c.releaseAndUnlock(int64(n), nil)
	}
}
