// Package wsync holds weft's synchronisation primitives for tasks: [Mutex],
// [RWMutex], [Semaphore], [Notify], [Barrier] and [OnceCell]. Its
// subpackages are the channels: oneshot, mpsc, broadcast and watch. The
// name shadows the standard library's sync on purpose, as tokio::sync does;
// import it under another name where both are needed:
//
//	import "github.com/weftrt/weft/lib/wsync"
//
// Every wait is a future: Lock, Acquire, Notified, Wait and GetOrInit
// return one, and a task polls it like any other. None of them blocks a
// goroutine, so they are not meant for goroutines that have to block (use
// the standard library's primitives there, or drive a future with
// future.Wait). Operations that never wait (Unlock, Release, TryLock,
// NotifyOne) may be called from any goroutine.
//
// # Waiter lists
//
// A primitive keeps its waiting futures in an intrusive doubly-linked list
// guarded by its own mutex. The list node lives inside the future, so
// waiting allocates nothing beyond the future itself, and a future removes
// itself in O(1) when it is dropped. A waker is stored in the node when the
// future is polled and taken out, under the lock, by whoever grants the
// wait; it is woken after the lock is released, never under it. The granter
// unlinks the node and takes the waker before it publishes the grant with
// an atomic store; the future's next poll loads that grant without the lock
// and completes. Releasing many waiters at once (NotifyWaiters, a Barrier
// generation, Close) first moves them all to a private list in O(1), then
// wakes them in batches, so the lock is never held for long and waiters can
// still drop themselves meanwhile.
//
// # Fairness
//
// Semaphore, Mutex and RWMutex share one semaphore engine that is strictly
// FIFO: permits go to the oldest waiter first, and a request for several
// permits at the head of the queue keeps the permits released so far and
// blocks smaller requests behind it until it is satisfied. So a writer
// waiting for an RWMutex holds back readers that arrive after it, and no
// waiter starves. TryAcquire and TryLock fail while anyone is queued. The
// price is throughput: a lock handed over in order cannot be barged.
//
// # Cancellation
//
// A waiting future that is abandoned must be dropped ([core.Drop]); every
// combinator does so. Drop unlinks the waiter and returns whatever it was
// granted: a Lock or Acquire dropped after permits were handed to it
// releases them to the next waiter; a Notified future dropped after a
// NotifyOne chose it passes the notification on; a Barrier wait dropped
// before its generation completed withdraws its arrival. So dropping a
// waiter at the very moment it is woken loses nothing: the wake passes to
// the next waiter. A dropped Lock loses its place in the queue, as in Tokio.
// A wake that a granter had already taken out of the list may still reach
// the dropped future's task once, a spurious wake that wakers tolerate.
//
// # Budget
//
// Every waiting future consumes one unit of the task's cooperative budget
// ([core.Context.Proceed]) each time it is polled, before it makes progress.
// When the budget is spent the future returns pending (the task has been
// woken and goes to the back of the run queue), so a task that keeps
// taking a lock or a permit that is always available still yields after
// [core.Budget] operations.
//
// # Wakes from inside a poll
//
// A future that wakes another task from inside its own poll does so through
// [core.Context.Wake], so the woken task is scheduled on the same worker
// (its LIFO slot on a work-stealing scheduler), which keeps a hand-over on
// one core. Methods that are called outside a poll (Unlock, Release,
// NotifyOne, Close) wake with a plain Wake; each of the common ones has a
// From twin (UnlockFrom, ReleaseFrom, NotifyOneFrom, ...) taking the
// Context of the poll the caller is in, for the same locality.
//
// # Reusing futures
//
// The method that starts a wait allocates its future (Lock, Acquire,
// Notified, Wait). Each has an Into twin (LockInto, AcquireInto,
// NotifiedInto, WaitInto) that starts the wait in a future the caller
// owns, typically a field of its own state machine, so a loop that waits
// again and again allocates nothing. (OnceCell's GetOrInit, which a task
// calls once, has no twin.) The channels follow the same rule for sends;
// their receivers own their receive futures. A future may be reused once it has
// completed or been dropped; reusing one that is still waiting panics. A
// future must not be copied once it has been polled: it may be linked into
// a list (go vet's copylocks check reports copies).
package wsync
