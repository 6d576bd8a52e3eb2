package tasks

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// TaskTracker counts the tasks it tracks and tells when they have all
// ended, for graceful shutdown: spawn work through the tracker, then
// Close it and await Wait. Unlike a JoinSet it keeps nothing of the tasks:
// no handles, no outputs, so tracking a million tasks costs a counter.
//
// Closing does not stop anything from being tracked; it only arms Wait,
// which resolves at a moment when the tracker is closed and counts no
// task. A task is counted from the moment it is tracked (Spawn, Track,
// Token) until its future completes or is dropped (aborted, or cancelled
// by a runtime shutting down), so a task that panics is uncounted too.
//
// The zero value is an open, empty tracker. All methods are safe for
// concurrent use.
type TaskTracker struct {
	// state is twice the number of tracked tasks, plus one when closed;
	// so it is 1 exactly when the tracker is closed and empty.
	state   atomic.Int64
	mu      sync.Mutex
	waiters waiterList // WaitFutures; guarded by mu
}

// NewTaskTracker returns an open, empty tracker.
func NewTaskTracker() *TaskTracker { return new(TaskTracker) }

const trackerClosed = 1

// Close closes the tracker and reports whether it was open. If it counts
// no task, every Wait resolves.
func (tt *TaskTracker) Close() bool {
	for {
		s := tt.state.Load()
		if s&trackerClosed != 0 {
			return false
		}
		if tt.state.CompareAndSwap(s, s|trackerClosed) {
			if s == 0 {
				tt.notify()
			}
			return true
		}
	}
}

// Reopen opens a closed tracker and reports whether it was closed. Wait
// futures that have not resolved wait for the next Close.
func (tt *TaskTracker) Reopen() bool {
	for {
		s := tt.state.Load()
		if s&trackerClosed == 0 {
			return false
		}
		if tt.state.CompareAndSwap(s, s&^trackerClosed) {
			return true
		}
	}
}

// IsClosed reports whether the tracker is closed.
func (tt *TaskTracker) IsClosed() bool { return tt.state.Load()&trackerClosed != 0 }

// Len returns the number of tasks tracked now.
func (tt *TaskTracker) Len() int { return int(tt.state.Load() >> 1) }

// IsEmpty reports whether the tracker counts no task.
func (tt *TaskTracker) IsEmpty() bool { return tt.state.Load()>>1 == 0 }

func (tt *TaskTracker) add() { tt.state.Add(2) }

func (tt *TaskTracker) done() {
	if tt.state.Add(-2) == trackerClosed {
		tt.notify()
	}
}

// notify wakes every waiting Wait future. Whoever brought the state to 1
// calls it after doing so; a waiter registers under mu after reading the
// state under mu, so it either saw 1 or is in the list taken here.
func (tt *TaskTracker) notify() {
	tt.mu.Lock()
	ws := tt.waiters.takeWakers()
	tt.mu.Unlock()
	wakeAll(ws)
}

// Track returns f wrapped so that tt counts it from now until it
// completes or is dropped. Spawn the result (or use [Spawn], which does).
func Track[T any](tt *TaskTracker, f core.Future[T]) core.Future[T] {
	tt.add()
	return &tracked[T]{inner: f, tt: tt}
}

// Spawn spawns f on s as a task that tt tracks and returns its handle.
func Spawn[T any](tt *TaskTracker, s core.Spawner, f core.Future[T]) *core.JoinHandle[T] {
	return core.Spawn(s, Track(tt, f))
}

type tracked[T any] struct {
	inner core.Future[T]
	tt    *TaskTracker
}

func (f *tracked[T]) Poll(cx *core.Context) (T, bool) {
	v, ok := f.inner.Poll(cx)
	if ok {
		f.inner = nil
		f.release()
	}
	return v, ok
}

// Drop drops the inner future and uncounts it.
func (f *tracked[T]) Drop() {
	if f.inner != nil {
		inner := f.inner
		f.inner = nil
		// Uncount even if the inner Drop panics.
		defer f.release()
		core.Drop(inner)
	}
}

func (f *tracked[T]) release() {
	if tt := f.tt; tt != nil {
		f.tt = nil
		tt.done()
	}
}

// Token counts one unit of work that is not a future (a goroutine, a
// callback) until its Release.
func (tt *TaskTracker) Token() *TrackerToken {
	tt.add()
	tok := &TrackerToken{}
	tok.tt.Store(tt)
	return tok
}

// TrackerToken is one unit of work counted by a TaskTracker; see
// [TaskTracker.Token].
type TrackerToken struct{ tt atomic.Pointer[TaskTracker] }

// Release uncounts the token's work. Only the first call does anything.
func (tok *TrackerToken) Release() {
	if tt := tok.tt.Swap(nil); tt != nil {
		tt.done()
	}
}

// Wait returns a future that resolves once the tracker is closed and
// counts no task. If tasks are tracked again before a woken Wait is
// polled, it goes on waiting. It implements core.Dropper.
func (tt *TaskTracker) Wait() *WaitFuture { return &WaitFuture{tt: tt} }

// WaitFuture is the future of [TaskTracker.Wait], a core.Future of
// core.Unit.
type WaitFuture struct {
	tt *TaskTracker
	w  waiter // guarded by tt.mu
	// queued is set (by the owner) once the future has registered; the
	// lock-free fast path is for futures that never did.
	queued bool
}

// Poll implements core.Future.
func (f *WaitFuture) Poll(cx *core.Context) (core.Unit, bool) {
	tt := f.tt
	if tt.state.Load() == trackerClosed && !f.queued {
		return core.Unit{}, true
	}
	tt.mu.Lock()
	if tt.state.Load() == trackerClosed {
		tt.waiters.remove(&f.w)
		f.w.waker = nil
		tt.mu.Unlock()
		return core.Unit{}, true
	}
	f.w.waker = cx.Waker()
	if !f.w.linked {
		tt.waiters.push(&f.w)
	}
	tt.mu.Unlock()
	f.queued = true
	return core.Unit{}, false
}

// Drop implements core.Dropper: the future leaves the tracker's waiters.
func (f *WaitFuture) Drop() {
	tt := f.tt
	tt.mu.Lock()
	tt.waiters.remove(&f.w)
	f.w.waker = nil
	tt.mu.Unlock()
}
