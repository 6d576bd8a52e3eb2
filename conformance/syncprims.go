package conformance

import (
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/lib/wsync"
)

// The behaviours of the Sync suite for the primitives of lib/wsync:
// Mutex, RWMutex, Semaphore, Notify, Barrier and OnceCell.

// --- Mutex and RWMutex ---

func testSyncMutexExcludes(c *syncCtx) error {
	const tasks, rounds = 16, 40
	var m wsync.Mutex
	var holders, violations atomic.Int64
	counter := 0 // guarded by m; the race detector checks the hand-overs
	var hs []*core.JoinHandle[error]
	for i := 0; i < tasks; i++ {
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			var lock wsync.LockFuture
			for r := 0; r < rounds; r++ {
				syncAwait(c, core.Future[core.Unit](m.LockInto(&lock)))
				if holders.Add(1) != 1 {
					violations.Add(1)
				}
				counter++
				c.yieldNow() // hold the lock across a suspension
				holders.Add(-1)
				m.UnlockFrom(c.cx)
			}
			return nil
		}))
	}
	if err := c.joinAll(hs); err != nil {
		return err
	}
	if err := syncCheck(violations.Load() == 0, "%d times two tasks held the mutex at once", violations.Load()); err != nil {
		return err
	}
	return syncCheck(counter == tasks*rounds, "counter = %d, want %d", counter, tasks*rounds)
}

func testSyncMutexFIFO(c *syncCtx) error {
	const n = 12
	var m wsync.Mutex
	if !m.TryLock() {
		return errors.New("TryLock of a fresh mutex failed")
	}
	var order []int // guarded by m
	hs := c.spawnQueued(n, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		return func(c *syncCtx) error {
			syncAwaitMarked(c, core.Future[core.Unit](m.Lock()), queued)
			order = append(order, i)
			m.UnlockFrom(c.cx)
			return nil
		}
	})
	m.UnlockFrom(c.cx)
	if err := c.joinAll(hs); err != nil {
		return err
	}
	syncAwait(c, core.Future[core.Unit](m.Lock()))
	defer m.Unlock()
	for i, v := range order {
		if v != i {
			return fmt.Errorf("lock order %v, want 0..%d", order, n-1)
		}
	}
	return syncCheck(len(order) == n, "%d of %d tasks got the lock", len(order), n)
}

func testSyncMutexAbortAtHandOver(c *syncCtx) error {
	const n = 60
	var m wsync.Mutex
	m.TryLock()
	var got atomic.Int64
	hs := c.spawnQueued(n, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		return func(c *syncCtx) error {
			syncAwaitMarked(c, core.Future[core.Unit](m.Lock()), queued)
			// An abort may also land while the task holds the lock; the
			// unwinding body releases it then.
			defer m.Unlock()
			got.Add(1)
			c.yieldNow()
			return nil
		}
	})
	// Hand the lock to the head and abort it in the same poll: it was
	// woken but cannot have run on this worker yet. Then abort every third
	// task while the lock travels down the queue.
	m.UnlockFrom(c.cx)
	for i := 0; i < n; i += 3 {
		hs[i].Abort()
		c.yieldNow()
	}
	completed := 0
	for i, h := range hs {
		err := c.join(h)
		switch {
		case err == nil:
			completed++
		case i%3 == 0 && core.IsCancelled(err):
		default:
			return fmt.Errorf("task %d: %v", i, err)
		}
	}
	// A task aborted while it held the lock got it without completing.
	if err := syncCheck(int(got.Load()) >= completed, "%d tasks got the lock, %d completed", got.Load(), completed); err != nil {
		return err
	}
	return syncCheck(m.TryLock(), "the lock was lost: TryLock failed after every task finished")
}

func testSyncRWMutex(c *syncCtx) error {
	const readers, writers, rounds = 8, 4, 20
	var m wsync.RWMutex
	var readersIn, writersIn, violations, maxReaders atomic.Int64
	shared := 0
	var hs []*core.JoinHandle[error]
	for i := 0; i < readers+writers; i++ {
		write := i < writers
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			var lock wsync.LockFuture
			for r := 0; r < rounds; r++ {
				if write {
					syncAwait(c, core.Future[core.Unit](m.LockInto(&lock)))
					if writersIn.Add(1) != 1 || readersIn.Load() != 0 {
						violations.Add(1)
					}
					shared++
					c.yieldNow()
					writersIn.Add(-1)
					m.UnlockFrom(c.cx)
					continue
				}
				syncAwait(c, core.Future[core.Unit](m.RLockInto(&lock)))
				n := readersIn.Add(1)
				for {
					mx := maxReaders.Load()
					if n <= mx || maxReaders.CompareAndSwap(mx, n) {
						break
					}
				}
				if writersIn.Load() != 0 {
					violations.Add(1)
				}
				_ = shared
				c.yieldNow()
				readersIn.Add(-1)
				m.RUnlockFrom(c.cx)
			}
			return nil
		}))
	}
	if err := c.joinAll(hs); err != nil {
		return err
	}
	if err := syncCheck(violations.Load() == 0, "a writer overlapped another holder %d times", violations.Load()); err != nil {
		return err
	}
	return syncCheck(shared == writers*rounds, "shared = %d, want %d", shared, writers*rounds)
}

