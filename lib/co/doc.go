// Package co runs straight-line Go code as weft tasks: coroutine tasks.
//
// A coroutine task is a function body that awaits futures as if they were
// blocking calls. A program enters them with [Run] or [Main] (or the
// facade's weft.Run and weft.Main, which build the default runtime), spawns
// more with [Go], and waits with [Await]:
//
//	err := co.Run(r, func(c *co.Ctx) error {
//		h := co.Go(c, func(c *co.Ctx) int { return 41 }) // a task of its own
//		v, err := co.Await(c, h).Unwrap()                 // suspends the body, not a thread
//		if err != nil {
//			return err // a *core.JoinError: the task panicked or was aborted
//		}
//		conn := co.Conn(c, stream) // a net.Conn on a weft stream, for this task
//		_, err = fmt.Fprintln(conn, v+1)
//		return err
//	})
//
// The body runs on a coroutine (package iter's Pull): a goroutine of its
// own that only ever runs while the task is being polled, handing control
// back and forth with the polling worker through the Go runtime's
// coroutine switch, not its scheduler. [Await] polls a future with the
// task's Context; while the future is pending it suspends the body and the
// task's poll returns pending, so the worker moves on to other tasks. When
// the future's waker fires, the task is polled again and the body resumes
// where it left off. Everything the weft runtime promises a task (its
// waker, the LIFO slot, the cooperative budget, Drop on abandonment) holds
// for a coroutine task too.
//
// # The Ctx
//
// The body receives a *[Ctx], its handle on the task it runs in. Every
// operation that may suspend takes it ([Await], [Ctx.Yield], the readers,
// writers and connections of this package). A Ctx is valid only on its
// body's coroutine and only while the task runs: Go has no goroutine-local
// storage, so a coroutine task cannot be found implicitly, and passing the
// Ctx explicitly makes it visible which calls may suspend. Calling Await
// with a Ctx whose task is not running (the Ctx was handed to another
// goroutine, or kept after its task finished) panics with a message
// saying so. A Ctx is also a [core.Spawner]: [Go] with a Ctx spawns onto
// the worker running the body.
//
// # What must not block a body
//
// A body runs on the worker that polls its task: while the body runs, that
// worker runs nothing else. Waiting through [Await] (on a weft channel, a
// read, a sleep, a join handle, a lib/wsync lock) suspends the body and
// frees the worker. Blocking the body's goroutine instead (a receive from a
// plain Go channel, sync.WaitGroup.Wait, time.Sleep, a mutex held across
// an Await elsewhere, a blocking system call, a cgo call) holds the worker
// for as long as it blocks. That is only slow when the wait ends by itself
// (time.Sleep, a disk read, a lock held by a goroutine that is not a weft
// task); it is a deadlock when the wait can only end through a weft task
// that needs the blocked worker: a `<-ch` fed by a task spawned from the
// body sits behind the body in the worker's LIFO slot, and on a one-worker
// or current-thread runtime nothing else runs at all. Use the weft form of
// the wait (lib/wsync for channels and locks, lib/timing for sleeps,
// rt.SpawnBlocking for blocking calls, workstealing.BlockInPlace where the
// call cannot move), or [Await] a future that a goroutine completes (a
// lib/wsync/oneshot sent from the goroutine).
//
// # Cost, and the coroutine pool
//
// A coroutine task costs more than a poll-driven one: it holds a goroutine
// (and its stack) while it is suspended, and each suspension is a pair of
// coroutine switches (about 100 ns). Coroutines are taken from a pool when
// a task first runs and returned when it ends, so a task that never
// suspends, or a million short tasks one after another, reuse a handful of
// goroutines, and spawning a coroutine task costs little more than spawning
// any other task (see BENCHMARKS.md in this directory). The pool keeps up
// to [SetMaxIdle] idle coroutines (1024 by default); [ReleaseIdle] ends
// them, for programs and tests that check for leaked goroutines.
//
// # Abort and unwinding
//
// When a coroutine task is aborted or its runtime shuts down while the body
// is suspended, its future is dropped, and Drop resumes the body one last
// time: the pending Await drops the future it was waiting for and panics
// with a private value that unwinds the body, running its deferred calls,
// and is recovered at the top of the coroutine. An Await reached while
// unwinding (in a deferred call) does not wait: it drops its future and
// continues the unwinding. A body must not swallow that panic and carry on
// (recover and re-panic what you do not recognise), and must not call
// runtime.Goexit (t.FailNow in a test): the coroutine would end its
// goroutine's caller too. A body that panics with anything else fails its
// task with a *core.JoinError carrying the panic value, as a poll-driven
// task does.
//
// # Waiting on several things
//
// [Select] waits for the first of several futures, of any types, and
// returns its position, so it reads as a switch:
//
//	tick := timing.Sleep(time.Second)
//	defer core.Drop(tick)
//	var msg core.Result[int]
//	for {
//		switch co.Select(c, co.Case(rx.Recv(), &msg), co.Keep(tick, nil), co.Done(ctx)) {
//		case 0: // msg is the receive's result (ErrClosed once the channel is closed)
//		case 1: // a second passed; tick.ResetAfter(time.Second)
//		case 2: // ctx is done
//		}
//	}
//
// A [Case] branch belongs to the select: if it loses it is dropped, once,
// as future.Select drops its losers. A [Keep] branch is borrowed: it is
// polled but never dropped, so a long-lived future (a ticker, a deadline,
// a context's Done) stays armed across the iterations of a loop, and its
// owner drops it (a deferred core.Drop also runs on abort). Select starts
// each round at a random branch; [SelectBiased] polls in order. Neither
// allocates: declare the destinations outside the loop.
//
// [Sleep] and [SleepUntil] wait on the runtime's timer; [WaitContext] and
// [Done] (or a kept [ContextDone]) wait on a context.Context through
// context.AfterFunc, with no goroutine per wait; [WaitCancelled] and
// [Cancelled] wait on a lib/tasks CancellationToken. [Range],
// [RangeBroadcast] and [RangeWatch] turn a receiver into a range loop that
// ends when the channel closes and loses no message when the loop breaks.
//
// # Standard-library interop
//
// Inside a coroutine task weft streams offer the standard blocking
// interfaces: [Reader] and [Writer] give an io.Reader and io.Writer on any
// weft reader or writer (lib/wio), and [Conn] gives a net.Conn, with
// deadlines, on a weft stream (a lib/wnet TCP or Unix stream, or an
// in-memory lib/wio duplex). So bufio, encoding/json, crypto/tls and the
// rest of the standard library work on weft connections, driven by the
// weft runtime and its I/O driver. Deadlines use the runtime's timer; on a
// runtime without one, a deadline that has passed fails the operation at
// once and a future deadline is not enforced.
//
// # Sharing a stream between tasks
//
// A Ctx belongs to one body, so a Conn (or Reader, or Writer) serves one
// task; tasks share a stream the way goroutines share a net.Conn by each
// wrapping it in a Conn of its own. Every Conn, Reader and Writer owns its
// operations on the stream (a lib/wio Op per direction), so no two ever
// share one: any number of tasks may read and write one stream at once,
// each byte read goes to exactly one Read, and every waiting task is
// woken. Writes take turns as Go's do: a Conn's or Writer's Write holds
// the stream's write lock (lib/wio's WriteLocker, which weft's streams
// have) from its first byte to its last, so each Write's bytes arrive
// contiguously, never interleaved with another task's Write, even when
// the stream takes them in many short writes.
package co
