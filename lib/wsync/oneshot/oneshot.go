// Package oneshot is a channel for a single value: one [Sender] sends at
// most once, without waiting, and one [Receiver] waits for the value.
// It is the usual way for a task to hand back a result ("reply to this
// request").
//
//	tx, rx := oneshot.New[int]()
//	tx.Send(42)                 // from any task or goroutine
//	r, ok := rx.Recv().Poll(cx) // in the receiving task
//
// # State word
//
// The channel is one allocation with an atomic state word of four bits,
// as in Tokio:
//
//	RX_TASK_SET  the receiver's waker is published
//	VALUE_SENT   the value is in the cell
//	CLOSED       no value will be sent: the receiver closed the channel,
//	             or the sender was closed without sending
//	TX_TASK_SET  the sender's waker (Sender.Closed) is published
//
// VALUE_SENT transfers the value cell: while it is clear only the sender
// touches the cell, once set only the receiver does. The sender writes the
// value and then sets VALUE_SENT with a compare-and-swap that refuses to
// set it once CLOSED is set, so a send racing with a close either delivers
// or fails, never both. A waker cell is written by its owner only while
// its *_TASK_SET bit is clear; to replace its waker the owner clears the
// bit with an atomic and-not that returns the previous word, and if the
// other side finished meanwhile the owner stops there. The other side
// reads the waker only if the bit was set in the word its own atomic
// update replaced. So every read of a waker cell is ordered after its
// write, and a completion is never missed.
//
// # Cancel safety and budget
//
// Dropping a [RecvFuture] loses nothing: the value stays in the cell for
// the next Recv or TryRecv. Every poll consumes one unit of the task's
// budget first.
package oneshot

