// Package workstealing is weft's multi-threaded scheduler, registered as
// the scheduler module "workstealing": a fixed number of workers, each a
// goroutine with its own run queue, that take work from each other when
// they run dry. It follows the design of Tokio's multi-thread scheduler.
//
//	r, err := rt.NewBuilder().Scheduler("workstealing").Workers(4).Build()
//
// Tasks are not goroutines: a worker goroutine polls task after task in
// its loop. The goroutines start in New and stop in Shutdown.
//
// # Queues
//
// Every worker has a run queue of 256 slots, a lock-free ring with one
// owner and any number of thieves: runq.Queue, from the scheduler kit
// (schedulers/internal), whose documentation explains the head/steal/tail
// protocol and its memory ordering. The owner pushes and pops without a
// lock: one atomic store to push, one compare-and-swap to pop. A thief
// claims half of another worker's tasks, rounded up (runq.HalfUp), with
// one compare-and-swap, copies them, and releases its claim with another;
// it refuses to steal into its own queue when that is more than half
// full.
//
// A push into a full ring moves its newest half plus the new task to the
// global queue in one batch and keeps the oldest half; if the ring is full
// because a thief holds a claim on some of it, only the new task goes.
//
// The global queue (globalq.Queue, from the kit) is a FIFO under a mutex
// with its length mirrored in an atomic, so the frequent "anything
// there?" costs no lock. It receives tasks scheduled from outside the
// workers (a spawn from any goroutine, a wake from a timer, an I/O driver
// or another runtime) and overflows. A worker whose run queue is empty
// takes a share (globalq.Queue.Take): one more than an even split between
// the workers, filling its run queue at most to half.
//
// # The LIFO slot
//
// A task woken or spawned by the running task goes to the worker's LIFO
// slot and runs as soon as the running task's poll returns; the slot's
// previous occupant goes to the back of the run queue. When one task hands
// work to another (a message, a spawned helper) the data is still in the
// cache. LIFO tasks run on the budget of the task that started the chain,
// at most max_lifo_polls (3) in a row; then the slot is bypassed until the
// next tick, so two tasks waking each other cannot starve the queue. The
// slot cannot be stolen. lifo_slot: false turns it off: everything goes to
// the back of the run queue.
//
// # Fairness
//
// Each pass of the worker loop is a tick. Every global_queue_interval
// ticks the worker looks at the global queue before its own, so global
// work runs however busy the worker is. The interval is tuned per worker
// from the mean poll time (an exponentially weighted average measured per
// batch of polls), aiming at one look every 200 µs of work, clamped to
// [2, 127]; a configured value fixes it. Every event_interval ticks (61)
// the worker polls the driver with a zero timeout, fires due timers and
// wakes the tasks that yielded, so neither I/O nor timers nor yielding
// tasks wait for the queues to drain.
//
// # Idle workers
//
// A worker with nothing to run searches: it tries to steal from every
// other worker, starting from a random one, then looks at the global
// queue. At most half the workers search at once. A worker that finds
// work while it was the last searcher wakes another one, since where
// there was work there may be more. A worker that finds nothing parks.
//
// A push that adds work wakes a parked worker only if nobody is searching
// (a searcher will find it) and somebody is parked. That leaves one race: the
// last searcher gives up just as work arrives, and the pusher, seeing a
// searcher, wakes nobody. So the last searcher, after it has published
// that it stopped, checks every queue once more:
//
//	pusher                              last searcher
//	  store the task (queue tail)         scan: nothing
//	  load idle state: 1 searching        dec searching, enter parked list (RMW)
//	  -> wake nobody                      load every queue tail: a task!
//	                                      -> wake a worker
//
// Both sides store, then load, with sequentially consistent atomics, so at
// least one of them sees the other.
//
// # Parking
//
// A worker parks on its parker (park.Parker, from the kit), whose state
// machine (EMPTY, PARKED, PARKED_OFF_DRIVER, PARKED_DRIVER, NOTIFIED)
// makes an unpark that comes before the park impossible to lose: the park
// then returns at once. The runtime has at most one driver. The first
// parking worker to find it free takes it (the driver slot) and parks in
// Driver.Park, bounded by the next timer deadline; the others park on
// their own channel. An unpark reaches the worker parked in the driver
// through Driver.Unpark. Without a driver, or while the driver is
// quiescent (core.QuiescentDriver: nothing registered or in flight), the
// holder parks on its channel with a timer instead, so that a runtime
// doing no I/O wakes its workers without system calls; the driver's
// activation hook moves it into the driver when I/O is registered (the
// handshake is described at park.Parker.Park; the slot publishes its
// holder for the hook, see parkDriver). Busy workers skip their periodic
// driver poll while the driver is quiescent. A timer armed on another
// goroutine, earlier than the holder's deadline, unparks it through
// core.Time (Parking and SetUnpark). After a park, the worker fires due
// timers and then wakes the tasks deferred by yields, which go to the
// back of its run queue.
//
// Timer and driver wakes reach tasks through Task.Wake and therefore the
// global queue, from which the woken worker (or any other) takes them.
//
// # Virtual time
//
// With an auto-advancing virtual clock, a deadline is reached by moving
// the clock, which is only right when nothing else can happen first: every
// worker is in the parked list, no goroutine is blocked in place, and
// every queue is empty. A worker that parks checks this (under a mutex, so
// two workers cannot both advance for one idle period) before it parks,
// and if it holds, moves the clock to the next deadline and fires; the
// fired tasks wake a worker. Since every worker makes the check as it
// parks, the last one to go idle always makes it; a goroutine leaving
// BlockInPlace, which can also be the last to go idle, makes it too. A
// timer armed from outside the runtime while all are parked unparks the
// driver holder, which checks again. The driver holder never parks until a
// virtual deadline.
//
// # Blocking
//
// Go already hands a thread blocked in a system call over to other
// goroutines, but a task's blocking call blocks its worker's loop and the
// worker's queue with it. BlockInPlace moves the loop instead: it hands
// the worker's core to a new goroutine and runs the blocking function on
// the current one. See BlockInPlace; rt.SpawnBlocking is the alternative
// for work that can leave the task.
//
// # Shutdown
//
// Shutdown follows the steps of Tokio's multi-thread scheduler:
//
//  1. close: the global queue and the task set are closed (each has a
//     closed bit) and every worker is unparked.
//  2. Each worker sees the close at its next tick or wake.
//  3. Each worker cancels every task of the task set, in parallel, each
//     from a different shard; so does the goroutine calling Shutdown,
//     which then releases the BlockOn callers. A task being polled is
//     marked and cancelled by its worker when the poll returns.
//  5. Each worker hands its core in; the last one runs the single-threaded
//     phase:
//  6. it empties every run queue, LIFO slot and the global queue (their
//     tasks were cancelled in step 3), then closes the driver.
//
// Both closed bits matter: a spawn that binds before the task set closes
// is cancelled in step 3; one after it is refused and its JoinHandle
// resolves with core.ErrShutdown; a wake after the global queue closed
// cancels the task instead of queueing it, so nothing enters a queue after
// step 6.
//
//	caller             worker 0                  worker 1
//	Shutdown
//	  close  ------->  (parked) wakes            (polling T) ...
//	  ShutdownAll      ShutdownAll from shard 0  poll returns, T cancelled
//	  release BlockOn  core in: 1 of 2           ShutdownAll from shard 1
//	                   exits                     core in: 2 of 2, the last:
//	                                             drain queues, close driver
//	  waits <----------------------------------- exits
//
// Shutdown waits for every worker goroutine, except the one calling it:
// called from inside a task, it returns at once and that worker stops
// when the task's poll returns (a second Shutdown from outside waits for
// it). No task is polled after Shutdown returns.
//
// # Metrics
//
// Scheduler.Metrics (core.MetricsSource) reports per worker: polls, steal
// operations and stolen tasks, overflows, parks and returns from them
// (unparks), local and remote schedules, LIFO hits, budget-forced yields,
// run queue depth and mean poll time. They are kept and published with
// the kit's metrics package.
package workstealing
