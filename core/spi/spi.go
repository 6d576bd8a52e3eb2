// Package spi is what a scheduler, a timer or a driver may do with core's
// types that a program using weft has no reason to: run a task, bind it
// to a scheduler, cancel it on shutdown; own a worker's context and reset
// its cooperative budget; take part in the timers' parking protocol and
// fire them; and reach the links a timer keeps in each entry.
//
// Package core keeps these operations unexported, so that its public API
// is what futures and programs use; they reach this package through
// core/internal/bridge. Module authors import spi next to core; the
// conformance kit (conformance) checks that they use it correctly.
//
// A worker's context is the one capability that stays with its holder: a
// future sees only the *core.Context it is polled with, and cannot reset
// its own budget, which only the [WorkerContext] handle can.
package spi

import (
	"time"
	"unsafe"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/internal/bridge"
)

// The operations core left in package bridge, typed once. core's init has
// run by the time these initialise, since this package imports core.
var (
	taskRun      = bridge.TaskRun.(func(*core.Task, *core.Context) bool)
	taskBind     = bridge.TaskBind.(func(*core.Task, core.Scheduler))
	taskShutdown = bridge.TaskShutdown.(func(*core.Task))
	taskReject   = bridge.TaskReject.(func(*core.Task, error))

	newWorkerContext = bridge.NewWorkerContext.(func(core.Worker) *core.Context)
	resetBudget      = bridge.ResetBudget.(func(*core.Context))

	timeParking        = bridge.TimeParking.(func(*core.Time, time.Duration) time.Duration)
	timeUnparked       = bridge.TimeUnparked.(func(*core.Time))
	timeSetUnpark      = bridge.TimeSetUnpark.(func(*core.Time, func()))
	timeParkTimeout    = bridge.TimeParkTimeout.(func(*core.Time, time.Duration) time.Duration)
	timeFire           = bridge.TimeFire.(func(*core.Time) int)
	timeCanAutoAdvance = bridge.TimeCanAutoAdvance.(func(*core.Time) bool)
	timeAutoAdvance    = bridge.TimeAutoAdvance.(func(*core.Time) bool)

	entryExpire     = bridge.EntryExpire.(func(*core.TimerEntry) core.Waker)
	entryResetFired = bridge.EntryResetFired.(func(*core.TimerEntry))
)

// Run is called by a worker on a task it took out of a run queue. It polls
// the task's future once with cx (after installing the task's waker), or
// cancels it if it was aborted, and handles the state transitions. It
// reports true when the task was woken during its poll: the caller must
// schedule it again, normally at the back of a queue, as a yield.
//
// Run never panics because of the future: a panic is recovered and
// becomes the task's core.JoinError. It does not reset cx's budget (see
// WorkerContext.ResetBudget).
func Run(t *core.Task, cx *core.Context) (reschedule bool) { return taskRun(t, cx) }

// Bind prepares t to run on s: a scheduler calls it from Spawn before it
// adds the task to its core.TaskSet and queues it, and again when a task
// moves to another of its workers.
func Bind(t *core.Task, s core.Scheduler) { taskBind(t, s) }

// Shutdown cancels t on behalf of a runtime that is shutting down. If the
// task is running on another goroutine it is marked and that goroutine
// cancels it when its poll returns. It is safe on a task that is queued,
// idle, running or complete, and more than once.
func Shutdown(t *core.Task) { taskShutdown(t) }

// Reject completes a task that was never bound because its spawner has
// shut down: the JoinHandle resolves with a cancelled core.JoinError
// wrapping cause. Schedulers call it when Spawn fails.
func Reject(t *core.Task, cause error) { taskReject(t, cause) }

// WorkerContext is a scheduler worker's context and the right to reset
// its cooperative budget. The worker reuses Context for every task it
// polls and calls ResetBudget before each scheduling tick; a future polled
// with Context cannot reset the budget it is running out of.
type WorkerContext struct {
	cx *core.Context
}

// NewWorkerContext returns the context of worker w, with the cooperative
// budget (core.Budget units a poll) in force and full.
func NewWorkerContext(w core.Worker) WorkerContext {
	return WorkerContext{cx: newWorkerContext(w)}
}

// Context returns the context to poll tasks with.
func (w WorkerContext) Context() *core.Context { return w.cx }

// ResetBudget gives the next poll a full budget. Running a task does not
// reset it, so that a scheduler can run a LIFO-slot task inside the budget
// of the task that woke it.
func (w WorkerContext) ResetBudget() { resetBudget(w.cx) }

// SetUnpark installs the function that wakes the worker parked on tm's
// timers. A scheduler whose timers are armed by goroutines other than the
// parking one must install it.
func SetUnpark(tm *core.Time, f func()) { timeSetUnpark(tm, f) }

// Parking publishes that the calling worker is about to park on tm's
// timers and returns how long it may park: at most max (negative:
// unbounded), and no later than the next deadline. Call it before
// parking, and Unparked when the park returns. An entry armed meanwhile
// with an earlier deadline calls the function installed by SetUnpark.
func Parking(tm *core.Time, max time.Duration) time.Duration { return timeParking(tm, max) }

// Unparked withdraws the instant published by Parking.
func Unparked(tm *core.Time) { timeUnparked(tm) }

// ParkTimeout caps a park of at most max (negative: unbounded) by the time
// left until tm's next deadline, without publishing anything.
func ParkTimeout(tm *core.Time, max time.Duration) time.Duration { return timeParkTimeout(tm, max) }

// Fire fires every timer of tm due now and returns how many fired.
func Fire(tm *core.Time) int { return timeFire(tm) }

// CanAutoAdvance reports whether AutoAdvance would move tm's clock now:
// it is an auto-advancing virtual clock and a timer is armed.
func CanAutoAdvance(tm *core.Time) bool { return timeCanAutoAdvance(tm) }

// AutoAdvance is called by a scheduler that has nothing to run and would
// otherwise sleep. With an auto-advancing virtual clock and an armed timer
// it moves the clock to the next deadline, fires what is due and reports
// true: the scheduler should look for work again instead of sleeping.
func AutoAdvance(tm *core.Time) bool { return timeAutoAdvance(tm) }

// EntryLinks are the fields a timer keeps in each entry it holds: list
// links for a wheel, an index and a slot for a heap, and the timer (or
// shard) that holds the entry. Nobody but that timer touches them while
// the entry is inserted.
type EntryLinks = bridge.Links[core.TimerEntry]

// LinksOf returns e's links. It costs no call: the links are the entry's
// first field, which core checks at compile time.
func LinksOf(e *core.TimerEntry) *EntryLinks { return (*EntryLinks)(unsafe.Pointer(e)) }

// Expire marks e fired and takes its waker without waking it. A timer
// calls it under its own lock when it removes a due entry, so that Cancel
// and core.TimerEntry.Fired agree with the timer's structure, and wakes
// the returned waker (if not nil) after releasing the lock: a waker may
// re-enter the timer.
func Expire(e *core.TimerEntry) core.Waker { return entryExpire(e) }

// ResetFired clears e's fired mark before it is inserted again.
func ResetFired(e *core.TimerEntry) { entryResetFired(e) }
