// Package core holds weft's contracts: the future and task model every
// scheduler runs, and the service-provider interfaces (SPI) through which
// schedulers, I/O drivers, timers and clocks plug into a runtime.
//
// Implementations import core and never each other; core imports no
// implementation. Each implementation registers itself by kind and name from
// its package init (see [RegisterScheduler], [RegisterDriver],
// [RegisterTimer]), in the style of database/sql.
//
// # Futures
//
// A [Future] is a poll-driven state machine: Poll returns (value, true) when
// it is done, or (zero, false) after arranging for the [Waker] in the
// [Context] to be called when progress is possible. A future is polled by one
// goroutine at a time and never after it returned ready.
//
// # Cancellation is explicit
//
// Rust cancels a future by dropping it; Go has no destructors. A future that
// holds a resource (a timer entry, a waiter in a queue, an in-flight I/O
// operation) implements [Dropper]. Whoever abandons a future before it is
// ready (a select, a timeout, a join that failed, an aborted task, a runtime
// shutting down) calls Drop exactly once. After Drop returns, no waker
// registered by that future fires on its behalf and the resource is released
// (an in-flight completion-based operation keeps its buffer reachable until
// the kernel is done with it). Drop is never called on a future that returned
// ready; implementations should still treat such a call as a no-op. Use
// [Drop] to drop a value that may or may not implement Dropper.
//
// # Tasks
//
// A task is a future bound to a scheduler: a heap object of a few words plus
// its future. No goroutine exists per task. Its header carries one atomic
// state word:
//
//	RUNNING        the task is being polled or cancelled; the task's lock
//	COMPLETE       the future finished (or was cancelled); never cleared
//	NOTIFIED       the task is queued, or must be queued when its poll ends
//	CANCELLED      the task must be cancelled at its next scheduling
//	JOIN_INTEREST  a JoinHandle still wants the output
//	JOIN_WAKER     the JoinHandle's waker is published (see joinhandle.go)
//
// Tokio keeps a reference count in the same word; Go's garbage collector
// owns a task's memory here, so the count is gone and the six flags remain.
// The invariants the word enforces: a wake during a poll is never lost (the
// waker sets NOTIFIED and the poller re-queues the task when the poll
// returns), a task is never polled by two workers at once (RUNNING is taken
// with a compare-and-swap), and a completed task is never polled again
// (COMPLETE is never cleared).
//
// # Cooperative budget
//
// Each task poll starts with a budget of [Budget] units (128). Resources that
// may be ready for a long time in a row (channels, join handles, sockets)
// call [Context.Proceed] before making progress; when the budget is spent
// Proceed wakes the task and reports false, so the resource returns pending
// and the task goes to the back of the run queue. [Yield] gives way
// explicitly.
package core
