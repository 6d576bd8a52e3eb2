// Package rt assembles a weft runtime from a configuration: a clock, timers,
// an I/O driver, a blocking pool and a scheduler, each chosen by name from
// the modules registered with core.RegisterScheduler and the other typed
// helpers (or, when a section names none, the linked module of highest
// rank).
//
// # Build order
//
// The clock and timers come first, then the driver factory, the blocking pool
// and finally the scheduler, which creates its driver(s) through the factory
// so a driver that cannot be created (no epoll, no io_uring) fails Build
// before any goroutine has started. A failure part-way releases what was
// built.
//
// # Shutdown
//
// Shutdown(timeout) first shuts the scheduler down (every task is cancelled
// and its future dropped; workers stop; drivers close), then the blocking
// pool: work that never started is cancelled, work that is running is waited
// for up to timeout. Blocking work still running after that is left to
// finish on its own, and Shutdown reports ErrShutdownTimeout.
// ShutdownBackground does not wait at all. Close shuts down with the
// configured runtime.shutdown_timeout.
package rt

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/runtime/blocking"
	"github.com/weftrt/weft/runtime/config"
)

// ErrShutdownTimeout is returned by Shutdown when blocking work was still
// running when the timeout expired.
var ErrShutdownTimeout = errors.New("weft: shutdown timed out waiting for blocking work")

// ErrUnhandledPanic is wrapped by the error BlockOn returns when a task
// panicked and the runtime is configured (runtime.unhandled_panic:
// shutdown_runtime) to shut down on a panic.
var ErrUnhandledPanic = errors.New("weft: a task panicked and the runtime is configured to shut down on unhandled panic")

// Runtime is an assembled runtime. Create it with New, Open or a Builder.
// Its methods are safe for concurrent use.
type Runtime struct {
	comp  *config.Composition
	tasks *core.TaskSet
	sched core.Scheduler
	time  *core.Time
	pool  *blocking.Pool
	log   *slog.Logger

	shutdownOnce sync.Once
	closed       atomic.Bool
	background   sync.WaitGroup
	panicErr     atomic.Pointer[core.JoinError]
}

// Option adjusts what configuration cannot express: callbacks and loggers.
type Option func(*options)

type options struct {
	workerHooks core.WorkerHooks
	taskHooks   core.TaskHooks
	log         *slog.Logger
}

// WithWorkerHooks installs worker lifecycle hooks (after start, before
// stop, before park, after unpark).
func WithWorkerHooks(h core.WorkerHooks) Option { return func(o *options) { o.workerHooks = h } }

// WithTaskHooks installs task hooks (spawn, terminate, panic). OnPanic runs
// before the runtime reacts to the panic as configured.
func WithTaskHooks(h core.TaskHooks) Option { return func(o *options) { o.taskHooks = h } }

// WithLogger sets the logger for the runtime's diagnostics (slog.Default
// otherwise).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// Open loads the configuration at path (defaults, then the file, then WEFT_
// environment variables) and builds a runtime from it. An empty path uses
// defaults and the environment only. A WEFT_ variable that names no key is
// ignored with a warning on the runtime's logger (WithLogger, else
// slog.Default()).
func Open(path string, opts ...Option) (*Runtime, error) {
	comp, err := config.LoadWith(config.LoadOptions{Path: path, Environ: os.Environ(), Log: loggerOf(opts)})
	if err != nil {
		return nil, err
	}
	return New(comp, opts...)
}

// loggerOf returns the logger opts set with WithLogger, or nil.
func loggerOf(opts []Option) *slog.Logger {
	var o options
	for _, f := range opts {
		f(&o)
	}
	return o.log
}

