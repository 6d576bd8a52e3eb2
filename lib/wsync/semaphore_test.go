package wsync_test

import (
	"math/rand/v2"
	gosync "sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
)

func TestAcquireTakesAvailablePermitsAtOnce(t *testing.T) {
	s := wsync.NewSemaphore(5)
	err, ok := poll(newHand(), core.Future[error](s.Acquire(3)))
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 2, s.Available())
}

func TestAcquireOfZeroPermitsIsReadyAtOnce(t *testing.T) {
	s := wsync.NewSemaphore(0)
	err, ok := poll(newHand(), core.Future[error](s.Acquire(0)))
	require.True(t, ok)
	require.NoError(t, err)
}

func TestAcquireWaitsUntilEnoughPermitsAreReleased(t *testing.T) {
	s := wsync.NewSemaphore(1)
	h := newHand()
	f := s.Acquire(3)
	_, ok := poll(h, core.Future[error](f))
	require.False(t, ok)
	assert.Equal(t, 0, s.Available(), "a queued acquire keeps what it took")
	s.Release(1)
	assert.False(t, h.Woken(), "two of three permits are not enough")
	_, ok = poll(h, core.Future[error](f))
	require.False(t, ok)
	s.Release(1)
	assert.True(t, h.Woken())
	err, ok := poll(h, core.Future[error](f))
	require.True(t, ok)
	require.NoError(t, err)
	assert.Equal(t, 0, s.Available())
}

func TestLargeRequestAtTheHeadBlocksSmallerOnesBehindIt(t *testing.T) {
	s := wsync.NewSemaphore(3)
	big, small := newHand(), newHand()
	fb := s.Acquire(5)
	fs := s.Acquire(1)
	_, ok := poll(big, core.Future[error](fb))
	require.False(t, ok)
	_, ok = poll(small, core.Future[error](fs))
	require.False(t, ok, "a smaller request may not overtake the head")
	assert.ErrorIs(t, s.TryAcquire(1), wsync.ErrNoPermits, "nor may a try-acquire")
	s.Release(1)
	assert.False(t, small.Woken())
	assert.False(t, big.Woken())
	s.Release(1) // the head now has its 5
	assert.True(t, big.Woken())
	assert.False(t, small.Woken())
	_, ok = poll(big, core.Future[error](fb))
	require.True(t, ok)
	s.Release(1)
	assert.True(t, small.Woken())
	_, ok = poll(small, core.Future[error](fs))
	require.True(t, ok)
}

func TestAcquiresAreGrantedInArrivalOrder(t *testing.T) {
	s := wsync.NewSemaphore(0)
	const n = 40 // more than one batch of wakes
	hands := make([]*hand, n)
	futs := make([]*wsync.AcquireFuture, n)
	for i := range futs {
		hands[i] = newHand()
		futs[i] = s.Acquire(1)
		_, ok := poll(hands[i], core.Future[error](futs[i]))
		require.False(t, ok)
	}
	for i := range futs {
		s.Release(1)
		for j := range futs {
			assert.Equal(t, i == j, hands[j].Woken(), "release %d woke waiter %d", i, j)
		}
		_, ok := poll(hands[i], core.Future[error](futs[i]))
		require.True(t, ok)
	}
	// One release for everyone wakes them all, across wake batches.
	for i := range futs {
		futs[i] = s.Acquire(1)
		_, ok := poll(hands[i], core.Future[error](futs[i]))
		require.False(t, ok)
	}
	s.Release(n)
	for i := range futs {
		require.True(t, hands[i].Woken(), "waiter %d", i)
		_, ok := poll(hands[i], core.Future[error](futs[i]))
		require.True(t, ok)
	}
}

func TestTryAcquireFailsWhileAcquiresAreQueued(t *testing.T) {
	s := wsync.NewSemaphore(1)
	require.NoError(t, s.TryAcquire(1))
	assert.ErrorIs(t, s.TryAcquire(1), wsync.ErrNoPermits)
	f := s.Acquire(1)
	_, ok := poll(newHand(), core.Future[error](f))
	require.False(t, ok)
	s.Release(1)
	assert.ErrorIs(t, s.TryAcquire(1), wsync.ErrNoPermits, "the released permit went to the waiter")
	f.Drop()
	require.NoError(t, s.TryAcquire(1), "the dropped waiter passed it back")
}

