package co

import (
	"runtime/debug"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/future"
	"github.com/weftrt/weft/runtime/rt"
)

// Ctx is a coroutine task's handle on itself, passed to its body. It is
// valid only on the body's coroutine while the task runs; see the package
// documentation.
type Ctx struct {
	// cx is the Context of the poll that resumed the body; nil while the
	// body is suspended.
	cx *core.Context
	// co is the coroutine running the body.
	co *coro
	// aborting is set by Drop before it resumes the body to unwind it.
	aborting bool
	// fairSeeded tells whether fairRand, the source of Select's starting
	// branches, has been seeded.
	fairSeeded bool
	fairRand   future.Fair
}

// unwind is the panic value that unwinds an aborted body. It is recovered
// at the top of the coroutine and never leaves this package unless a body
// recovers it itself; its Error method says what it is for that case.
type unwind struct{}

func (*unwind) Error() string {
	return "weft/co: the coroutine task was aborted and is unwinding (do not recover this value)"
}

var errUnwind = &unwind{}

// running returns the Context of the poll that resumed the body, panicking
// with a message naming op when c is not running.
func (c *Ctx) running(op string) *core.Context {
	if c == nil {
		panic("weft/co: " + op + " called with a nil *co.Ctx; it can only be called inside a coroutine task (co.Go, co.Main, co.Future) with the Ctx its body received")
	}
	if c.cx == nil {
		panic("weft/co: " + op + " called outside its coroutine task: the *co.Ctx belongs to a task that is not running on this goroutine (it was passed to another goroutine or kept after the task ended)")
	}
	return c.cx
}

// Context returns the Context of the poll that is running the body, for
// APIs that take one (net.ListenTCP, timing.Now, core.Spawn). It is valid
// until the body next suspends; never keep it.
func (c *Ctx) Context() *core.Context { return c.running("Ctx.Context") }

// SpawnTask implements [core.Spawner]: it spawns t on the worker running
// the body, so co.Go(c, ...) and core.Spawn(c, ...) from a body use the
// worker's run queue.
func (c *Ctx) SpawnTask(t *core.Task) error { return c.running("Ctx.SpawnTask").SpawnTask(t) }

// Yield lets other tasks, the driver and the timers run before the body
// continues (see core.Yield).
func (c *Ctx) Yield() { Await(c, core.Yield()) }

// Await runs f to completion on the body's task and returns its value:
// each time f is pending the body is suspended until the task is woken.
// The task's Context (waker, worker, budget) is the one f sees, exactly
// as if the task polled f itself.
//
// If the task is aborted while Await waits, f is dropped and the body
// unwinds (see the package documentation). Await panics when c is not a
// running coroutine task's Ctx.
func Await[T any](c *Ctx, f core.Future[T]) T {
	cx := c.running("Await")
	if c.aborting {
		// Unwinding: a deferred call awaits. Do not wait.
		core.Drop(f)
		panic(errUnwind)
	}
	for {
		if v, ok := f.Poll(cx); ok {
			return v
		}
		// suspend reports false exactly when the body must unwind, so
		// aborting needs no check of its own on the way round.
		if !c.suspend() {
			core.Drop(f)
			panic(errUnwind)
		}
		cx = c.cx
	}
}

// AwaitResult awaits a future of a core.Result and returns its value and
// error, the shape of weft's fallible operations (reads, accepts, joins).
func AwaitResult[T any](c *Ctx, f core.Future[core.Result[T]]) (T, error) {
	return Await(c, f).Unwrap()
}

// suspend hands control back to the poll that resumed the body and
// returns when the task is polled again. It reports false when the body
// must unwind instead (the task was dropped).
func (c *Ctx) suspend() bool {
	c.cx = nil
	if !c.co.yield(struct{}{}) {
		// The coroutine is being stopped; that only happens to idle
		// pooled coroutines, so this is a defensive path.
		return false
	}
	return !c.aborting
}

// Phases of a coroutine task.
const (
	phaseFresh    uint8 = iota // never polled: no coroutine yet
	phaseRunning               // has a coroutine; the body is suspended between polls
	phaseFinished              // the body returned or panicked
	phaseDropped               // dropped, or completed and its output taken
)

// Task is the future of a coroutine task: polling it runs the body until
// it suspends or returns. It implements [core.Dropper]; dropping it
// while the body is suspended unwinds the body. Create one with [Future].
type Task[T any] struct {
	ctx   Ctx
	body  func(*Ctx) T
	out   T
	phase uint8

	// panicked, pval and pstack record a panic of the body (other than
	// the unwind) and the stack where it happened, re-raised on the
	// polling goroutine so the task fails with both.
	panicked bool
	pval     any
	pstack   []byte
}

