package io

import (
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/timing"
)

// Timeout gives an I/O operation a deadline d after its first poll, through
// the runtime's timer (package timing). It resolves to the operation's own
// result if that comes first; otherwise the operation is dropped (its
// waiter removed, nothing else lost) and the result's error is
// timing.ErrElapsed, which matches os.ErrDeadlineExceeded and
// context.DeadlineExceeded under errors.Is and reports Timeout() true, like
// the net package's deadline errors. It works on any future of a
// core.Result: a Read, a ReadFull, an Accept, a Copy, a file operation.
//
// The runtime must have a timer (timing's futures panic otherwise).
func Timeout[T any](op core.Future[core.Result[T]], d time.Duration) core.Future[core.Result[T]] {
	return &timeoutFuture[T]{t: timing.Timeout(op, d)}
}

// TimeoutAt is Timeout with an absolute deadline on the runtime's clock
// (see timing.Now).
func TimeoutAt[T any](op core.Future[core.Result[T]], deadline core.Instant) core.Future[core.Result[T]] {
	return &timeoutFuture[T]{t: timing.TimeoutAt(op, deadline)}
}

type timeoutFuture[T any] struct {
	t *timing.TimeoutFuture[core.Result[T]]
}

func (f *timeoutFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	r, ok := f.t.Poll(cx)
	if !ok {
		return core.Result[T]{}, false
	}
	if r.Err != nil {
		return core.Result[T]{Err: r.Err}, true
	}
	return r.Value, true
}

func (f *timeoutFuture[T]) Drop() { f.t.Drop() }
