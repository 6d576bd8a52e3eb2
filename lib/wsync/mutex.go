package wsync

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/sema"
)

// Mutex is a mutual-exclusion lock for tasks, built on the semaphore with
// one permit: tasks waiting for it are served in FIFO order, and a task
// that drops its Lock future loses its place in the queue.
//
// Unlike a standard library mutex it may be held across waits: a task can
// lock it, wait on I/O or another channel, and unlock it later, possibly
// from a different poll. For data that is never held across a wait the
// standard library's sync.Mutex is cheaper. There is no poisoning: if a
// task panics while holding the lock, the lock is simply never released
// unless the task's cleanup does so.
//
// The zero value is an unlocked mutex. A Mutex must not be copied after
// first use.
type Mutex struct {
	s sema.Sema
}

// Lock returns a future that resolves once the caller holds the lock. The
// holder releases it with Unlock.
func (m *Mutex) Lock() *LockFuture { return m.LockInto(new(LockFuture)) }

// LockInto is [Mutex.Lock] without an allocation: it starts the lock in f,
// which must not be waiting, and returns f.
func (m *Mutex) LockInto(f *LockFuture) *LockFuture {
	m.s.Ensure(1)
	f.w.Reset(&m.s, 1)
	return f
}

// TryLock takes the lock if it is free and nobody is queued for it, and
// reports whether it did.
func (m *Mutex) TryLock() bool {
	m.s.Ensure(1)
	return m.s.TryAcquire(1) == nil
}

// Unlock releases the lock, handing it to the oldest waiter. It may be
// called from any goroutine, not only by the task that locked. Unlocking a
// mutex that is not locked panics.
func (m *Mutex) Unlock() { m.UnlockFrom(nil) }

// UnlockFrom is [Mutex.Unlock] called from inside a poll with that poll's
// Context: the task it hands the lock to is scheduled on the calling
// worker.
func (m *Mutex) UnlockFrom(cx *core.Context) {
	m.s.Ensure(1)
	if m.s.Available() != 0 {
		panic("weft/sync: unlock of unlocked Mutex")
	}
	m.s.Release(1, cx)
}

// LockFuture is the future of [Mutex.Lock], [RWMutex.Lock] and
// [RWMutex.RLock]: a [core.Future] of [core.Unit] and a [core.Dropper]. Its
// zero value is ready for the Into methods. It must not be copied once
// polled.
type LockFuture struct {
	w sema.Waiter
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *LockFuture) Poll(cx *core.Context) (core.Unit, bool) {
	if !cx.Proceed() {
		return core.Unit{}, false
	}
	ok, _ := f.w.Poll(cx) // a lock's semaphore is never closed
	return core.Unit{}, ok
}

// Drop implements [core.Dropper]: a waiting lock leaves the queue; one that
// had just been granted is handed to the next waiter.
func (f *LockFuture) Drop() { f.w.Drop() }
