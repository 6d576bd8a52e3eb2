package wsync

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/sema"
)

// MaxReaders is the number of read locks an [RWMutex] can grant at once.
const MaxReaders = 1 << 30

// RWMutex is a reader/writer lock for tasks: any number of readers or one
// writer. It is a semaphore of [MaxReaders] permits where a read lock takes
// one and a write lock takes all of them, so it inherits the semaphore's
// strict FIFO order: a writer waiting for the readers to leave holds back
// every reader that arrives after it, and neither side starves.
//
// Like [Mutex] it may be held across waits and has no poisoning. The zero
// value is an unlocked RWMutex. An RWMutex must not be copied after first
// use.
type RWMutex struct {
	s sema.Sema
}

// Lock returns a future that resolves once the caller holds the write lock.
func (m *RWMutex) Lock() *LockFuture { return m.LockInto(new(LockFuture)) }

// LockInto is [RWMutex.Lock] without an allocation: it starts the lock in
// f, which must not be waiting, and returns f.
func (m *RWMutex) LockInto(f *LockFuture) *LockFuture {
	m.s.Ensure(MaxReaders)
	f.w.Reset(&m.s, MaxReaders)
	return f
}

// RLock returns a future that resolves once the caller holds a read lock.
func (m *RWMutex) RLock() *LockFuture { return m.RLockInto(new(LockFuture)) }

// RLockInto is [RWMutex.RLock] without an allocation: it starts the lock in
// f, which must not be waiting, and returns f.
func (m *RWMutex) RLockInto(f *LockFuture) *LockFuture {
	m.s.Ensure(MaxReaders)
	f.w.Reset(&m.s, 1)
	return f
}

// TryLock takes the write lock if nobody holds or waits for the RWMutex,
// and reports whether it did.
func (m *RWMutex) TryLock() bool {
	m.s.Ensure(MaxReaders)
	return m.s.TryAcquire(MaxReaders) == nil
}

// TryRLock takes a read lock if no writer holds or waits for the RWMutex,
// and reports whether it did.
func (m *RWMutex) TryRLock() bool {
	m.s.Ensure(MaxReaders)
	return m.s.TryAcquire(1) == nil
}

// Unlock releases the write lock. Unlocking an RWMutex that is not
// write-locked panics (when it can be detected).
func (m *RWMutex) Unlock() { m.UnlockFrom(nil) }

// UnlockFrom is [RWMutex.Unlock] called from inside a poll with that poll's
// Context: the tasks it wakes are scheduled on the calling worker.
func (m *RWMutex) UnlockFrom(cx *core.Context) {
	m.s.Ensure(MaxReaders)
	if m.s.Available() != 0 {
		panic("weft/sync: Unlock of an RWMutex that is not write-locked")
	}
	m.s.Release(MaxReaders, cx)
}

// RUnlock releases one read lock. Releasing a read lock of an RWMutex that
// holds none panics (when it can be detected).
func (m *RWMutex) RUnlock() { m.RUnlockFrom(nil) }

// RUnlockFrom is [RWMutex.RUnlock] called from inside a poll with that
// poll's Context.
func (m *RWMutex) RUnlockFrom(cx *core.Context) {
	m.s.Ensure(MaxReaders)
	if m.s.Available() >= MaxReaders {
		panic("weft/sync: RUnlock of an RWMutex that is not read-locked")
	}
	m.s.Release(1, cx)
}
