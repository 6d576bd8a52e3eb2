package core

import (
	"errors"
	"fmt"
)

// JoinHandle is the owner's view of a spawned task. It is a [Future] of the
// task's output: it resolves to (value, nil) when the task finished, or to
// (zero, *JoinError) when the task panicked or was cancelled. Awaiting a
// handle is cancel-safe: the output stays with the task until a poll returns
// it. Dropping a handle (or simply forgetting it) does not cancel the task.
//
// A *JoinHandle[T] shares its allocation with the task.
//
// # The join waker protocol
//
// The handle's waker lives in a plain field guarded by the JOIN_WAKER bit of
// the state word. While the bit is clear the handle owns the field; to
// publish a waker it writes the field, then sets the bit with a CAS that
// fails if COMPLETE was set meanwhile (the handle then reads the output
// itself). While the bit is set the handle only reads the field; to replace
// the waker it first clears the bit with a CAS that fails on COMPLETE. The
// runtime reads the field only after it set COMPLETE and saw the bit set, at
// which point the handle will not write it again. So a completion is never
// missed and the field is never read while written.
type JoinHandle[T any] cell[T]

func (h *JoinHandle[T]) cell() *cell[T] { return (*cell[T])(h) }

// ID returns the task's ID.
func (h *JoinHandle[T]) ID() TaskID { return h.hdr.id }

// Task returns the task header.
func (h *JoinHandle[T]) Task() *Task { return &h.hdr }

// IsFinished reports whether the task has completed, been cancelled or
// panicked. A finished task's handle resolves on its next poll.
func (h *JoinHandle[T]) IsFinished() bool { return h.hdr.state.load()&stComplete != 0 }

// Abort cancels the task: unless it completes first, its future is dropped
// by a worker and the handle resolves with a cancelled JoinError. Abort
// returns at once and may be called from any goroutine, any number of times.
func (h *JoinHandle[T]) Abort() { h.hdr.Abort() }

// Poll implements [Future]. It consumes one unit of the caller's budget.
func (h *JoinHandle[T]) Poll(cx *Context) (Result[T], bool) {
	c := h.cell()
	if !cx.Proceed() {
		return Result[T]{}, false
	}
	cur := c.hdr.state.load()
	if cur&stComplete != 0 {
		return c.result(), true
	}
	if cur&stJoinWaker == 0 {
		c.joinWaker = cx.waker
		if !c.hdr.state.setJoinWaker() {
			c.joinWaker = nil
			return c.result(), true
		}
		return Result[T]{}, false
	}
	if SameWaker(c.joinWaker, cx.waker) {
		return Result[T]{}, false
	}
	if !c.hdr.state.unsetJoinWaker() {
		return c.result(), true
	}
	c.joinWaker = cx.waker
	if !c.hdr.state.setJoinWaker() {
		c.joinWaker = nil
		return c.result(), true
	}
	return Result[T]{}, false
}

// Drop tells the task nobody will read its output. It does not cancel the
// task. Drop implements [Dropper].
func (h *JoinHandle[T]) Drop() {
	c := h.cell()
	prev := c.hdr.state.dropJoinInterest()
	if prev&stComplete != 0 {
		var zero T
		c.out = zero
	}
}

func (c *cell[T]) result() Result[T] {
	if c.err != nil {
		return Result[T]{Err: c.err}
	}
	return Result[T]{Value: c.out}
}

// Result is a value or an error, the output of futures that can fail.
type Result[T any] struct {
	Value T
	Err   error
}

// Unwrap returns the value and error as a pair.
func (r Result[T]) Unwrap() (T, error) { return r.Value, r.Err }

// SameWaker reports whether a and b certainly wake the same task. It is
// cheap and never panics; it may report false for equal wakers it cannot
// compare, which only costs a redundant re-registration.
func SameWaker(a, b Waker) bool {
	ta, ok := a.(*Task)
	if !ok {
		return false
	}
	tb, ok := b.(*Task)
	return ok && ta == tb
}

// JoinError is why a task produced no value: it was cancelled (aborted, or
// dropped by a runtime shutting down) or its future panicked.
type JoinError struct {
	id       TaskID
	panicked bool
	value    any
	stack    []byte
	cause    error
}

// TaskID returns the ID of the task that failed.
func (e *JoinError) TaskID() TaskID { return e.id }

// IsCancelled reports whether the task was cancelled before it finished.
func (e *JoinError) IsCancelled() bool { return !e.panicked }

// IsPanic reports whether the task's future panicked.
func (e *JoinError) IsPanic() bool { return e.panicked }

// PanicValue returns the value the future panicked with, or nil.
func (e *JoinError) PanicValue() any { return e.value }

// Stack returns the goroutine stack captured where the panic was recovered,
// or nil for a cancellation.
func (e *JoinError) Stack() []byte { return e.stack }

// Error describes the failure.
func (e *JoinError) Error() string {
	if e.panicked {
		return fmt.Sprintf("weft: task %d panicked: %v (the stack where it panicked: errors.As the error to a *core.JoinError and call Stack)", e.id, e.value)
	}
	return fmt.Sprintf("weft: task %d cancelled: %v", e.id, e.cause)
}

// Unwrap returns the cause of a cancellation ([ErrAborted], [ErrShutdown],
// or the reason a spawn was refused), or the panic value when it is an error.
func (e *JoinError) Unwrap() error {
	if e.panicked {
		err, _ := e.value.(error)
		return err
	}
	return e.cause
}

// IsCancelled reports whether err is a [JoinError] for a cancelled task.
func IsCancelled(err error) bool {
	var je *JoinError
	return errors.As(err, &je) && je.IsCancelled()
}

// IsPanic reports whether err is a [JoinError] for a task that panicked.
func IsPanic(err error) bool {
	var je *JoinError
	return errors.As(err, &je) && je.IsPanic()
}
