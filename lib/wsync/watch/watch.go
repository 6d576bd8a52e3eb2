// Package watch is a single-value channel: one [Sender] publishes a
// value, any number of [Receiver]s read the latest one and wait for it to
// change. Intermediate values a receiver did not look at are simply
// skipped; a receiver never lags. It suits configuration, state and
// progress that many tasks follow.
//
//	tx, rx := watch.New(Config{})
//	tx.Send(newConfig)
//	err, ok := rx.Changed().Poll(cx) // in a receiving task
//	cfg := rx.BorrowAndUpdate()
//
// # Versions
//
// The channel keeps the value and a version number that every send
// increments. Each receiver remembers the version it has seen; Changed
// resolves as soon as the channel's version differs, and marks it seen. A
// receiver starts having seen the value current when it was created.
//
// # Waiting
//
// A receiver that waits links its Changed future (the node is inside the
// receiver: waiting allocates nothing) into the channel's intrusive
// waiter list; a send moves them all to a private list and wakes them in
// batches outside the lock. Every poll consumes one unit of the task's
// budget first; a dropped Changed future unlinks itself and loses nothing
// (the version it did not mark seen is still unseen).
//
// Values are copied in and out (Borrow returns a copy): use a pointer or
// an immutable value for large T.
package watch

import (
	"errors"
	gosync "sync"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/waitq"
)

// ErrClosed is the result of Changed once the sender is closed and the
// receiver has seen the last value, and of receiver operations after the
// receiver was closed.
var ErrClosed = errors.New("weft/watch: channel closed")

// ErrNoReceivers is returned by Send when no receiver exists; the value is
// not stored.
var ErrNoReceivers = errors.New("weft/watch: no receivers")

type shared[T any] struct {
	mu      gosync.Mutex
	value   T
	version uint64
	closed  bool // the sender is closed
	rxCount int
	waiters waitq.List[ChangedFuture[T]]
}

// New returns a watch channel holding init, its sender and a first
// receiver.
func New[T any](init T) (*Sender[T], *Receiver[T]) {
	sh := &shared[T]{value: init, rxCount: 1}
	return &Sender[T]{sh: sh}, newReceiver(sh, 0)
}

// Sender publishes values. It may be used from many tasks and goroutines.
type Sender[T any] struct {
	sh *shared[T]
}

// Send stores v as the current value and wakes every receiver waiting for
// a change. It returns [ErrNoReceivers], and stores nothing, when every
// receiver is closed, and [ErrClosed] after Close. Inside a poll prefer
// [Sender.SendFrom].
func (tx *Sender[T]) Send(v T) error { return tx.SendFrom(nil, v) }

// SendFrom is [Sender.Send] called from inside a poll with that poll's
// Context: the receivers it wakes are scheduled on the calling worker.
func (tx *Sender[T]) SendFrom(cx *core.Context, v T) error {
	sh := tx.sh
	sh.mu.Lock()
	switch {
	case sh.closed:
		sh.mu.Unlock()
		return ErrClosed
	case sh.rxCount == 0:
		sh.mu.Unlock()
		return ErrNoReceivers
	}
	sh.value = v
	sh.version++
	sh.wakeAllAndUnlock(cx)
	return nil
}

// SendReplace stores v whether or not any receiver exists, wakes waiting
// receivers, and returns the previous value. It panics after Close.
func (tx *Sender[T]) SendReplace(v T) T {
	var old T
	tx.SendModify(func(cur *T) { old, *cur = *cur, v })
	return old
}

// SendModify changes the current value in place with f, under the
// channel's lock, and wakes waiting receivers. f must not call back into
// the channel. It panics after Close.
func (tx *Sender[T]) SendModify(f func(*T)) {
	sh := tx.sh
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		panic("weft/watch: send on a closed Sender")
	}
	f(&sh.value)
	sh.version++
	sh.wakeAllAndUnlock(nil)
}