import (
	"errors"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// ErrClosed means no value will arrive (for a receive: the sender was
// closed without sending, or the receiver closed the channel) or can be
// delivered (for a send: the receiver closed the channel).
var ErrClosed = errors.New("weft/oneshot: channel closed")

// ErrEmpty is returned by TryRecv when no value has been sent yet.
var ErrEmpty = errors.New("weft/oneshot: no value yet")

const (
	rxTaskSet uint32 = 1 << iota
	valueSent
	closed
	txTaskSet
)

// channel is the shared allocation: state, value and both handles.
type channel[T any] struct {
	state   atomic.Uint32
	value   T          // see "State word"
	rxWaker core.Waker // written by the receiver while RX_TASK_SET is clear
	txWaker core.Waker // written by the sender while TX_TASK_SET is clear
	tx      Sender[T]
	rx      Receiver[T]
}

// New returns the two ends of a oneshot channel, in one allocation.
func New[T any]() (*Sender[T], *Receiver[T]) {
	c := &channel[T]{}
	c.tx.c = c
	c.tx.closedF.c = c
	c.rx.c = c
	c.rx.recv.c = c
	return &c.tx, &c.rx
}

// Sender is the sending end. It belongs to one task or goroutine at a time.
type Sender[T any] struct {
	c       *channel[T]
	used    bool
	closedF ClosedFuture[T]
}

// Send delivers v to the receiver, without waiting, and wakes it. It
// returns [ErrClosed] if the receiver closed the channel first; v is then
// not delivered. A Sender sends at most once: calling Send again, or after
// Close, panics. Inside a poll prefer [Sender.SendFrom].
func (tx *Sender[T]) Send(v T) error { return tx.SendFrom(nil, v) }

// SendFrom is [Sender.Send] called from inside a poll with that poll's
// Context: the receiver it wakes is scheduled on the calling worker.
func (tx *Sender[T]) SendFrom(cx *core.Context, v T) error {
	if tx.used {
		panic("weft/oneshot: Send on a Sender that already sent or was closed")
	}
	tx.used = true
	c := tx.c
	c.value = v
	for {
		cur := c.state.Load()
		if cur&closed != 0 {
			// Never published: the cell is still ours to clear.
			var zero T
			c.value = zero
			return ErrClosed
		}
		// Publishes the value: pairs with the receiver's Load, And or Or
		// that sees VALUE_SENT before it reads the cell.
		if c.state.CompareAndSwap(cur, cur|valueSent) {
			// RX_TASK_SET in the replaced word: the receiver published its
			// waker and will not write it again now that the value is sent.
			if cur&rxTaskSet != 0 {
				waitq.Wake(cx, c.rxWaker)
			}
			return nil
		}
	}
}

// Close drops the sender without sending: the receiver gets [ErrClosed].
// Closing after Send, or twice, does nothing.
func (tx *Sender[T]) Close() {
	if tx.used {
		return
	}
	tx.used = true
	c := tx.c
	prev := c.state.Or(closed)
	if prev&rxTaskSet != 0 && prev&(valueSent|closed) == 0 {
		c.rxWaker.Wake()
	}
}

// IsClosed reports whether the receiver closed the channel (or this
// sender was closed): a Send would fail.
func (tx *Sender[T]) IsClosed() bool { return tx.c.state.Load()&closed != 0 }

// Closed returns a future that resolves when the receiver closes the
// channel, so that a task computing a reply can stop when nobody wants it
// any more. It is the sender's own future, reused by every call.
func (tx *Sender[T]) Closed() *ClosedFuture[T] {
	tx.closedF.done = false
	return &tx.closedF
}

// ClosedFuture is the future of [Sender.Closed]: a [core.Future] of
// [core.Unit] and a [core.Dropper].
type ClosedFuture[T any] struct {
	c    *channel[T]
	set  bool // this future published the sender's waker
	done bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *ClosedFuture[T]) Poll(cx *core.Context) (core.Unit, bool) {
	if f.done {
		panic("weft/oneshot: ClosedFuture polled after it completed")
	}
	if !cx.Proceed() {
		return core.Unit{}, false
	}
	c := f.c
	cur := c.state.Load()
	if cur&closed != 0 {
		f.done = true
		return core.Unit{}, true
	}
	if cur&txTaskSet != 0 {
		if f.set && core.SameWaker(c.txWaker, cx.Waker()) {
			return core.Unit{}, false
		}
		if prev := c.state.And(^txTaskSet); prev&closed != 0 {
			f.set = false
			f.done = true
			return core.Unit{}, true
		}
	}
	c.txWaker = cx.Waker()
	f.set = true
	if prev := c.state.Or(txTaskSet); prev&closed != 0 {
		f.done = true
		return core.Unit{}, true
	}
	return core.Unit{}, false
}

// Drop implements [core.Dropper]: the sender's waker is withdrawn.
func (f *ClosedFuture[T]) Drop() {
	if f.set && !f.done {
		f.c.state.And(^txTaskSet)
	}
	f.set = false
	f.done = true
}

// Receiver is the receiving end. It belongs to one task or goroutine at a
// time.
type Receiver[T any] struct {
	c        *channel[T]
	consumed bool
	recv     RecvFuture[T]
}

// Recv returns a future that resolves to the value, or to [ErrClosed] if
// none will come. It is cancel-safe. The future is the receiver's own,
// reused by every call; once the value was received, further receives
// resolve to ErrClosed.
func (rx *Receiver[T]) Recv() *RecvFuture[T] {
	rx.recv.done = false
	return &rx.recv
}

// TryRecv returns the value if it was sent, [ErrEmpty] if not yet, or
// [ErrClosed] if it never will be (or was already received).
func (rx *Receiver[T]) TryRecv() (T, error) {
	var zero T
	if rx.consumed {
		return zero, ErrClosed
	}
	cur := rx.c.state.Load()
	switch {
	case cur&valueSent != 0:
		return rx.consume(), nil
	case cur&closed != 0:
		return zero, ErrClosed
	}
	return zero, ErrEmpty
}

// consume takes the value out of the cell; VALUE_SENT made it ours.
func (rx *Receiver[T]) consume() T {
	var zero T
	v := rx.c.value
	rx.c.value = zero
	rx.consumed = true
	return v
}

// Close closes the channel from the receiving side: a later Send fails and
// a task waiting in [Sender.Closed] is woken. A value sent before Close can
// still be received.
func (rx *Receiver[T]) Close() {
	c := rx.c
	prev := c.state.Or(closed)
	if prev&txTaskSet != 0 && prev&(valueSent|closed) == 0 {
		c.txWaker.Wake()
	}
}

// RecvFuture is the future of [Receiver.Recv]: a [core.Future] of
// [core.Result] of T and a [core.Dropper].
type RecvFuture[T any] struct {
	c    *channel[T]
	set  bool // this future published the receiver's waker
	done bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *RecvFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	if f.done {
		panic("weft/oneshot: RecvFuture polled after it completed")
	}
	if !cx.Proceed() {
		return core.Result[T]{}, false
	}
	c := f.c
	rx := &c.rx
	if rx.consumed {
		return f.finish(core.Result[T]{Err: ErrClosed})
	}
	cur := c.state.Load()
	if r, ok := f.outcome(cur); ok {
		return r, true
	}
	if cur&rxTaskSet != 0 {
		if f.set && core.SameWaker(c.rxWaker, cx.Waker()) {
			return core.Result[T]{}, false
		}
		// Take the waker cell back before replacing the waker; if the
		// channel completed meanwhile the sender may be reading it.
		if r, ok := f.outcome(c.state.And(^rxTaskSet)); ok {
			return r, true
		}
	}
	c.rxWaker = cx.Waker()
	f.set = true
	// Publishes the waker: pairs with the sender's CAS (or Close's Or),
	// which reads the waker only if it replaced a word with RX_TASK_SET.
	if r, ok := f.outcome(c.state.Or(rxTaskSet)); ok {
		return r, true
	}
	return core.Result[T]{}, false
}

// outcome returns the result if the state word w is final.
func (f *RecvFuture[T]) outcome(w uint32) (core.Result[T], bool) {
	switch {
	case w&valueSent != 0:
		return f.finish(core.Result[T]{Value: f.c.rx.consume()})
	case w&closed != 0:
		return f.finish(core.Result[T]{Err: ErrClosed})
	}
	return core.Result[T]{}, false
}

func (f *RecvFuture[T]) finish(r core.Result[T]) (core.Result[T], bool) {
	f.done = true
	f.set = false
	return r, true
}

// Drop implements [core.Dropper]: the receiver's waker is withdrawn. A
// value sent meanwhile stays for the next receive.
func (f *RecvFuture[T]) Drop() {
	if f.set && !f.done {
		f.c.state.And(^rxTaskSet)
	}
	f.set = false
	f.done = true
}
