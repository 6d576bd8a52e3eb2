package wio

import (
	"errors"
	"syscall"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/timing"
)

// Timeout gives an I/O operation a deadline d after its first poll, through
// the runtime's timer (package timing). It resolves to the operation's own
// result if that comes first; otherwise the operation is stopped and the
// result's error is timing.ErrElapsed, which matches os.ErrDeadlineExceeded
// and context.DeadlineExceeded under errors.Is and reports Timeout() true,
// like the net package's deadline errors. It works on any future of a
// core.Result: a Read, a ReadFull, an Accept, a Copy, a file operation.
//
// Stopping an operation is dropping it (its waiter removed, nothing else
// lost: a read that had already received bytes leaves them to the next
// read), except for a [Canceller], such as a write on a completion driver,
// whose Drop would lose what it did. Such an operation is cancelled and
// polled until it reports its final result: if it stopped having done
// nothing, the result is (0, timing.ErrElapsed); if it had finished
// before the cancel reached it (a write that had written its bytes), its
// own result is returned, as if the deadline had come a moment later. So
// a timed-out write never hides bytes it wrote.
//
// The runtime must have a timer (timing's futures panic otherwise).
func Timeout[T any](op core.Future[core.Result[T]], d time.Duration) core.Future[core.Result[T]] {
	f := &timeoutFuture[T]{op: stoppable[T]{op: op}}
	f.t = timing.Timeout[core.Result[T]](&f.op, d)
	return f
}

// TimeoutAt is Timeout with an absolute deadline on the runtime's clock
// (see timing.Now).
func TimeoutAt[T any](op core.Future[core.Result[T]], deadline core.Instant) core.Future[core.Result[T]] {
	f := &timeoutFuture[T]{op: stoppable[T]{op: op}}
	f.t = timing.TimeoutAt[core.Result[T]](&f.op, deadline)
	return f
}

// Canceller is an optional interface of an operation's future whose Drop
// would lose what the operation did: a write on a completion driver
// (io_uring), which the kernel may have done in part or whole by the time
// the write is abandoned. Timeout and [Op.Stop] (which the deadlines of
// package weft/lib/co use) cancel such an operation instead of dropping
// it.
//
// Cancel asks a pending operation to stop as soon as it can. It reports
// true when the caller must go on polling the future, which then resolves
// to the operation's own result: what it did before it stopped (a write's
// count of bytes written), or an error matching syscall.ECANCELED if it
// stopped having done nothing. It reports false when the future may be
// dropped at once without losing anything (it has not started, or it is
// of a kind that loses nothing when dropped). The caller may still Drop
// the future instead of polling it after Cancel; then what it did is
// lost, as for any dropped operation. Cancel is called at most once, on a
// pending future.
type Canceller interface {
	Cancel() bool
}

// Cancel asks f to stop if it is a [Canceller] and reports whether the
// caller must keep polling it for its final result (see Canceller); false
// means f is to be dropped.
func Cancel[T any](f core.Future[T]) bool {
	c, ok := f.(Canceller)
	return ok && c.Cancel()
}

// Cancelled reports whether err is the error of an operation that a
// [Canceller]'s Cancel stopped before it did anything.
func Cancelled(err error) bool { return errors.Is(err, syscall.ECANCELED) }

type timeoutFuture[T any] struct {
	t  *timing.TimeoutFuture[core.Result[T]]
	op stoppable[T]
}

// stoppable is the operation as the timing.TimeoutFuture sees it: when
// the deadline drops it, a Canceller is cancelled instead (unless the
// Timeout itself is being dropped), and timeoutFuture polls it on.
type stoppable[T any] struct {
	op         core.Future[core.Result[T]]
	dropping   bool // the Timeout itself is dropped: drop op for real
	cancelling bool // op was cancelled at the deadline; poll it to its end
}

func (s *stoppable[T]) Poll(cx *core.Context) (core.Result[T], bool) { return s.op.Poll(cx) }

func (s *stoppable[T]) Drop() {
	if !s.dropping && Cancel(s.op) {
		s.cancelling = true
		return
	}
	core.Drop(s.op)
}

func (f *timeoutFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	if !f.op.cancelling {
		r, ok := f.t.Poll(cx)
		if !ok {
			return core.Result[T]{}, false
		}
		if r.Err == nil {
			return r.Value, true
		}
		if !f.op.cancelling {
			return core.Result[T]{Err: r.Err}, true
		}
	}
	// The deadline passed and the operation was cancelled: its own
	// result says what it did.
	r, ok := f.op.op.Poll(cx)
	if !ok {
		return core.Result[T]{}, false
	}
	f.op.cancelling = false
	if r.Err != nil && Cancelled(r.Err) {
		return core.Result[T]{Value: r.Value, Err: timing.ErrElapsed}, true
	}
	return r, true
}

func (f *timeoutFuture[T]) Drop() {
	f.op.dropping = true
	if f.op.cancelling {
		f.op.cancelling = false
		core.Drop(f.op.op)
		return
	}
	f.t.Drop()
}
