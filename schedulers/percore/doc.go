// Package percore is weft's thread-per-core scheduler, registered as the
// scheduler module "percore". It follows the io_uring pool of
// commonware-runtime: every worker is a goroutine of its own, optionally
// locked to an OS thread and pinned to a CPU, that owns a driver instance,
// a run queue and a mailbox; the workers share a global queue and steal
// from each other when they run dry.
//
//	r, err := rt.NewBuilder().Scheduler("percore").Workers(4).Driver("epoll").Build()
//
// Configuration keys (under "scheduler"): workers (1 to 64, default
// GOMAXPROCS), lock_threads (false), pin (false, Linux only), cpus (with
// pin; each a CPU the process may run on, checked when the configuration
// is validated), global_queue_interval (31), event_interval (61).
//
// # Workers, threads and drivers
//
// SchedulerParams.NewDriver is called once per worker, on that worker's
// goroutine. With lock_threads (or pin) the goroutine is locked to an OS
// thread for the worker's whole life (runtime.LockOSThread), so a
// completion driver's ring is created, entered and destroyed by one thread,
// and pin restricts that thread to one CPU (sched_setaffinity).
//
// Locking is off by default because Go forbids it for coroutines: the
// runtime aborts the process ("coro: OS thread locking must match locking
// at coroutine creation") when an iter.Pull coroutine is resumed on a
// locked thread other than the one that created it. Coroutine tasks
// (lib/co, and the straight-line task bodies of conformance's sync
// and driver suites) are created on one goroutine, move between workers,
// and are unwound by whoever drops them, so a locked pool must run none.
// Unlocked, each worker is still one goroutine with its own driver, queue
// and mailbox; Go's scheduler may move it between threads.
//
// Workers start one at a time: New starts worker zero, which
// starts the others, each only after the previous one has locked its
// thread, pinned it, created its driver and joined the shutdown barrier.
// A startup failure stops the workers already started and fails New.
//
// # Ownership and the wake routing rule
//
// A task is owned by the worker that last polled it. The owner is recorded
// without a side table: the task is bound (spi.Bind) to its owner's
// home, a small per-worker core.Scheduler that forwards to the pool and
// names the owner, so a wake finds it in the task itself. A worker rebinds a
// task just before polling it, while the task is NOTIFIED and in its hands:
// a wake reads the binding only after winning NOTIFIED from an idle task,
// so the write and that read never overlap, and spi.Run's CAS orders them.
//
// Where a runnable task goes:
//
//   - woken during its own poll (a self-wake, a spent budget): the back of
//     the same worker's run queue;
//   - woken from inside a poll on worker j (core.Context.Wake, a channel
//     send, a released lock): worker j's run queue, j owning it next;
//   - woken from anywhere else (its owner's driver, a timer, another
//     goroutine): its owner's mailbox, and the owner is unparked through
//     its driver, so a task keeps running on its core. Its I/O is on
//     that core's driver only if the driver submits an operation to the
//     polling worker's instance: drivers/iouring does (an operation runs
//     on the ring of the worker that polls it, whichever worker's driver
//     opened its handle); a driver that keeps each handle's operations on
//     the instance that created it has a completion on one worker wake a
//     task owned by another, through the mailbox and an Unpark;
//   - an owner whose mailbox is closed (failed or shutting down): the global
//     queue;
//   - spawned by a task on worker j: j's run queue when that is empty or
//     the pool has one worker, otherwise the global queue, so a busy
//     worker's spawns spread to idle ones;
//   - spawned from outside the pool: the global queue.
//
// A worker looks at its mailbox every tick (one atomic load) and moves what
// it finds to the back of its run queue.
//
// # Run queues, the global queue, stealing
//
// Each run queue is a lock-free ring of 256 slots (runq.Queue, from the
// scheduler kit in schedulers/internal, whose documentation explains the
// head/steal/tail protocol and its memory ordering): a push into a full
// ring keeps its oldest half and moves its newest half and the new task to
// the global queue in one batch (only the new task while a thief holds a
// claim). A one-worker pool's run queue is exclusive
// (runq.Queue.SetExclusive): no thief, pops without a compare-and-swap.
//
// The global queue (globalq.Queue, from the kit) is a FIFO under a mutex
// with an atomic length mirror; each mailbox is one too. A worker takes a
// share when its run queue is dry, and every global_queue_interval ticks
// ahead of it (globalq.Queue.Take): one task more than an even split
// between the workers (len/workers + 1), filling its run queue at most to
// half, so tasks a take queues land in the half an overflow keeps and are
// polled before an overflow could send them back.
//
// A worker with nothing to run searches: it scans every other run queue
// once from a random one and takes half of the first backlog, rounded
// down (runq.HalfDown), so a lone task stays with its worker; it runs the
// oldest task it took and queues the others. At most half the workers
// (and at least one) search at once. A push that leaves a run queue with two or more tasks,
// and every global queue push, wakes an idle worker unless one is
// searching (see idle for the last look that makes this safe).
//
// # Budget and no LIFO slot
//
// Each poll gets the full cooperative budget (core.Budget). There is no
// LIFO slot: tasks that wake each other on one worker meet in its run
// queue, which only that worker pushes to and pops from without
// contention, so the slot's cache benefit is small, and strict FIFO keeps
// a worker's tasks fair without the slot's starvation guard. A yield
// (core.Yield) defers its wake until the worker's next driver poll.
//
// # Parking and time
//
// A worker with nothing to do publishes itself idle, looks once more at
// every queue, and parks in its own driver; Unpark wakes it. Its parker
// (park.Parker, from the kit) has a state machine that spares the Unpark
// system call while the worker is awake, and while its driver is
// quiescent (core.QuiescentDriver: nothing registered or in flight) the
// worker parks on a channel instead, moved into the driver by the driver's
// activation hook, which reaches the worker's own parker (the handshake is
// described at park.Parker.Park). One parked worker at a time holds the
// timers: it parks until the next deadline and is unparked when an
// earlier one is armed (park.Deadline, spi.Parking); every worker
// fires due timers after each park and every event_interval ticks. With an auto-advancing virtual clock the
// clock jumps to the next deadline only when the whole pool is idle: every
// worker published idle (or failed) and every queue and mailbox is empty.
// The last worker to go idle always checks.
//
// # Failures
//
// A worker fails when its driver's Park returns an error or its loop
// panics outside any task. The first failure (a *WorkerError) goes to
// worker zero, which delivers it to the roots of the running BlockOn calls
// by waking them; a root takes the failure before its next poll: the
// worker that takes it from a queue cancels it with the failure as the
// cause, so rt.BlockOn returns a core.JoinError wrapping it (errors.As
// finds the *WorkerError). Failure reports it too, also after the root completed.
// The failed worker leaves the idle set's choices, closes its mailbox,
// moves its queued tasks to the global queue, and waits for the shutdown;
// tasks whose I/O is registered on its driver are not woken again until
// then.
//
// # Shutdown
//
//	Shutdown caller        worker i (every worker)
//	  enter the barrier
//	  close the task set,
//	    the global queue
//	  unpark every worker ->  sees closed at its next tick or wake
//	  cancel every task       shut down its run queue and mailbox tasks
//	    (from shard 0)        cancel every task (from shard i)
//	  leave the barrier       wait at the barrier for every worker
//	  release BlockOn             and the Shutdown caller
//	  wait for the workers    close its mailbox and its driver, exit
//
// No worker closes its driver until every worker and the Shutdown caller
// have finished cancelling tasks, since a task polled on one worker may
// hold handles of another worker's driver and its Drop calls that driver.
// Called from inside a task, Shutdown does not wait for the workers (they
// wait at the barrier for that task's poll to end).
package percore
