package core

// Budget is the number of budgeted operations a task may perform in one poll
// before it is made to yield (Tokio's coop budget).
const Budget = 128

// Waker tells an executor that a future can make progress. Wake may be
// called from any goroutine, any number of times; waking a task that is
// already queued or complete does nothing. Wakers are compared with ==, so an
// implementation should be a pointer or a small comparable value.
type Waker interface {
	Wake()
}

// WakerFunc adapts a function to the [Waker] interface. WakerFunc values are
// not comparable; prefer a pointer type when a future needs to know whether
// its stored waker changed.
type WakerFunc func()

// Wake calls f.
func (f WakerFunc) Wake() { f() }

type noopWaker struct{}

func (noopWaker) Wake() {}

// NoopWaker is a [Waker] that does nothing. It is useful to poll a future
// once, for instance in tests.
var NoopWaker Waker = noopWaker{}

// Worker is the scheduler-local state of the goroutine polling a task. Go has
// no thread-locals, so it travels explicitly in the [Context]. A nil Worker
// means the future is polled outside any runtime.
type Worker interface {
	// Scheduler returns the scheduler the worker belongs to.
	Scheduler() Scheduler
	// Defer queues w to be woken after the worker next polls its driver and
	// timers, so a yielding task does not starve I/O.
	Defer(w Waker)
	// Driver returns the I/O driver this worker polls, or nil when the
	// runtime has none.
	Driver() Driver
	// Time returns the runtime's clock and timers, or nil when time is
	// disabled.
	Time() *Time
}

// budget is shared by a Context and the sub-contexts combinators derive from
// it, so that a poll's budget spans the whole future tree.
type budget struct {
	remaining   int
	constrained bool
	// exhausted counts how often the budget forced a task to yield; it is
	// read by schedulers for their metrics.
	exhausted uint64
}

// Context is what a future receives when it is polled: the waker of the task
// being polled, the worker running it, and the task's cooperative budget.
//
// A Context is only valid during the Poll call it was passed to; keep the
// Waker, never the Context. Combinators that need a different waker for a
// child derive one with [Context.WithWaker].
type Context struct {
	waker  Waker
	worker Worker
	budget *budget
}

// NewContext returns a Context outside any runtime: no worker and an
// unconstrained budget. Tests and adapters use it to poll a future by hand.
func NewContext(w Waker) *Context {
	if w == nil {
		w = NoopWaker
	}
	return &Context{waker: w, budget: &budget{}}
}

// newWorkerContext is spi.NewWorkerContext: a Context for a scheduler
// worker, with a constrained budget, full at first, which the worker
// reuses for every task it polls.
func newWorkerContext(w Worker) *Context {
	return &Context{waker: NoopWaker, worker: w, budget: &budget{constrained: true, remaining: Budget}}
}

// Waker returns the waker of the task being polled.
func (cx *Context) Waker() Waker { return cx.waker }

// Worker returns the worker polling the task, or nil outside a runtime.
func (cx *Context) Worker() Worker { return cx.worker }

// WithWaker returns a copy of cx that wakes w instead and shares cx's worker
// and budget. Store the result in the combinator (it is valid for as long as
// the parent Context is) rather than allocating one per poll.
func (cx *Context) WithWaker(w Waker) Context {
	return Context{waker: w, worker: cx.worker, budget: cx.budget}
}

// Proceed consumes one unit of the task's budget. It reports false when the
// budget is spent; the task has then been woken, and the caller must return
// pending without making progress, exactly as if its resource were not
// ready. Outside a runtime the budget is unconstrained.
func (cx *Context) Proceed() bool {
	b := cx.budget
	if b == nil || !b.constrained {
		return true
	}
	if b.remaining <= 0 {
		b.exhausted++
		cx.waker.Wake()
		return false
	}
	b.remaining--
	return true
}

// BudgetRemaining reports how many budget units the current poll has left.
// Schedulers use it to stop running LIFO-slot tasks once the budget is spent.
func (cx *Context) BudgetRemaining() int {
	if cx.budget == nil || !cx.budget.constrained {
		return Budget
	}
	return cx.budget.remaining
}

// resetBudget is spi.WorkerContext.ResetBudget: it gives the next poll a
// full budget. Running a task does not reset the budget itself, so that a
// scheduler can run a LIFO-slot task inside the budget of the task that
// woke it. Only the holder of the worker context may reset it: a future
// that could reset its own budget would defeat cooperative scheduling.
func (cx *Context) resetBudget() {
	if cx.budget != nil {
		cx.budget.remaining = Budget
	}
}

// BudgetExhaustions reports how many times the budget of contexts sharing
// this one forced a yield. Schedulers read it for metrics.
func (cx *Context) BudgetExhaustions() uint64 {
	if cx.budget == nil {
		return 0
	}
	return cx.budget.exhausted
}

// Wake wakes w from inside a poll. When w is a task of the scheduler running
// the caller, the task is scheduled on the calling worker (its LIFO slot or
// run queue), which keeps message passing between tasks on one core;
// otherwise it is the same as w.Wake().
func (cx *Context) Wake(w Waker) {
	if t, ok := w.(*Task); ok && cx.worker != nil {
		t.wake(cx.worker)
		return
	}
	w.Wake()
}

// Defer arranges for w to be woken after the worker next polls its driver
// and timers. Outside a runtime it wakes w at once.
func (cx *Context) Defer(w Waker) {
	if cx.worker == nil {
		w.Wake()
		return
	}
	cx.worker.Defer(w)
}

// Yield returns a future that is pending the first time it is polled and
// ready the second, giving other tasks, the driver and the timers a turn. The
// wake is deferred until the worker has polled its driver, so a yielding
// task cannot starve I/O.
func Yield() Future[Unit] { return &yieldFuture{} }

type yieldFuture struct{ yielded bool }

func (y *yieldFuture) Poll(cx *Context) (Unit, bool) {
	if y.yielded {
		return Unit{}, true
	}
	y.yielded = true
	cx.Defer(cx.waker)
	return Unit{}, false
}
