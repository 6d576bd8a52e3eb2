package wsync

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/sema"
)

// ErrClosed is the error of an acquire on a closed [Semaphore].
var ErrClosed = sema.ErrClosed

// ErrNoPermits is returned by [Semaphore.TryAcquire] when the permits are
// not available at once, or other acquires are queued ahead.
var ErrNoPermits = sema.ErrNoPermits

// MaxPermits is the largest number of permits a [Semaphore] can hold.
const MaxPermits = int(sema.MaxPermits)

// Semaphore is a counting semaphore with a strictly FIFO queue (see
// "Fairness" in the package documentation). An acquire of n permits is
// served as a unit, in arrival order. Permits are not tied to the task that
// acquired them: whoever is done with them calls Release.
//
// Releases and acquires are totally ordered, like operations on one atomic
// value: whatever a task wrote before Release is visible to the task whose
// acquire takes those permits.
//
// The zero value has no permits; use [NewSemaphore] or [Semaphore.Release]
// to add some. A Semaphore must not be copied after first use.
type Semaphore struct {
	s sema.Sema
}

// NewSemaphore returns a semaphore holding permits permits. It panics if
// permits is negative or above [MaxPermits].
func NewSemaphore(permits int) *Semaphore {
	s := &Semaphore{}
	s.s.Init(int64(permits))
	return s
}

// Acquire returns a future that resolves to nil once n permits are the
// caller's, or to [ErrClosed] if the semaphore is closed first. Dropping
// the future before it resolves releases whatever it had been given. An
// acquire of zero permits resolves at once. It panics if n is negative or
// above [MaxPermits].
func (s *Semaphore) Acquire(n int) *AcquireFuture {
	return s.AcquireInto(new(AcquireFuture), n)
}

// AcquireInto is [Semaphore.Acquire] without an allocation: it starts the
// acquire in f, which must not be waiting, and returns f.
func (s *Semaphore) AcquireInto(f *AcquireFuture, n int) *AcquireFuture {
	f.w.Reset(&s.s, int64(n))
	return f
}

// TryAcquire takes n permits if they are available now and no acquire is
// queued; otherwise it returns [ErrNoPermits], or [ErrClosed] on a closed
// semaphore. It never waits.
func (s *Semaphore) TryAcquire(n int) error { return s.s.TryAcquire(int64(n)) }

// Release adds n permits, handing them to queued acquires in order. It may
// be called from any goroutine; inside a poll prefer
// [Semaphore.ReleaseFrom].
func (s *Semaphore) Release(n int) { s.s.Release(int64(n), nil) }

// ReleaseFrom is [Semaphore.Release] called from inside a poll with that
// poll's Context: a task it wakes is scheduled on the calling worker.
func (s *Semaphore) ReleaseFrom(cx *core.Context, n int) { s.s.Release(int64(n), cx) }

// Close makes every queued and later acquire fail with [ErrClosed], and
// TryAcquire too. It is the way to tell waiters a resource is going away.
// Release keeps working, so permits held at the time can still be returned.
func (s *Semaphore) Close() { s.s.Close() }

// IsClosed reports whether Close was called.
func (s *Semaphore) IsClosed() bool { return s.s.IsClosed() }

// Available returns the number of permits that could be acquired at once.
// It is zero while acquires are queued.
func (s *Semaphore) Available() int { return int(s.s.Available()) }

// Forget removes up to n available permits from the semaphore, without
// waiting and without waking anyone, and returns how many it removed. It
// shrinks the capacity of a semaphore used as a limit.
func (s *Semaphore) Forget(n int) int { return int(s.s.Forget(int64(n))) }

// AcquireFuture is the future of [Semaphore.Acquire]: a [core.Future] of
// error and a [core.Dropper]. Its zero value is ready for
// [Semaphore.AcquireInto]. It must not be copied once polled.
type AcquireFuture struct {
	w sema.Waiter
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *AcquireFuture) Poll(cx *core.Context) (error, bool) {
	if !cx.Proceed() {
		return nil, false
	}
	ok, err := f.w.Poll(cx)
	return err, ok
}

// Drop implements [core.Dropper]: a waiting acquire leaves the queue and
// releases the permits it had already been given.
func (f *AcquireFuture) Drop() { f.w.Drop() }