// --- Semaphore ---

func testSyncSemaphoreStrictFIFO(c *syncCtx) error {
	s := wsync.NewSemaphore(0)
	var bigDone, smallDone atomic.Bool
	var bigBeforeSmall atomic.Bool
	hs := c.spawnQueued(2, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		return func(c *syncCtx) error {
			n := 5
			if i == 1 {
				n = 1
			}
			if err, _ := syncAwaitMarked(c, core.Future[error](s.Acquire(n)), queued); err != nil {
				return err
			}
			if i == 0 {
				bigDone.Store(true)
			} else {
				bigBeforeSmall.Store(bigDone.Load())
				smallDone.Store(true)
			}
			return nil
		}
	})
	s.ReleaseFrom(c.cx, 4)
	for k := 0; k < 10; k++ {
		c.yieldNow()
	}
	if bigDone.Load() || smallDone.Load() {
		return errors.New("an acquire completed with four permits: the head needs five and the small one is behind it")
	}
	s.ReleaseFrom(c.cx, 1)
	if err := c.join(hs[0]); err != nil {
		return err
	}
	for k := 0; k < 10; k++ {
		c.yieldNow()
	}
	if smallDone.Load() {
		return errors.New("the small acquire completed with no permit left")
	}
	s.ReleaseFrom(c.cx, 1)
	if err := c.join(hs[1]); err != nil {
		return err
	}
	return syncCheck(bigBeforeSmall.Load(), "the small acquire overtook the large one")
}

func testSyncSemaphoreAbortAtGrant(c *syncCtx) error {
	const n = 150
	s := wsync.NewSemaphore(0)
	var got atomic.Int64
	hs := c.spawnQueued(n, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		return func(c *syncCtx) error {
			if err, _ := syncAwaitMarked(c, core.Future[error](s.Acquire(1)), queued); err != nil {
				return err
			}
			got.Add(1) // keeps its permit
			return nil
		}
	})
	aborted := 0
	for i := 0; i < n; i++ {
		// Grant the head a permit and abort a task in the same poll.
		s.ReleaseFrom(c.cx, 1)
		if i%3 == 0 {
			hs[i].Abort()
			aborted++
		}
		if i%10 == 0 {
			c.yieldNow()
		}
	}
	completed := 0
	for i, h := range hs {
		err := c.join(h)
		switch {
		case err == nil:
			completed++
		case i%3 == 0 && core.IsCancelled(err):
		default:
			return fmt.Errorf("task %d: %v", i, err)
		}
	}
	if err := syncCheck(completed >= n-aborted, "only %d tasks got a permit; %d were not aborted", completed, n-aborted); err != nil {
		return err
	}
	if err := syncCheck(int(got.Load()) == completed, "%d acquires completed in %d tasks", got.Load(), completed); err != nil {
		return err
	}
	// n permits were released; the completed tasks hold theirs, and the
	// permits of aborted tasks were passed on, never lost.
	return syncCheck(s.Available() == n-completed, "%d permits available, want %d", s.Available(), n-completed)
}

func testSyncSemaphoreClose(c *syncCtx) error {
	const n = 10
	s := wsync.NewSemaphore(1)
	hs := c.spawnQueued(n, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		return func(c *syncCtx) error {
			err, _ := syncAwaitMarked(c, core.Future[error](s.Acquire(2)), queued)
			if !errors.Is(err, wsync.ErrClosed) {
				return fmt.Errorf("acquire on a closed semaphore: %v", err)
			}
			return nil
		}
	})
	s.Close()
	if err := c.joinAll(hs); err != nil {
		return err
	}
	if err := syncCheck(s.Available() == 1, "%d permits after close, want the 1 the head had taken back", s.Available()); err != nil {
		return err
	}
	return syncCheck(errors.Is(s.TryAcquire(1), wsync.ErrClosed), "TryAcquire on a closed semaphore succeeded")
}

