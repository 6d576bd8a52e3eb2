package mpsc

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// NewUnbounded returns a channel without a capacity limit: sending never
// waits, and the buffer grows as needed. Use it only where something else
// bounds the producers, or memory is the limit.
func NewUnbounded[T any]() (*UnboundedSender[T], *Receiver[T]) {
	c := newChannel[T](0)
	return &UnboundedSender[T]{c: c}, newReceiver(c)
}

// UnboundedSender is a handle to the sending side of an unbounded channel.
// It may be used by many tasks and goroutines at once; [UnboundedSender.Clone]
// makes another handle, and the channel closes for the receiver when every
// handle has been closed.
type UnboundedSender[T any] struct {
	c      *channel[T]
	closed atomic.Bool
}

// Clone returns a new handle to the same channel. It panics if tx was
// closed.
func (tx *UnboundedSender[T]) Clone() *UnboundedSender[T] {
	if tx.closed.Load() {
		panic("weft/mpsc: Clone of a closed UnboundedSender")
	}
	tx.c.senders.Add(1)
	return &UnboundedSender[T]{c: tx.c}
}

// Close releases this handle; when the last handle is closed the receiver
// sees [ErrClosed] after the buffered messages. Closing twice does nothing.
func (tx *UnboundedSender[T]) Close() {
	if tx.closed.CompareAndSwap(false, true) {
		tx.c.closeSender()
	}
}

// IsClosed reports whether the receiver closed the channel.
func (tx *UnboundedSender[T]) IsClosed() bool {
	c := tx.c
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rxClosed
}

// Send sends v without waiting. It returns [ErrClosed], and v is not sent,
// if the receiver closed the channel or this handle is closed. It may be
// called from any goroutine; inside a poll prefer
// [UnboundedSender.SendFrom].
func (tx *UnboundedSender[T]) Send(v T) error { return tx.SendFrom(nil, v) }

// SendFrom is [UnboundedSender.Send] called from inside a poll with that
// poll's Context: a receiver it wakes is scheduled on the calling worker.
func (tx *UnboundedSender[T]) SendFrom(cx *core.Context, v T) error {
	if tx.closed.Load() {
		return ErrClosed
	}
	c := tx.c
	c.mu.Lock()
	if c.rxClosed {
		c.mu.Unlock()
		return ErrClosed
	}
	w := c.pushLocked(v)
	c.mu.Unlock()
	waitq.Wake(cx, w)
	return nil
}
