package core

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strconv"
	"sync/atomic"
)

// ErrShutdown is returned (and wrapped in a cancelled [JoinError]) when work
// is handed to a runtime, scheduler or pool that has shut down.
var ErrShutdown = errors.New("weft: runtime is shut down")

// ErrNoRuntime is returned when a spawn is attempted through a [Context] that
// is not running on a runtime worker.
var ErrNoRuntime = errors.New("weft: not inside a runtime")

// TaskID identifies a task for its whole life. IDs are unique within a
// process and never reused; zero is never a valid ID.
type TaskID uint64

// String returns the ID in decimal.
func (id TaskID) String() string { return strconv.FormatUint(uint64(id), 10) }

var lastTaskID atomic.Uint64

// NextTaskID allocates a fresh task ID. Schedulers and pools that create
// tasks of their own use it; Spawn does so already.
func NextTaskID() TaskID { return TaskID(lastTaskID.Add(1)) }

// Task is the scheduler-facing header of a spawned future. Schedulers keep
// *Task values in their queues; a Task is also the [Waker] of its own future.
// A task is in at most one run queue at a time: the one that pushed it after
// winning the NOTIFIED transition.
type Task struct {
	state state
	id    TaskID
	sched Scheduler
	core  taskCore

	// queueNext links the task into a TaskQueue. Only the queue holding the
	// task touches it.
	queueNext *Task
	// set and the two links below belong to the TaskSet that bound the task,
	// under that set's shard lock.
	set              *TaskSet
	setPrev, setNext *Task
}

// taskCore is the typed half of a task (cell[T]); the header reaches it
// through this interface, playing the part of Tokio's vtable.
type taskCore interface {
	// poll polls the future once, recovering a panic into the stage; it
	// reports whether the task finished.
	poll(cx *Context) bool
	// cancel drops the future and stores a cancelled JoinError.
	cancel(cause error)
	// terminating runs the OnPanic hook if the future panicked; it is
	// called before COMPLETE is set.
	terminating()
	// publish publishes the stage to the JoinHandle after COMPLETE was set.
	publish(prev uint32)
}

// ID returns the task's ID.
func (t *Task) ID() TaskID { return t.id }

// Scheduler returns the scheduler the task was spawned on, or nil before it
// is spawned.
func (t *Task) Scheduler() Scheduler { return t.sched }

// IsComplete reports whether the task has finished, successfully or not.
func (t *Task) IsComplete() bool { return t.state.load()&stComplete != 0 }

// Wake schedules the task from any goroutine. It implements [Waker].
func (t *Task) Wake() { t.wake(nil) }

// wake schedules the task, handing the calling worker (or nil) to the
// scheduler so it can use a run queue.
func (t *Task) wake(from Worker) {
	if t.state.transitionToNotified() {
		t.sched.Schedule(t, from)
	}
}

// Abort requests cancellation. A task that is idle is queued so that a
// worker drops its future; a running task is cancelled when its current poll
// returns; a complete task is unaffected. Its JoinHandle then resolves with
// a cancelled [JoinError] unless the task completed first.
func (t *Task) Abort() {
	if t.state.transitionToNotifiedAndCancel() {
		t.sched.Schedule(t, nil)
	}
}

// run is spi.Run: a worker calls it on a task it took out of a run queue.
// It polls the future once with cx (after installing the task's waker),
// or cancels it if it was aborted, and handles the state transitions. It
// reports true when the task was woken during its poll: the caller must
// schedule it again, normally at the back of a queue, as a yield.
//
// run never panics because of the future: a panic is recovered and
// becomes the task's [JoinError].
func (t *Task) run(cx *Context) (reschedule bool) {
	switch t.state.transitionToRunning() {
	case runSkip:
		return false
	case runCancel:
		t.finishCancelled(ErrAborted)
		return false
	}
	cx.waker = t
	done := t.core.poll(cx)
	cx.waker = NoopWaker
	if done {
		t.finish()
		return false
	}
	switch t.state.transitionToIdle() {
	case idleNotified:
		return true
	case idleCancelled:
		t.finishCancelled(ErrAborted)
	}
	return false
}

// shutdown is spi.Shutdown: it cancels the task on behalf of a runtime
// that is shutting down. If the task is running on another goroutine it
// is marked and that goroutine cancels it when its poll returns. It is
// safe to call on a task that is queued, idle, running or complete, and
// more than once.
func (t *Task) shutdown() {
	if t.state.transitionToShutdown() {
		t.finishCancelled(ErrShutdown)
	}
}

// reject is spi.Reject: it completes a task that was never bound because
// its spawner has shut down; the JoinHandle resolves with a cancelled
// JoinError wrapping cause.
func (t *Task) reject(cause error) {
	if t.state.transitionToShutdown() {
		t.finishCancelled(cause)
	}
}

// ErrAborted is the cause in the JoinError of a task stopped by Abort.
var ErrAborted = errors.New("weft: task aborted")

func (t *Task) finishCancelled(cause error) {
	t.core.cancel(cause)
	t.finish()
}