func testSyncSemaphoreBudget(c *syncCtx) error {
	s := wsync.NewSemaphore(1)
	var perPoll []int
	h := c.spawn(func(c *syncCtx) error {
		var acq wsync.AcquireFuture
		n := 0
		for total := 0; total < 3*core.Budget; total++ {
			_, waited := syncAwaitMarked(c, core.Future[error](s.AcquireInto(&acq, 1)), nil)
			if waited {
				perPoll = append(perPoll, n)
				n = 0
			}
			n++
			s.ReleaseFrom(c.cx, 1)
		}
		perPoll = append(perPoll, n)
		return nil
	})
	if err := c.join(h); err != nil {
		return err
	}
	return syncCheckBudget("acquires", perPoll, 3*core.Budget)
}

// syncCheckBudget checks that a loop over an always-ready resource was
// split into polls of at most Budget operations.
func syncCheckBudget(what string, perPoll []int, total int) error {
	sum := 0
	for _, n := range perPoll {
		if n > core.Budget {
			return fmt.Errorf("a poll made %d %s, more than the budget of %d", n, what, core.Budget)
		}
		sum += n
	}
	if sum != total {
		return fmt.Errorf("counted %d %s, want %d", sum, what, total)
	}
	return syncCheck(len(perPoll) >= total/core.Budget, "%d %s took only %d polls: the loop never yielded", total, what, len(perPoll))
}

// --- Notify ---

func testSyncNotifyPermit(c *syncCtx) error {
	var n wsync.Notify
	n.NotifyOneFrom(c.cx)
	n.NotifyOneFrom(c.cx) // nobody waits: still one permit
	first := c.spawn(func(c *syncCtx) error {
		syncAwait(c, core.Future[core.Unit](n.Notified()))
		return nil
	})
	if err := c.join(first); err != nil {
		return err
	}
	var queued atomic.Bool
	var done atomic.Bool
	second := c.spawn(func(c *syncCtx) error {
		syncAwaitMarked(c, core.Future[core.Unit](n.Notified()), &queued)
		done.Store(true)
		return nil
	})
	c.until(queued.Load)
	for k := 0; k < 5; k++ {
		c.yieldNow()
	}
	if done.Load() {
		return errors.New("two NotifyOne calls with nobody waiting stored two permits")
	}
	n.NotifyOneFrom(c.cx)
	return c.join(second)
}

func testSyncNotifyWaiters(c *syncCtx) error {
	const n = 20
	var nt wsync.Notify
	hs := c.spawnQueued(n, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		return func(c *syncCtx) error {
			syncAwaitMarked(c, core.Future[core.Unit](nt.Notified()), queued)
			return nil
		}
	})
	nt.NotifyWaitersFrom(c.cx)
	if err := c.joinAll(hs); err != nil {
		return err
	}
	var queued, done atomic.Bool
	late := c.spawn(func(c *syncCtx) error {
		syncAwaitMarked(c, core.Future[core.Unit](nt.Notified()), &queued)
		done.Store(true)
		return nil
	})
	c.until(queued.Load)
	for k := 0; k < 5; k++ {
		c.yieldNow()
	}
	if done.Load() {
		return errors.New("NotifyWaiters woke a task that started waiting after it")
	}
	nt.NotifyOneFrom(c.cx)
	return c.join(late)
}

func testSyncNotifyAbort(c *syncCtx) error {
	const n = 120
	var nt wsync.Notify
	var got atomic.Int64
	hs := c.spawnQueued(n, func(i int, queued *atomic.Bool) func(c *syncCtx) error {
		return func(c *syncCtx) error {
			syncAwaitMarked(c, core.Future[core.Unit](nt.Notified()), queued)
			got.Add(1)
			return nil
		}
	})
	// Every task is queued, in index order. Every third task is notified
	// and aborted in the same poll: its notification must pass to the
	// next task, which is therefore not notified again. So exactly as many
	// notifications are sent as tasks survive, and a notification lost
	// with an aborted task leaves a survivor waiting for ever.
	aborted := map[int]bool{}
	for i := 0; i < n; i++ {
		switch {
		case i%3 == 0:
			nt.NotifyOneFrom(c.cx)
			hs[i].Abort()
			aborted[i] = true
		case i%3 == 1:
			// Served by the notification task i-1 passed on.
		default:
			nt.NotifyOneFrom(c.cx)
		}
		if i%10 == 0 {
			c.yieldNow()
		}
	}
	// On a multi-threaded scheduler an aborted task may have run and
	// consumed its notification before the abort reached it; each such
	// task owes its successor one notification.
	for i := range aborted {
		switch err := c.join(hs[i]); {
		case err == nil:
			nt.NotifyOneFrom(c.cx)
		case !core.IsCancelled(err):
			return fmt.Errorf("task %d: %v", i, err)
		}
	}
	completed := 0
	for i, h := range hs {
		err := c.join(h)
		switch {
		case err == nil:
			completed++
		case aborted[i] && core.IsCancelled(err):
		default:
			return fmt.Errorf("task %d: %v", i, err)
		}
	}
	return syncCheck(int(got.Load()) == completed, "%d waits completed in %d tasks", got.Load(), completed)
}