// New builds a runtime from a validated composition.
func New(comp *config.Composition, opts ...Option) (_ *Runtime, err error) {
	var o options
	for _, f := range opts {
		f(&o)
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	r := &Runtime{comp: comp, log: o.log}

	// Clock and timers.
	clock, err := comp.Clock.Module.BuildClock(comp.Clock.Config, core.ClockParams{})
	if err != nil {
		return nil, fmt.Errorf("weft: building clock %q: %w", comp.Clock.Name, err)
	}
	r.time = &core.Time{Clock: clock}
	if comp.Timer.Name != config.None {
		timer, err := comp.Timer.Module.BuildTimer(comp.Timer.Config, core.TimerParams{Clock: clock, Shards: schedulerShards(comp), Log: r.log})
		if err != nil {
			return nil, fmt.Errorf("weft: building timer %q: %w", comp.Timer.Name, err)
		}
		r.time.Timer = timer
		defer func() {
			if err != nil {
				r.closeTimer()
			}
		}()
	}

	// The driver factory: the scheduler decides how many drivers it needs.
	var newDriver func() (core.Driver, error)
	if comp.Driver.Name != config.None {
		sel := comp.Driver
		events := comp.Runtime.EventBuffer
		newDriver = func() (core.Driver, error) {
			d, err := sel.Module.BuildDriver(sel.Config, core.DriverParams{Events: events, Log: r.log})
			if err != nil {
				return nil, fmt.Errorf("weft: building driver %q: %w", sel.Name, err)
			}
			return d, nil
		}
	}

	r.pool = blocking.New(blocking.Config{
		MaxThreads: comp.Runtime.Blocking.MaxThreads,
		KeepAlive:  comp.Runtime.Blocking.KeepAlive,
		Name:       comp.Runtime.Name,
	})
	defer func() {
		if err != nil {
			r.pool.Shutdown(0)
		}
	}()

	hooks := o.taskHooks
	userPanic := hooks.OnPanic
	policy := comp.Runtime.UnhandledPanic
	hooks.OnPanic = func(e *core.JoinError) {
		if userPanic != nil {
			userPanic(e)
		}
		r.onPanic(policy, e)
	}
	r.tasks = core.NewTaskSet(&hooks)

	params := core.SchedulerParams{
		Name:      comp.Runtime.Name,
		Tasks:     r.tasks,
		NewDriver: newDriver,
		Time:      r.time,
		Blocking:  r.pool,
		Hooks:     o.workerHooks,
		Log:       r.log,
	}
	sched, err := comp.Scheduler.Module.BuildScheduler(comp.Scheduler.Config, params)
	if err != nil {
		return nil, fmt.Errorf("weft: building scheduler %q: %w", comp.Scheduler.Name, err)
	}
	r.sched = sched
	return r, nil
}

// schedulerShards is the timer sharding hint: the scheduler's worker count
// when its configuration has one, else 1.
func schedulerShards(comp *config.Composition) int {
	type workerCounter interface{ WorkerCount() int }
	if wc, ok := comp.Scheduler.Config.(workerCounter); ok {
		if n := wc.WorkerCount(); n > 0 {
			return n
		}
	}
	return 1
}

// Composition returns the configuration the runtime was built from.
func (r *Runtime) Composition() *config.Composition { return r.comp }

// Scheduler returns the runtime's scheduler.
func (r *Runtime) Scheduler() core.Scheduler { return r.sched }

// Time returns the runtime's clock and timers.
func (r *Runtime) Time() *core.Time { return r.time }

// Tasks returns the number of live tasks.
func (r *Runtime) Tasks() int { return r.tasks.Len() }

// Pool returns the runtime's blocking pool.
func (r *Runtime) Pool() *blocking.Pool { return r.pool }

// Metrics returns the scheduler's per-worker metrics, or nil if it reports
// none.
func (r *Runtime) Metrics() []core.WorkerMetrics {
	if m, ok := r.sched.(core.MetricsSource); ok {
		return m.Metrics()
	}
	return nil
}

// Handle returns a handle that spawns onto the runtime from any goroutine.
func (r *Runtime) Handle() Handle { return Handle{r: r} }

// Handle is a cheap, copyable reference to a runtime, usable from any
// goroutine. It implements core.Spawner.
type Handle struct{ r *Runtime }

// SpawnTask implements core.Spawner.
func (h Handle) SpawnTask(t *core.Task) error { return h.r.sched.Spawn(t, nil) }

// Runtime returns the runtime the handle refers to.
func (h Handle) Runtime() *Runtime { return h.r }

// SpawnTask implements core.Spawner, so a *Runtime can be passed to
// core.Spawn directly.
func (r *Runtime) SpawnTask(t *core.Task) error { return r.sched.Spawn(t, nil) }

// Spawn starts f on the runtime from any goroutine. Inside a task prefer
// core.Spawn(cx, f), which uses the calling worker's run queue.
func Spawn[T any](s core.Spawner, f core.Future[T]) *core.JoinHandle[T] { return core.Spawn(s, f) }

// SpawnBlocking runs f on the runtime's blocking pool and returns a handle
// that tasks can await.
func SpawnBlocking[T any](h Handle, f func() T) *core.JoinHandle[T] {
	return blocking.Spawn(h.r.pool, f)
}

// closeWaker closes a channel the first time it is woken.
type closeWaker struct {
	once sync.Once
	ch   chan struct{}
}

func (w *closeWaker) Wake() { w.once.Do(func() { close(w.ch) }) }

// BlockOn runs f as the runtime's root task and blocks the calling goroutine
// until it completes, driving the scheduler meanwhile (with currentthread the
// calling goroutine runs every task). It returns f's value, or an error: a
// *core.JoinError if f panicked, core.ErrShutdown (wrapped) if the runtime was
// shut down first, or ErrUnhandledPanic (wrapping the task's JoinError) if
// another task's panic shut the runtime down as configured.
//
// BlockOn must not be called from inside a task.
func BlockOn[T any](r *Runtime, f core.Future[T]) (T, error) {
	var zero T
	t, h := core.NewTask(f)
	w := &closeWaker{ch: make(chan struct{})}
	probe := core.NewContext(w)
	if _, ready := h.Poll(probe); ready {
		w.Wake()
	}
	if err := r.sched.Spawn(t, nil); err != nil {
		spi.Reject(t, err)
		return zero, err
	}
	r.sched.BlockOn(t, w.ch)
	if !h.IsFinished() {
		if pe := r.panicErr.Load(); pe != nil {
			return zero, fmt.Errorf("%w: %w", ErrUnhandledPanic, pe)
		}
		return zero, core.ErrShutdown
	}
	res, _ := h.Poll(probe)
	if res.Err != nil {
		if pe := r.panicErr.Load(); pe != nil && core.IsCancelled(res.Err) {
			return zero, fmt.Errorf("%w: %w", ErrUnhandledPanic, pe)
		}
		return zero, res.Err
	}
	return res.Value, nil
}

// shutdownAsync shuts the scheduler down from a goroutine of its own, so a
// worker may trigger it without waiting for itself.
func (r *Runtime) shutdownAsync() {
	r.background.Add(1)
	go func() {
		defer r.background.Done()
		r.shutdownScheduler()
	}()
}

func (r *Runtime) shutdownScheduler() {
	r.shutdownOnce.Do(func() {
		r.closed.Store(true)
		r.sched.Shutdown()
		r.closeTimer()
	})
}

// closeTimer releases the timer when it holds resources of its own (an
// io.Closer, such as a timer served by a plugin process). It runs after
// the scheduler has stopped, when no task can arm a timer any more.
func (r *Runtime) closeTimer() {
	c, ok := r.time.Timer.(io.Closer)
	if !ok {
		return
	}
	if err := c.Close(); err != nil && r.log != nil {
		r.log.Error("weft: closing the timer", "err", err)
	}
}

// IsShutdown reports whether the runtime has started shutting down.
func (r *Runtime) IsShutdown() bool { return r.closed.Load() }

// Shutdown stops the runtime: every task is cancelled (its future dropped),
// workers and drivers stop, blocking work that never started is cancelled,
// and running blocking work is waited for up to timeout (negative: no
// limit). It returns ErrShutdownTimeout if blocking work outlived the
// timeout. Calling it again is harmless.
func (r *Runtime) Shutdown(timeout time.Duration) error {
	r.shutdownScheduler()
	done := r.pool.Shutdown(timeout)
	r.background.Wait()
	if !done {
		return ErrShutdownTimeout
	}
	return nil
}

// ShutdownBackground shuts down without waiting for blocking work.
func (r *Runtime) ShutdownBackground() {
	r.shutdownScheduler()
	r.pool.Shutdown(0)
	r.background.Wait()
}

// Close shuts down with the configured runtime.shutdown_timeout.
func (r *Runtime) Close() error { return r.Shutdown(r.comp.Runtime.ShutdownTimeout) }

// crash ends the process for runtime.unhandled_panic: crash. A variable so
// that tests can watch it without dying.
var crash = func(e *core.JoinError) {
	fmt.Fprintf(os.Stderr, "panic: %v [recovered by weft in task %d; runtime.unhandled_panic: crash]\n\n%s", e.PanicValue(), e.TaskID(), e.Stack())
	os.Exit(2)
}

// onPanic does what runtime.unhandled_panic says with a task's panic. It
// runs on the worker that polled the task, before the task's JoinHandle
// resolves.
func (r *Runtime) onPanic(policy string, e *core.JoinError) {
	switch policy {
	case config.UnhandledPanicIgnore:
	case config.UnhandledPanicCrash:
		crash(e)
	case config.UnhandledPanicShutdownRuntime:
		if r.panicErr.CompareAndSwap(nil, e) {
			r.log.Error("weft: task panicked; shutting the runtime down as configured (runtime.unhandled_panic: shutdown_runtime)",
				"task", e.TaskID(), "panic", e.PanicValue(), "stack", string(e.Stack()))
			r.shutdownAsync()
		}
	default: // config.UnhandledPanicLog
		r.log.Error("weft: task panicked; the runtime keeps running (runtime.unhandled_panic: log; set it to ignore to silence this, or crash to end the process)",
			"task", e.TaskID(), "panic", e.PanicValue(), "stack", string(e.Stack()))
	}
}
