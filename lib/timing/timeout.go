package timing

import (
	"context"
	"os"
	"time"

	"github.com/weftrt/weft/core"
)

// ErrElapsed is the error of a [TimeoutFuture] whose deadline passed before
// its inner future completed. It matches context.DeadlineExceeded and
// os.ErrDeadlineExceeded under errors.Is, and has a Timeout method
// reporting true, like the net package's timeout errors.
var ErrElapsed error = elapsedError{}

// ErrTimeout is another name for [ErrElapsed].
var ErrTimeout = ErrElapsed

type elapsedError struct{}

// Error returns the message of ErrElapsed.
func (elapsedError) Error() string { return "weft: deadline elapsed" }

// Timeout reports true: the error is a timeout.
func (elapsedError) Timeout() bool { return true }

// Is makes errors.Is match the standard library's deadline errors.
func (elapsedError) Is(target error) bool {
	return target == context.DeadlineExceeded || target == os.ErrDeadlineExceeded
}

// TimeoutFuture runs a future with a deadline. It is a [core.Future] of
// [core.Result]: the inner value with a nil error, or [ErrElapsed] once the
// deadline passed first. It implements [core.Dropper].
type TimeoutFuture[T any] struct {
	inner core.Future[T]
	sleep SleepFuture
	done  bool
}

// Timeout runs f with a deadline d after the first poll. A d too large for
// the clock means no deadline.
func Timeout[T any](f core.Future[T], d time.Duration) *TimeoutFuture[T] {
	return &TimeoutFuture[T]{inner: f, sleep: SleepFuture{dur: d, state: sleepRelative}}
}

// TimeoutAt runs f until deadline on the runtime's clock.
func TimeoutAt[T any](f core.Future[T], deadline core.Instant) *TimeoutFuture[T] {
	t := &TimeoutFuture[T]{inner: f, sleep: SleepFuture{state: sleepAbsolute}}
	t.sleep.entry.Deadline = deadline
	return t
}

// Poll implements [core.Future]. The inner future is polled first; if it is
// ready the deadline's timer is cancelled and its value returned. Otherwise
// the deadline is polled, without consuming the budget; if it has passed
// the inner future is dropped and the result is [ErrElapsed].
func (t *TimeoutFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	if t.done {
		panic("weft/timing: TimeoutFuture polled after it completed or was dropped")
	}
	if v, ok := t.inner.Poll(cx); ok {
		t.finish(false)
		return core.Result[T]{Value: v}, true
	}
	if _, ok := t.sleep.poll(cx); ok {
		t.finish(true)
		return core.Result[T]{Err: ErrElapsed}, true
	}
	return core.Result[T]{}, false
}

// Deadline returns the timeout's deadline; false before the first poll of a
// relative timeout.
func (t *TimeoutFuture[T]) Deadline() (core.Instant, bool) { return t.sleep.Deadline() }

// Reset moves the deadline of a pending timeout.
func (t *TimeoutFuture[T]) Reset(deadline core.Instant) {
	if !t.done {
		t.sleep.Reset(deadline)
	}
}

// finish releases the timer and, after an expiry, the inner future.
func (t *TimeoutFuture[T]) finish(dropInner bool) {
	t.done = true
	t.sleep.Drop()
	if dropInner {
		core.Drop(t.inner)
	}
	t.inner = nil
}

// Drop implements [core.Dropper]: it drops the inner future and cancels the
// deadline. It is idempotent.
func (t *TimeoutFuture[T]) Drop() {
	if !t.done {
		t.finish(true)
	}
}
