package wsync_test

import (
	gosync "sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync"
	"github.com/weftrt/weft/lib/wsync/internal/polltest"
)

func lockNow(t *testing.T, h *hand, f *wsync.LockFuture) {
	t.Helper()
	_, ok := poll(h, core.Future[core.Unit](f))
	require.True(t, ok, "lock not granted")
}

func lockWaits(t *testing.T, h *hand, f *wsync.LockFuture) {
	t.Helper()
	_, ok := poll(h, core.Future[core.Unit](f))
	require.False(t, ok, "lock granted while it should wait")
}

func TestZeroMutexIsUnlocked(t *testing.T) {
	var m wsync.Mutex
	lockNow(t, newHand(), m.Lock())
	assert.False(t, m.TryLock())
	m.Unlock()
	assert.True(t, m.TryLock())
	m.Unlock()
}

func TestMutexIsGrantedInFIFOOrder(t *testing.T) {
	var m wsync.Mutex
	require.True(t, m.TryLock())
	const n = 5
	hands := make([]*hand, n)
	futs := make([]*wsync.LockFuture, n)
	for i := range futs {
		hands[i], futs[i] = newHand(), m.Lock()
		lockWaits(t, hands[i], futs[i])
	}
	for i := range futs {
		m.Unlock()
		for j := range futs {
			assert.Equal(t, i == j, hands[j].Woken(), "unlock %d woke waiter %d", i, j)
		}
		lockNow(t, hands[i], futs[i])
	}
	m.Unlock()
}

func TestTryLockFailsWhileLockedOrQueued(t *testing.T) {
	var m wsync.Mutex
	require.True(t, m.TryLock())
	assert.False(t, m.TryLock())
	f := m.Lock()
	lockWaits(t, newHand(), f)
	m.Unlock()
	assert.False(t, m.TryLock(), "the lock went to the waiter, not to the barger")
	f.Drop()
	assert.True(t, m.TryLock(), "the dropped waiter passed the lock on")
	m.Unlock()
}

func TestDroppedLockLosesItsPlaceInTheQueue(t *testing.T) {
	var m wsync.Mutex
	require.True(t, m.TryLock())
	a, b := newHand(), newHand()
	fa, fb := m.Lock(), m.Lock()
	lockWaits(t, a, fa)
	lockWaits(t, b, fb)
	fa.Drop()
	m.Unlock()
	assert.True(t, b.Woken())
	assert.False(t, a.Woken())
	lockNow(t, b, fb)
	m.Unlock()
}

func TestLockDroppedWhenGrantedPassesTheLockOn(t *testing.T) {
	var m wsync.Mutex
	require.True(t, m.TryLock())
	a, b := newHand(), newHand()
	fa, fb := m.Lock(), m.Lock()
	lockWaits(t, a, fa)
	lockWaits(t, b, fb)
	m.Unlock()
	require.True(t, a.Woken())
	fa.Drop()
	assert.True(t, b.Woken())
	lockNow(t, b, fb)
	m.Unlock()
}

func TestUnlockOfAnUnlockedMutexPanics(t *testing.T) {
	var m wsync.Mutex
	assert.Panics(t, m.Unlock)
}

func TestLockConsumesBudget(t *testing.T) {
	var m wsync.Mutex
	var w waker
	cx := budgetContext(&w)
	var f wsync.LockFuture
	n := 0
	for {
		if _, ok := m.LockInto(&f).Poll(cx); !ok {
			break
		}
		m.Unlock()
		n++
	}
	assert.Equal(t, core.Budget, n)
	assert.True(t, w.Woken())
	f.Drop()
	assert.True(t, m.TryLock())
}

func TestUnlockFromHandsTheLockOverOnTheCallingWorker(t *testing.T) {
	var m wsync.Mutex
	require.True(t, m.TryLock())
	cx, sched, task := workerContext()
	f := m.Lock()
	wcx := polltest.TaskContext(cx, task)
	_, ok := f.Poll(wcx)
	require.False(t, ok)
	m.UnlockFrom(cx)
	assert.EqualValues(t, 1, sched.Local.Load())
	f.Drop()
}

func TestMutexExcludesConcurrentHolders(t *testing.T) {
	var m wsync.Mutex
	var wg gosync.WaitGroup
	counter := 0 // guarded by m; the race detector checks it
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var f wsync.LockFuture
			for i := 0; i < 1000; i++ {
				future.Wait[core.Unit](m.LockInto(&f))
				counter++
				m.Unlock()
			}
		}()
	}
	wg.Wait()
	assert.Equal(t, 8000, counter)
}

func TestReadersShareAnRWMutex(t *testing.T) {
	var m wsync.RWMutex
	h := newHand()
	lockNow(t, h, m.RLock())
	lockNow(t, h, m.RLock())
	assert.True(t, m.TryRLock())
	assert.False(t, m.TryLock())
	m.RUnlock()
	m.RUnlock()
	m.RUnlock()
	assert.True(t, m.TryLock())
	m.Unlock()
}

func TestWriterExcludesReadersAndWriters(t *testing.T) {
	var m wsync.RWMutex
	require.True(t, m.TryLock())
	r, w := newHand(), newHand()
	fr, fw := m.RLock(), m.Lock()
	lockWaits(t, r, fr)
	lockWaits(t, w, fw)
	m.Unlock()
	assert.True(t, r.Woken())
	assert.False(t, w.Woken(), "the writer waits for the reader")
	lockNow(t, r, fr)
	m.RUnlock()
	assert.True(t, w.Woken())
	lockNow(t, w, fw)
	m.Unlock()
}

func TestWaitingWriterHoldsBackLaterReaders(t *testing.T) {
	var m wsync.RWMutex
	h := newHand()
	lockNow(t, h, m.RLock())
	w, r := newHand(), newHand()
	fw := m.Lock()
	lockWaits(t, w, fw)
	fr := m.RLock()
	lockWaits(t, r, fr)
	assert.False(t, m.TryRLock(), "a reader may not overtake the waiting writer")
	m.RUnlock()
	assert.True(t, w.Woken())
	assert.False(t, r.Woken())
	lockNow(t, w, fw)
	m.Unlock()
	assert.True(t, r.Woken())
	lockNow(t, r, fr)
	m.RUnlock()
}

func TestRWMutexMisuseIsDetected(t *testing.T) {
	var m wsync.RWMutex
	assert.Panics(t, m.Unlock)
	assert.Panics(t, m.RUnlock)
}

func TestRWMutexExcludesWritersFromReaders(t *testing.T) {
	var m wsync.RWMutex
	var wg gosync.WaitGroup
	shared := 0
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var f wsync.LockFuture
			for i := 0; i < 500; i++ {
				if g%2 == 0 {
					future.Wait[core.Unit](m.LockInto(&f))
					shared++
					m.Unlock()
				} else {
					future.Wait[core.Unit](m.RLockInto(&f))
					_ = shared
					m.RUnlock()
				}
			}
		}(g)
	}
	wg.Wait()
	assert.Equal(t, 2000, shared)
}

func TestReadLockDroppedWhenGrantedPassesTheLockOn(t *testing.T) {
	var m wsync.RWMutex
	require.True(t, m.TryLock())
	r, w := newHand(), newHand()
	fr, fw := m.RLock(), m.Lock()
	lockWaits(t, r, fr)
	lockWaits(t, w, fw)
	m.Unlock()
	require.True(t, r.Woken())
	fr.Drop() // dropped at the moment it was granted
	assert.True(t, w.Woken(), "the writer behind it gets the lock")
	lockNow(t, w, fw)
	m.Unlock()
}