// wakeAllAndUnlock wakes every waiting receiver and releases mu. Called
// with mu held.
func (sh *shared[T]) wakeAllAndUnlock(cx *core.Context) {
	if sh.waiters.Empty() {
		sh.mu.Unlock()
		return
	}
	taken := new(waitq.List[ChangedFuture[T]])
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

// Borrow returns a copy of the current value.
func (tx *Sender[T]) Borrow() T {
	tx.sh.mu.Lock()
	defer tx.sh.mu.Unlock()
	return tx.sh.value
}

// Subscribe returns a new receiver that has seen the current value.
func (tx *Sender[T]) Subscribe() *Receiver[T] {
	sh := tx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.rxCount++
	return newReceiver(sh, sh.version)
}

// ReceiverCount returns the number of receivers not yet closed.
func (tx *Sender[T]) ReceiverCount() int {
	tx.sh.mu.Lock()
	defer tx.sh.mu.Unlock()
	return tx.sh.rxCount
}

// Close closes the channel: receivers see [ErrClosed] from Changed once
// they have seen the last value, which stays readable with Borrow.
// Closing twice does nothing.
func (tx *Sender[T]) Close() {
	sh := tx.sh
	sh.mu.Lock()
	if sh.closed {
		sh.mu.Unlock()
		return
	}
	sh.closed = true
	sh.wakeAllAndUnlock(nil)
}

// Receiver follows the channel's value. It belongs to one task (or
// goroutine) at a time.
type Receiver[T any] struct {
	sh      *shared[T]
	seen    uint64 // guarded by sh.mu
	closed  bool   // guarded by sh.mu
	changed ChangedFuture[T]
}

func newReceiver[T any](sh *shared[T], seen uint64) *Receiver[T] {
	rx := &Receiver[T]{sh: sh, seen: seen}
	rx.changed.rx = rx
	return rx
}

// Borrow returns a copy of the current value without marking it seen.
func (rx *Receiver[T]) Borrow() T {
	rx.sh.mu.Lock()
	defer rx.sh.mu.Unlock()
	return rx.sh.value
}

// BorrowAndUpdate returns a copy of the current value and marks it seen.
func (rx *Receiver[T]) BorrowAndUpdate() T {
	sh := rx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	rx.seen = sh.version
	return sh.value
}

// HasChanged reports whether a value was sent that this receiver has not
// seen. It returns [ErrClosed] when nothing is unseen and the sender is
// closed, or the receiver is.
func (rx *Receiver[T]) HasChanged() (bool, error) {
	sh := rx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	switch {
	case rx.closed:
		return false, ErrClosed
	case sh.version != rx.seen:
		return true, nil
	case sh.closed:
		return false, ErrClosed
	}
	return false, nil
}

// MarkUnchanged marks the current value seen.
func (rx *Receiver[T]) MarkUnchanged() {
	rx.sh.mu.Lock()
	rx.seen = rx.sh.version
	rx.sh.mu.Unlock()
}

// Changed returns a future that resolves to nil when the value changes
// from the version this receiver has seen (at once if it already has), and
// marks the new version seen; or to [ErrClosed] once the sender is closed
// and the last value seen. The future is the receiver's own, reused by
// every call.
func (rx *Receiver[T]) Changed() *ChangedFuture[T] {
	rx.changed.done = false
	return &rx.changed
}

// Clone returns another receiver that has seen what rx has seen.
func (rx *Receiver[T]) Clone() *Receiver[T] {
	sh := rx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	sh.rxCount++
	return newReceiver(sh, rx.seen)
}

// Close releases the receiver. Closing twice does nothing.
func (rx *Receiver[T]) Close() {
	sh := rx.sh
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if rx.closed {
		return
	}
	rx.closed = true
	sh.rxCount--
	rx.changed.node.Unlink()
	rx.changed.waker = nil
}

// ChangedFuture is the future of [Receiver.Changed]: a [core.Future] of
// error and a [core.Dropper]. It is the receiver's waiter node.
type ChangedFuture[T any] struct {
	rx    *Receiver[T]
	node  waitq.Node[ChangedFuture[T]]
	waker core.Waker // guarded by sh.mu
	done  bool
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget first.
func (f *ChangedFuture[T]) Poll(cx *core.Context) (error, bool) {
	if f.done {
		panic("weft/watch: ChangedFuture polled after it completed")
	}
	if !cx.Proceed() {
		return nil, false
	}
	rx := f.rx
	sh := rx.sh
	sh.mu.Lock()
	var err error
	switch {
	case rx.closed:
		err = ErrClosed
	case sh.version != rx.seen:
		rx.seen = sh.version
	case sh.closed:
		err = ErrClosed
	default:
		f.waker = cx.Waker()
		if !f.node.Linked() {
			sh.waiters.PushBack(&f.node, f)
		}
		sh.mu.Unlock()
		return nil, false
	}
	f.node.Unlink()
	f.waker = nil
	sh.mu.Unlock()
	f.done = true
	return err, true
}

// Drop implements [core.Dropper]: the wait ends; the change it did not
// mark seen stays unseen.
func (f *ChangedFuture[T]) Drop() {
	sh := f.rx.sh
	sh.mu.Lock()
	f.node.Unlink()
	f.waker = nil
	sh.mu.Unlock()
	f.done = true
}
