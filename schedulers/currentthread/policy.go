package currentthread

import "github.com/weftrt/weft/core"

// Policy decides the run order of a Scheduler built with NewWithPolicy. It
// holds the runnable tasks: the scheduler hands it every task that becomes
// runnable and asks it for the one to poll next.
//
// Every method is called from the goroutine running the scheduler's tasks
// (inside BlockOn), one call at a time, never from two goroutines at once:
// a policy needs no lock. A method may not block for long (the scheduler
// runs nothing meanwhile), spawn or wake tasks, or call the scheduler.
//
// A task is runnable from the Spawned or Woken call that hands it over
// until the Next call that returns it; the policy holds it in between, and
// each task is handed over at most once at a time. Next must return a task
// whenever the policy holds one, and nil when it holds none; the scheduler
// panics if it does otherwise, since a task would be lost or polled twice.
// Next may return the held tasks in any order: a policy that never returns
// one of them while others keep becoming runnable starves it.
//
// After Shutdown the scheduler cancels the held tasks itself (they are in
// its task set), without asking the policy for them; if the policy also
// implements io.Closer, Close is the scheduler's last call to it.
type Policy interface {
	// Spawned hands over t, a task just spawned: it has never run.
	Spawned(t *core.Task)
	// Woken hands over t, a task runnable again: woken since its last
	// poll, or during it (it yielded, or spent its budget).
	Woken(t *core.Task)
	// Next removes and returns the held task to poll now, or nil when it
	// holds none. The task returned is polled at once: until it is handed
	// over again it is not runnable.
	Next() *core.Task
	// Completed reports that t, returned by the last Next, finished (or
	// was cancelled) in that poll; it is never handed over again. A task
	// cancelled by Shutdown is not reported.
	Completed(t *core.Task)
}