// --- Barrier ---

func testSyncBarrier(c *syncCtx) error {
	const tasks, gens = 6, 25
	b := wsync.NewBarrier(tasks)
	var leaders, early atomic.Int64
	var arrived [gens]atomic.Int64
	var hs []*core.JoinHandle[error]
	for i := 0; i < tasks; i++ {
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			var w wsync.BarrierWaitFuture
			for g := 0; g < gens; g++ {
				arrived[g].Add(1)
				if syncAwait(c, core.Future[bool](b.WaitInto(&w))) {
					leaders.Add(1)
				}
				// Nobody passes generation g before all have reached it.
				if arrived[g].Load() != tasks {
					early.Add(1)
				}
			}
			return nil
		}))
	}
	if err := c.joinAll(hs); err != nil {
		return err
	}
	if err := syncCheck(early.Load() == 0, "%d times a task passed the barrier before all arrived", early.Load()); err != nil {
		return err
	}
	return syncCheck(leaders.Load() == gens, "%d leaders for %d generations", leaders.Load(), gens)
}

func testSyncBarrierAbort(c *syncCtx) error {
	b := wsync.NewBarrier(2)
	var queued atomic.Bool
	quitter := c.spawn(func(c *syncCtx) error {
		syncAwaitMarked(c, core.Future[bool](b.Wait()), &queued)
		return errors.New("the barrier released one task of two")
	})
	c.until(queued.Load)
	quitter.Abort()
	if err := c.join(quitter); !core.IsCancelled(err) {
		return fmt.Errorf("aborted waiter: %v", err)
	}
	// The aborted wait withdrew: two new arrivals are needed.
	var first atomic.Bool
	a := c.spawn(func(c *syncCtx) error {
		syncAwaitMarked(c, core.Future[bool](b.Wait()), &first)
		return nil
	})
	c.until(first.Load)
	for k := 0; k < 5; k++ {
		c.yieldNow()
	}
	if a.IsFinished() {
		return errors.New("the barrier counted the aborted task's arrival")
	}
	if !syncAwait(c, core.Future[bool](b.Wait())) {
		return errors.New("the second arrival was not the leader")
	}
	return c.join(a)
}

// --- OnceCell ---

func testSyncOnceCell(c *syncCtx) error {
	const tasks = 20
	var cell wsync.OnceCell[int]
	var inits atomic.Int64
	values := make([]int, tasks)
	var hs []*core.JoinHandle[error]
	for i := 0; i < tasks; i++ {
		hs = append(hs, c.spawn(func(c *syncCtx) error {
			values[i] = syncAwait(c, core.Future[int](cell.GetOrInit(func() core.Future[int] {
				inits.Add(1)
				v := 100 + i
				return syncTask2(func(c *syncCtx) int {
					for k := 0; k < 3; k++ {
						c.yieldNow() // the initialiser takes a while
					}
					return v
				})
			})))
			return nil
		}))
	}
	if err := c.joinAll(hs); err != nil {
		return err
	}
	if err := syncCheck(inits.Load() == 1, "%d initialisers ran", inits.Load()); err != nil {
		return err
	}
	want, _ := cell.Get()
	for i, v := range values {
		if v != want {
			return fmt.Errorf("task %d got %d, the cell holds %d", i, v, want)
		}
	}
	return nil
}

// syncTask2 is syncTask for a body that produces a value.
func syncTask2[T any](body func(c *syncCtx) T) core.Future[T] {
	var v T
	inner := syncTask(func(c *syncCtx) error { v = body(c); return nil })
	return future.Map(inner, func(error) T { return v })
}

func testSyncOnceCellAbort(c *syncCtx) error {
	var cell wsync.OnceCell[string]
	var initialising, waiting atomic.Bool
	stuck := c.spawn(func(c *syncCtx) error {
		syncAwait(c, core.Future[string](cell.GetOrInit(func() core.Future[string] {
			initialising.Store(true)
			return future.Pending[string]()
		})))
		return errors.New("a pending initialiser completed")
	})
	c.until(initialising.Load)
	next := c.spawn(func(c *syncCtx) error {
		v, _ := syncAwaitMarked(c, core.Future[string](cell.GetOrInit(func() core.Future[string] {
			return future.Ready("second")
		})), &waiting)
		return syncCheck(v == "second", "got %q", v)
	})
	c.until(waiting.Load)
	stuck.Abort()
	if err := c.join(stuck); !core.IsCancelled(err) {
		return fmt.Errorf("aborted initialiser: %v", err)
	}
	if err := c.join(next); err != nil {
		return err
	}
	v, ok := cell.Get()
	return syncCheck(ok && v == "second", "cell holds %q, %v", v, ok)
}
