package core

import "log/slog"

// Scheduler runs tasks. It is the SPI implemented by the modules under
// schedulers/ and registered with [RegisterScheduler].
//
// # What a scheduler promises
//
// The operations on tasks, worker contexts and the timers that only a
// scheduler performs are in package core/spi (spi.Run, spi.Bind,
// spi.Shutdown, spi.NewWorkerContext, spi.Parking, ...).
//
//   - Spawn binds the task (spi.Bind, then [TaskSet.Bind] on
//     SchedulerParams.Tasks) and queues it. Called from a worker of this
//     scheduler (from != nil) it may use that worker's run queue.
//   - Schedule queues a task whose wake won the NOTIFIED transition. It may be
//     called from any goroutine. Once the scheduler is shut down it must not
//     queue the task but call spi.Shutdown on it.
//   - Tasks are run with spi.Run on the Context of a spi.WorkerContext,
//     whose budget the worker resets at each tick; a task that Run reports
//     as woken during its poll is queued again.
//   - BlockOn runs the scheduler until done is closed (the runtime closes it
//     when root, a task it spawned, completes) or the scheduler shuts down,
//     and returns then. Several goroutines may call BlockOn at once.
//   - Shutdown closes the scheduler's queues and the TaskSet, cancels every
//     task (each future's Drop runs), stops every worker it started and waits
//     for them, closes nothing it did not create, and is idempotent. No task
//     is polled after Shutdown returns.
//   - At a tick interval of its choosing, and whenever it would sleep, a
//     scheduler polls its driver (Park) and its timers, and wakes the wakers
//     deferred with [Context.Defer].
type Scheduler interface {
	Spawn(t *Task, from Worker) error
	Schedule(t *Task, from Worker)
	BlockOn(root *Task, done <-chan struct{})
	Shutdown()
}

// SchedulerParams is what the runtime hands a scheduler module when it is
// built. Resources are built in the order driver, blocking pool, scheduler;
// the scheduler owns none of them and must not close them.
type SchedulerParams struct {
	// Name is the runtime's name, for worker names and logs.
	Name string
	// Tasks is the runtime's task set; every spawned task is bound into it.
	Tasks *TaskSet
	// NewDriver builds a driver for a worker that needs one. A scheduler
	// with one shared driver calls it once; a thread-per-core scheduler
	// calls it once per worker. It is nil when the runtime has no driver.
	// Drivers it returns are owned and closed by the scheduler.
	NewDriver func() (Driver, error)
	// Time is the runtime's clock and timers; nil when time is disabled.
	Time *Time
	// Blocking runs closures on the blocking pool; schedulers use it to
	// implement blocking-in-place.
	Blocking BlockingSpawner
	// Hooks are the worker lifecycle callbacks.
	Hooks WorkerHooks
	// Log receives the scheduler's diagnostics; never nil.
	Log *slog.Logger
}

// WorkerHooks are callbacks run on a worker's goroutine at points of its
// life. Any of them may be nil. They must not block for long.
type WorkerHooks struct {
	// AfterStart runs when a worker starts, before it polls a task.
	AfterStart func()
	// BeforeStop runs when a worker stops, after its last poll.
	BeforeStop func()
	// BeforePark runs before a worker parks for lack of work.
	BeforePark func()
	// AfterUnpark runs when a parked worker wakes up.
	AfterUnpark func()
}

// Call runs f if it is not nil.
func (h WorkerHooks) call(f func()) {
	if f != nil {
		f()
	}
}

// RunAfterStart calls the AfterStart hook if set.
func (h WorkerHooks) RunAfterStart() { h.call(h.AfterStart) }

// RunBeforeStop calls the BeforeStop hook if set.
func (h WorkerHooks) RunBeforeStop() { h.call(h.BeforeStop) }

// RunBeforePark calls the BeforePark hook if set.
func (h WorkerHooks) RunBeforePark() { h.call(h.BeforePark) }

// RunAfterUnpark calls the AfterUnpark hook if set.
func (h WorkerHooks) RunAfterUnpark() { h.call(h.AfterUnpark) }

// BlockingSpawner runs a closure on the runtime's blocking pool. The error
// wraps [ErrShutdown] when the pool no longer accepts work.
type BlockingSpawner interface {
	SpawnBlockingFunc(f func()) error
}

// BlockingWorker is an optional interface of a [Worker] whose runtime has a
// blocking pool: futures that must make blocking calls (file I/O without a
// FileIO driver, for one) reach the pool through it. Schedulers implement
// it by returning SchedulerParams.Blocking. Callers fall back to a
// goroutine of their own when the worker does not implement it.
type BlockingWorker interface {
	Blocking() BlockingSpawner
}

// MetricsSource is an optional interface of a Scheduler that reports metrics
// per worker.
type MetricsSource interface {
	// Metrics returns a snapshot of every worker's counters.
	Metrics() []WorkerMetrics
}

// WorkerMetrics are one worker's counters, cumulative since start.
type WorkerMetrics struct {
	Worker          int
	Polls           uint64 // tasks polled
	Steals          uint64 // successful steal operations
	StolenTasks     uint64 // tasks taken by those steals
	Overflows       uint64 // local-queue overflows into the global queue
	Parks           uint64
	Unparks         uint64
	LocalSchedules  uint64 // tasks scheduled from this worker
	RemoteSchedules uint64 // tasks scheduled from other goroutines
	LIFOHits        uint64 // polls taken from the LIFO slot
	BudgetYields    uint64 // polls that ended because the budget ran out
	QueueDepth      int    // tasks in the run queue when sampled
	MeanPollNanos   float64
}
