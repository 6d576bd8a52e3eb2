// Package blocking is weft's blocking pool: a bounded set of goroutines that
// run functions which block (a read(2) on a regular file, a DNS lookup
// through the C resolver, a call into a library with no async API, a long
// computation) so that they never occupy a scheduler worker.
//
// A Go goroutine that enters a blocking system call is handed an OS thread
// of its own by the Go runtime, so the goroutines of this pool play the part
// that OS threads play in Tokio's blocking pool. What the pool adds over
// "go f()" is a bound on how many such goroutines (and therefore threads)
// exist at once, reuse of idle goroutines, a JoinHandle that tasks can await
// like any other, and an orderly shutdown.
//
// [Spawn] runs a function and returns an ordinary [core.JoinHandle];
// [Pool.SpawnBlockingFunc] is the fire-and-forget form that implements
// [core.BlockingSpawner] for schedulers.
//
// # Queue
//
// Every job is a core task whose future calls the function on its first
// poll. Jobs wait in one FIFO queue guarded by the pool's mutex. Submitting
// a job and the loop of a pool goroutine are, in outline:
//
//	submit(job)                          goroutine
//	  lock                                 lock
//	  shut down? refuse the job            loop:
//	  push job at the back                   while not shut down, pop a job:
//	  idle goroutine? hand one a token         unlock, run it, lock
//	  else below MaxThreads? start one       shut down? exit
//	  else leave the job queued              park on the idle stack until a
//	  unlock                                   token, keep-alive or shutdown
//	                                         token? loop; otherwise exit
//
// When MaxThreads goroutines exist and none is idle, a new job simply waits
// in the queue until a goroutine finishes its current job: that is the
// pool's backpressure. It applies only inside the pool; it never slows the
// task that submitted the job. A job never runs while the mutex is held, so
// a job may itself submit jobs to the pool.
//
// # Idle goroutines and keep-alive
//
// A goroutine that finds the queue empty parks on a stack of idle
// goroutines, each with a private wake channel. A submitter that sees an
// idle goroutine pops the most recently parked one, marks it notified under
// the mutex and sends it one token. The notified mark is what counts: the
// goroutine returns to work only if it finds the mark when it re-takes the
// mutex, whatever woke it. So a keep-alive timer that fires at the same
// moment as a hand-off cannot lose the job (the mark is honoured), and
// nothing but a hand-off can send a goroutine back to work (Tokio's
// num_notify counter solves the same problem for a condition variable,
// whose waits may wake spuriously).
//
// A goroutine that stays parked for KeepAlive with no token removes itself
// from the stack and exits. Because the stack hands work to the newest idle
// goroutine, a light steady load keeps reusing the same few goroutines and
// the surplus ones expire, instead of all of them being kept warm in turn.
// The queue may be empty when a notified goroutine gets there (a busy
// goroutine can take the job first); it then parks again.
//
// # Abort
//
// Aborting a JoinHandle whose job has not started prevents the job: the
// function is never called and the handle resolves with a cancelled
// [core.JoinError] wrapping [core.ErrAborted] when a pool goroutine reaches
// the job in the queue (or with [core.ErrShutdown] if the pool shuts down
// first). Aborting a job that has started has no effect: a running Go
// function cannot be interrupted, so it runs to completion and the handle
// resolves with its value. A function that should stop early must watch a
// signal of its own, such as a context.Context.
//
// # Panics
//
// A panic in a job is recovered by the task machinery: the job's handle
// resolves with a JoinError for which IsPanic reports true and which keeps
// the panic value and stack. The pool goroutine survives and takes the next
// job. A job submitted with SpawnBlockingFunc has no handle, so its panic is
// recovered and discarded.
//
// # Shutdown
//
// [Pool.Shutdown] closes the pool to new jobs, and:
//
//   - jobs still in the queue are not run: each of their handles resolves
//     with a cancelled JoinError wrapping [core.ErrShutdown], before Shutdown
//     returns. (Tokio leaves such handles unresolved; weft resolves them, so
//     a task awaiting one is never stranded.)
//   - jobs that are running are waited for, up to the timeout; those that
//     outlast it keep running on their goroutines, which exit when they
//     finish, and Shutdown reports false.
//   - idle goroutines exit at once.
//
// After Shutdown has begun, [Spawn] returns a handle that is already
// resolved with a cancelled JoinError wrapping ErrShutdown, and
// SpawnBlockingFunc returns an error wrapping ErrShutdown. Shutdown may be
// called any number of times, from any goroutine; a later call waits again
// with its own timeout, so Shutdown(0) followed by Shutdown(-1) first closes
// the pool and then waits for it. A job that calls Shutdown with a negative
// timeout on its own pool waits for itself and never returns.
package blocking