func TestCloseFailsQueuedAndLaterAcquires(t *testing.T) {
	s := wsync.NewSemaphore(2)
	h := newHand()
	f := s.Acquire(5)
	_, ok := poll(h, core.Future[error](f))
	require.False(t, ok)
	s.Close()
	assert.True(t, h.Woken())
	assert.True(t, s.IsClosed())
	err, ok := poll(h, core.Future[error](f))
	require.True(t, ok)
	assert.ErrorIs(t, err, wsync.ErrClosed)
	assert.Equal(t, 2, s.Available(), "the permits the waiter had taken are given back")
	err, ok = poll(newHand(), core.Future[error](s.Acquire(1)))
	require.True(t, ok)
	assert.ErrorIs(t, err, wsync.ErrClosed)
	assert.ErrorIs(t, s.TryAcquire(1), wsync.ErrClosed)
	s.Release(1)
	assert.Equal(t, 3, s.Available(), "releases still count after close")
}

func TestDroppedAcquireReturnsItsPartialPermits(t *testing.T) {
	s := wsync.NewSemaphore(2)
	big, next := newHand(), newHand()
	fb := s.Acquire(4)
	fn := s.Acquire(2)
	_, ok := poll(big, core.Future[error](fb))
	require.False(t, ok)
	_, ok = poll(next, core.Future[error](fn))
	require.False(t, ok)
	fb.Drop()
	assert.True(t, next.Woken(), "the two permits the head held go to the next waiter")
	_, ok = poll(next, core.Future[error](fn))
	require.True(t, ok)
	assert.Equal(t, 0, s.Available())
}

func TestAcquireDroppedWhenGrantedPassesPermitsToTheNextWaiter(t *testing.T) {
	s := wsync.NewSemaphore(0)
	first, second := newHand(), newHand()
	f1, f2 := s.Acquire(1), s.Acquire(1)
	_, ok := poll(first, core.Future[error](f1))
	require.False(t, ok)
	_, ok = poll(second, core.Future[error](f2))
	require.False(t, ok)
	s.Release(1)
	require.True(t, first.Woken())
	// The first waiter is dropped at the moment it is woken.
	f1.Drop()
	assert.True(t, second.Woken(), "the wake passed to the next waiter")
	_, ok = poll(second, core.Future[error](f2))
	require.True(t, ok)
	f1.Drop() // idempotent
	assert.Equal(t, 0, s.Available())
}

func TestDroppingACompletedAcquireKeepsItsPermits(t *testing.T) {
	s := wsync.NewSemaphore(1)
	f := s.Acquire(1)
	_, ok := poll(newHand(), core.Future[error](f))
	require.True(t, ok)
	f.Drop()
	assert.Equal(t, 0, s.Available(), "the permits belong to the caller after ready")
}

func TestForgetRemovesOnlyAvailablePermits(t *testing.T) {
	s := wsync.NewSemaphore(3)
	assert.Equal(t, 2, s.Forget(2))
	assert.Equal(t, 1, s.Forget(5))
	assert.Equal(t, 0, s.Forget(1))
	assert.Equal(t, 0, s.Available())
}

func TestZeroSemaphoreHasNoPermits(t *testing.T) {
	var s wsync.Semaphore
	assert.ErrorIs(t, s.TryAcquire(1), wsync.ErrNoPermits)
	s.Release(2)
	assert.NoError(t, s.TryAcquire(2))
}

func TestAcquireOutOfRangePanics(t *testing.T) {
	s := wsync.NewSemaphore(1)
	assert.Panics(t, func() { s.Acquire(-1) })
	assert.Panics(t, func() { wsync.NewSemaphore(-1) })
}

