package wio_test

import (
	"errors"
	"os"
	"syscall"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/lib/wio"
)

// These tests give operations a deadline of zero, which passes at the
// first poll without arming the timer: the Context's worker has a clock
// and a timer that must not be used.

type unusedTimer struct{}

func (unusedTimer) Insert(*core.TimerEntry)              { panic("the timer was used") }
func (unusedTimer) Reset(*core.TimerEntry, core.Instant) { panic("the timer was used") }
func (unusedTimer) Cancel(*core.TimerEntry) bool         { panic("the timer was used") }
func (unusedTimer) NextDeadline() (core.Instant, bool)   { return 0, false }
func (unusedTimer) Fire(core.Instant) int                { return 0 }
func (unusedTimer) Len() int                             { return 0 }

type timeWorker struct{ t *core.Time }

func (w timeWorker) Scheduler() core.Scheduler { return nil }
func (w timeWorker) Defer(x core.Waker)        { x.Wake() }
func (w timeWorker) Driver() core.Driver       { return nil }
func (w timeWorker) Time() *core.Time          { return w.t }

func timeContext() *core.Context {
	return spi.NewWorkerContext(timeWorker{&core.Time{Clock: core.NewVirtualClock(), Timer: unusedTimer{}}}).Context()
}

// stoppableOp waits until the test finishes it. It is a Canceller whose
// Cancel reports cancellable.
type stoppableOp struct {
	cancellable      bool
	cancels, dropped int
	done             bool
	res              core.Result[int]
}

func (o *stoppableOp) Poll(*core.Context) (core.Result[int], bool) { return o.res, o.done }
func (o *stoppableOp) Drop()                                       { o.dropped++ }
func (o *stoppableOp) Cancel() bool                                { o.cancels++; return o.cancellable }

func (o *stoppableOp) finish(n int, err error) {
	o.done, o.res = true, core.Result[int]{Value: n, Err: err}
}

func TestATimeoutCancelsACancellerAndReturnsWhatItDid(t *testing.T) {
	cx := timeContext()
	op := &stoppableOp{cancellable: true}
	f := wio.Timeout[int](op, 0)
	if _, ok := f.Poll(cx); ok {
		t.Fatal("the timeout resolved while its cancelled operation was pending")
	}
	if op.cancels != 1 || op.dropped != 0 {
		t.Fatalf("at the deadline: %d cancels, %d drops; want one cancel and no drop", op.cancels, op.dropped)
	}
	// The operation had written 3 bytes before the cancel reached it.
	op.finish(3, nil)
	r, ok := f.Poll(cx)
	if !ok || r.Value != 3 || r.Err != nil {
		t.Fatalf("the timeout resolved to (%d, %v), %v; want the operation's own (3, <nil>)", r.Value, r.Err, ok)
	}
	if op.dropped != 0 {
		t.Fatal("a completed operation was dropped")
	}
}

func TestATimeoutWhoseCancellerStoppedHavingDoneNothingFailsWithDeadlineExceeded(t *testing.T) {
	cx := timeContext()
	op := &stoppableOp{cancellable: true}
	f := wio.Timeout[int](op, 0)
	f.Poll(cx)
	op.finish(0, &os.SyscallError{Syscall: "write", Err: syscall.ECANCELED})
	r, ok := f.Poll(cx)
	if !ok || r.Value != 0 || !errors.Is(r.Err, os.ErrDeadlineExceeded) {
		t.Fatalf("the timeout resolved to (%d, %v), %v; want (0, deadline exceeded)", r.Value, r.Err, ok)
	}
}

func TestATimeoutKeepsARealFailureOfItsCancelledOperation(t *testing.T) {
	cx := timeContext()
	op := &stoppableOp{cancellable: true}
	f := wio.Timeout[int](op, 0)
	f.Poll(cx)
	op.finish(0, syscall.EPIPE)
	if r, _ := f.Poll(cx); !errors.Is(r.Err, syscall.EPIPE) {
		t.Fatalf("the timeout resolved to (%d, %v); want the operation's EPIPE", r.Value, r.Err)
	}
}

func TestDroppingATimeoutWhileItsOperationIsBeingCancelledDropsIt(t *testing.T) {
	cx := timeContext()
	op := &stoppableOp{cancellable: true}
	f := wio.Timeout[int](op, 0)
	f.Poll(cx)
	core.Drop(f)
	if op.dropped != 1 {
		t.Fatalf("after dropping the timeout the operation was dropped %d times, want once", op.dropped)
	}
}

func TestATimeoutDropsAnOperationThatNeedsNoCancel(t *testing.T) {
	cx := timeContext()
	op := &stoppableOp{cancellable: false}
	r, ok := wio.Timeout[int](op, 0).Poll(cx)
	if !ok || !errors.Is(r.Err, os.ErrDeadlineExceeded) {
		t.Fatalf("the timeout resolved to (%d, %v), %v; want deadline exceeded at once", r.Value, r.Err, ok)
	}
	if op.cancels != 1 || op.dropped != 1 {
		t.Fatalf("%d cancels, %d drops; want Cancel asked once (it declined) and the operation dropped", op.cancels, op.dropped)
	}
}

func TestDroppingAPendingTimeoutDropsItsOperationWithoutCancellingIt(t *testing.T) {
	op := &stoppableOp{cancellable: true}
	core.Drop(wio.Timeout[int](op, 0))
	if op.cancels != 0 || op.dropped != 1 {
		t.Fatalf("%d cancels, %d drops; want the operation dropped, not cancelled", op.cancels, op.dropped)
	}
}