// Future returns body as a future, to spawn with core.Spawn or to compose
// with other futures (a select, a timeout). Nothing runs until its first
// poll. Most code uses [Go] or [Main].
func Future[T any](body func(c *Ctx) T) *Task[T] {
	if body == nil {
		panic("weft/co: nil body")
	}
	return &Task[T]{body: body}
}

// Go spawns body as a coroutine task on s: a *co.Ctx (the worker running
// the calling body), a *core.Context, a runtime or a runtime handle. It
// returns the task's handle, a future of the body's value; the task fails
// with a *core.JoinError if the body panics or the task is aborted.
func Go[T any](s core.Spawner, body func(c *Ctx) T) *core.JoinHandle[T] {
	return core.Spawn[T](s, Future(body))
}

// Main runs body as the root task of r, blocks until it returns, and
// gives back its value and error: the entry point from ordinary Go code
// into coroutine tasks (weft.Main does the same on the default runtime).
// It must not be called from inside a task.
//
// The error is the body's own, returned as is, unless the body never got
// to return one: a body that panics yields a *core.JoinError carrying the
// panic value and stack (errors.As tells it apart), and a runtime that
// cannot run the task (it was closed) yields the error rt.BlockOn
// reports.
func Main[T any](r *rt.Runtime, body func(c *Ctx) (T, error)) (T, error) {
	if body == nil {
		panic("weft/co: nil body")
	}
	res, err := rt.BlockOn[core.Result[T]](r, Future(func(c *Ctx) core.Result[T] {
		v, err := body(c)
		return core.Result[T]{Value: v, Err: err}
	}))
	if err != nil {
		var zero T
		return zero, err
	}
	return res.Value, res.Err
}

// Run is Main for a body that returns only an error, the shape of most
// programs' main body (serve until told to stop).
func Run(r *rt.Runtime, body func(c *Ctx) error) error {
	if body == nil {
		panic("weft/co: nil body")
	}
	_, err := Main(r, func(c *Ctx) (core.Unit, error) { return core.Unit{}, body(c) })
	return err
}

// Poll implements [core.Future]: it resumes the body with cx until the
// body suspends (pending) or returns (ready). A panic of the body is
// raised again here, on the polling goroutine.
func (t *Task[T]) Poll(cx *core.Context) (T, bool) {
	t.ctx.cx = cx
	switch t.phase {
	case phaseRunning:
		// The hot path: the body is suspended in an Await. Its job is
		// still set on the coroutine, so only the switch remains; the
		// body clears ctx.cx itself when it suspends again.
		t.ctx.co.next()
	case phaseFresh:
		t.ctx.co = getCoro()
		t.phase = phaseRunning
		t.ctx.co.resume(t)
	default:
		t.ctx.cx = nil
		panic("weft/co: coroutine task polled after it completed or was dropped")
	}
	if t.phase != phaseFinished {
		var zero T
		return zero, false
	}
	t.ctx.cx = nil
	putCoro(t.ctx.co)
	t.ctx.co = nil
	t.phase = phaseDropped
	if t.panicked {
		v, stack := t.pval, t.pstack
		t.pval, t.pstack = nil, nil
		core.Repanic(v, stack)
	}
	v := t.out
	var zero T
	t.out = zero
	return v, true
}

// Drop implements [core.Dropper]. A body that never ran never will; a
// suspended body is resumed to unwind (its pending Await drops its future
// and its deferred calls run) before Drop returns.
func (t *Task[T]) Drop() {
	switch t.phase {
	case phaseFresh:
		t.phase = phaseDropped
		return
	case phaseFinished, phaseDropped:
		return
	}
	t.ctx.aborting = true
	// Deferred calls that use the Context while unwinding (to drop
	// futures, to spawn) get one without a worker: nothing they start
	// can wait, and Await does not poll while unwinding.
	t.ctx.cx = core.NewContext(nil)
	t.ctx.co.resume(t)
	t.ctx.cx = nil
	// A body that recovered the unwind and went on awaiting is unwound
	// again by each Await until it returns; the coroutine switch above
	// returns only once it has finished.
	putCoro(t.ctx.co)
	t.ctx.co = nil
	t.phase = phaseDropped
	t.pval, t.pstack = nil, nil
	var zero T
	t.out = zero
}

// run executes the body on the coroutine. It is the job the coroutine
// runs; it never panics.
func (t *Task[T]) run() {
	defer func() {
		if r := recover(); r != nil && r != errUnwind {
			t.panicked = true
			t.pval = r
			t.pstack = debug.Stack()
		}
		t.phase = phaseFinished
	}()
	t.out = t.body(&t.ctx)
}