func TestReusingAWaitingAcquirePanics(t *testing.T) {
	s := wsync.NewSemaphore(0)
	var f wsync.AcquireFuture
	s.AcquireInto(&f, 1)
	_, ok := poll(newHand(), core.Future[error](&f))
	require.False(t, ok)
	assert.Panics(t, func() { s.AcquireInto(&f, 1) })
	f.Drop()
	assert.NotPanics(t, func() { s.AcquireInto(&f, 1) })
}

func TestAcquireConsumesBudget(t *testing.T) {
	s := wsync.NewSemaphore(1)
	var w waker
	cx := budgetContext(&w)
	var f wsync.AcquireFuture
	n := 0
	for {
		_, ok := s.AcquireInto(&f, 1).Poll(cx)
		if !ok {
			break
		}
		s.Release(1)
		n++
	}
	assert.Equal(t, core.Budget, n, "the task yields after Budget acquires")
	assert.True(t, w.Woken(), "the spent budget woke the task")
	f.Drop()
	assert.Equal(t, 1, s.Available(), "a budget-refused acquire took nothing")
}

func TestAcquireIntoAllocatesNothing(t *testing.T) {
	s := wsync.NewSemaphore(1)
	h := newHand()
	var f wsync.AcquireFuture
	allocs := testing.AllocsPerRun(100, func() {
		s.AcquireInto(&f, 1).Poll(h.Cx)
		s.Release(1)
	})
	assert.Zero(t, allocs)
}

func TestReleaseFromWakesTheWaiterOnTheCallingWorker(t *testing.T) {
	s := wsync.NewSemaphore(0)
	cx, sched, task := workerContext()
	f := s.Acquire(1)
	wcx := polltest.TaskContext(cx, task)
	_, ok := f.Poll(wcx)
	require.False(t, ok)
	s.ReleaseFrom(cx, 1)
	assert.EqualValues(t, 1, sched.Local.Load(), "scheduled on the releasing worker")
	assert.EqualValues(t, 0, sched.Remote.Load())
	f.Drop()
}

func TestReleaseFromAnotherGoroutineIsARemoteWake(t *testing.T) {
	s := wsync.NewSemaphore(0)
	cx, sched, task := workerContext()
	f := s.Acquire(1)
	wcx := polltest.TaskContext(cx, task)
	_, ok := f.Poll(wcx)
	require.False(t, ok)
	s.Release(1)
	assert.EqualValues(t, 0, sched.Local.Load())
	assert.EqualValues(t, 1, sched.Remote.Load())
	f.Drop()
}

// TestPermitsAreConservedUnderConcurrentAcquireDropAndRelease runs
// goroutines that acquire random amounts, sometimes dropping the acquire
// at a random point, and release what they got. At the end every permit
// is back.
func TestPermitsAreConservedUnderConcurrentAcquireDropAndRelease(t *testing.T) {
	const permits = 7
	s := wsync.NewSemaphore(permits)
	var wg gosync.WaitGroup
	var granted atomic.Int64
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			h := newHand()
			var f wsync.AcquireFuture
			for i := 0; i < 2000; i++ {
				n := 1 + rng.IntN(permits)
				s.AcquireInto(&f, n)
				if rng.IntN(4) == 0 {
					// Poll a few times, then give up.
					for k := rng.IntN(3); k > 0; k-- {
						if _, ok := f.Poll(h.Cx); ok {
							s.Release(n)
							break
						}
					}
					f.Drop()
					continue
				}
				err := future.Wait[error](&f)
				require.NoError(t, err)
				granted.Add(1)
				s.Release(n)
			}
		}(g)
	}
	wg.Wait()
	assert.Equal(t, permits, s.Available())
	assert.Positive(t, granted.Load())
}

func TestAcquireOfZeroPermitsDoesNotWaitBehindOthers(t *testing.T) {
	s := wsync.NewSemaphore(0)
	f := s.Acquire(1)
	_, ok := poll(newHand(), core.Future[error](f))
	require.False(t, ok)
	err, ok := poll(newHand(), core.Future[error](s.Acquire(0)))
	require.True(t, ok)
	require.NoError(t, err)
	assert.NoError(t, s.TryAcquire(0))
	f.Drop()
}