// finish is called with RUNNING held and the stage written. The task's
// hooks run and it leaves its set before COMPLETE is set: whoever observes
// the completion, through the JoinHandle's waker or by polling the handle
// on another goroutine (a task on another worker of a multi-threaded
// scheduler, BlockOn's caller), then also sees the task gone from the set
// and its OnPanic and OnTerminate hooks run.
func (t *Task) finish() {
	t.core.terminating()
	if t.set != nil {
		t.set.remove(t)
	}
	prev := t.state.transitionToComplete()
	t.core.publish(prev)
}

// cell is one allocation holding a task's header, its future and its stage.
// A *JoinHandle[T] is the same pointer seen through another type.
type cell[T any] struct {
	hdr Task
	fut Future[T]
	out T
	err *JoinError
	// joinWaker is guarded by the JOIN_WAKER protocol (see joinhandle.go).
	joinWaker Waker
}

func (c *cell[T]) poll(cx *Context) (done bool) {
	defer func() {
		if r := recover(); r != nil {
			var stack []byte
			if fp, ok := r.(*forwardedPanic); ok {
				r, stack = fp.value, fp.stack
			} else {
				stack = debug.Stack()
			}
			// Unwinding a Rust future drops it; here the panicked future
			// is dropped explicitly so the resources it registered (timer
			// entries, queue waiters) are released.
			f := c.fut
			c.fut = nil
			dropQuietly(f)
			c.err = &JoinError{id: c.hdr.id, panicked: true, value: r, stack: stack}
			done = true
		}
	}()
	v, ok := c.fut.Poll(cx)
	if ok {
		c.out = v
		c.fut = nil
	}
	return ok
}

func (c *cell[T]) cancel(cause error) {
	f := c.fut
	c.fut = nil
	dropQuietly(f)
	c.err = &JoinError{id: c.hdr.id, cause: cause}
}

func (c *cell[T]) terminating() {
	if c.err != nil && c.err.panicked && c.hdr.set != nil {
		c.hdr.set.panicked(c.err)
	}
}

func (c *cell[T]) publish(prev uint32) {
	if prev&stJoinInterest == 0 {
		// Nobody will read the output; let the collector have it now.
		var zero T
		c.out = zero
		return
	}
	if prev&stJoinWaker != 0 {
		// JOIN_WAKER and COMPLETE are both set: the runtime has shared
		// access to the waker and the handle will not touch it again.
		c.joinWaker.Wake()
	}
}

// NewTask wraps f in a task that is not yet bound to a scheduler and returns
// its header and join handle. Most code calls [Spawn]; schedulers and pools
// use NewTask when they need the task before binding it.
func NewTask[T any](f Future[T]) (*Task, *JoinHandle[T]) {
	c := &cell[T]{fut: f}
	c.hdr.id = NextTaskID()
	c.hdr.state.v.Store(stInitial)
	c.hdr.core = c
	return &c.hdr, (*JoinHandle[T])(c)
}

// Spawner starts tasks. A *Context spawns onto the worker running the
// caller; a runtime handle spawns from any goroutine.
type Spawner interface {
	// SpawnTask binds t to a scheduler and schedules it. It returns an error
	// wrapping ErrShutdown when the runtime no longer accepts tasks; t is
	// then untouched and the caller rejects it.
	SpawnTask(t *Task) error
}

// SpawnTask spawns t on the scheduler of the worker running the caller.
func (cx *Context) SpawnTask(t *Task) error {
	if cx.worker == nil {
		return ErrNoRuntime
	}
	return cx.worker.Scheduler().Spawn(t, cx.worker)
}

// Spawn starts f as a new task on s and returns its handle. Spawned from
// inside a task (s is the task's *Context) the new task goes to the calling
// worker's run queue. If s refuses the task (its runtime is shut down) the
// handle resolves at once with a cancelled JoinError wrapping the reason.
func Spawn[T any](s Spawner, f Future[T]) *JoinHandle[T] {
	t, h := NewTask(f)
	if err := s.SpawnTask(t); err != nil {
		t.reject(err)
	}
	return h
}

// bind is spi.Bind: it prepares t to run on sched.
func (t *Task) bind(sched Scheduler) { t.sched = sched }

// dropQuietly drops f if it is not nil. A Drop that panics must not take the
// worker down; the task ends either way.
func dropQuietly(f any) {
	if f == nil {
		return
	}
	defer func() { _ = recover() }()
	Drop(f)
}

// Repanic raises again a panic that was recovered on another goroutine (a
// coroutine running a task's body), so that the task polling it fails with
// the original value and the stack where the panic happened rather than
// where it is raised again. Call it with the recovered value and the
// debug.Stack taken in the recovering deferred call. Outside a task the
// panic's value is an error whose message has both.
func Repanic(value any, stack []byte) {
	panic(&forwardedPanic{value: value, stack: stack})
}

// forwardedPanic carries a panic and its stack from the goroutine that
// recovered it to the task's poll, which unwraps it.
type forwardedPanic struct {
	value any
	stack []byte
}

func (p *forwardedPanic) Error() string {
	return fmt.Sprintf("%v\n\n[recovered and raised again by weft; where it happened:]\n%s", p.value, p.stack)
}
