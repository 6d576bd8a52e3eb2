package rt

import (
	"log/slog"
	"os"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/config"
)

// Builder composes a runtime in Go. It is the configuration file's twin:
// every setter writes a configuration key, and Build validates the result
// through the same path as a file (defaults, then the file if one was
// named, then WEFT_ environment variables unless IgnoreEnv was called, then
// the builder's keys), so errors name the same keys.
//
//	r, err := rt.NewBuilder().Scheduler("currentthread").Timer("wheel").Build()
type Builder struct {
	path      string
	overrides map[string]any
	ignoreEnv bool
	opts      []Option
	extra     []core.Module
}

// NewBuilder returns a builder of the default composition: for each kind
// the builder's keys leave unnamed, the available linked module of highest
// rank (config.DefaultKind), so that with the same modules linked it
// builds what the weft facade builds.
func NewBuilder() *Builder { return &Builder{overrides: map[string]any{}} }

// ConfigFile loads path before the builder's own keys.
func (b *Builder) ConfigFile(path string) *Builder { b.path = path; return b }

// Set sets a configuration key, e.g. Set("scheduler.workers", 4).
func (b *Builder) Set(key string, value any) *Builder { b.overrides[key] = value; return b }

// Name sets runtime.name.
func (b *Builder) Name(name string) *Builder { return b.Set("runtime.name", name) }

// Scheduler sets scheduler.kind.
func (b *Builder) Scheduler(kind string) *Builder { return b.Set("scheduler.kind", kind) }

// Driver sets driver.kind ("none" disables I/O).
func (b *Builder) Driver(kind string) *Builder { return b.Set("driver.kind", kind) }

// Timer sets timer.kind ("none" disables timers).
func (b *Builder) Timer(kind string) *Builder { return b.Set("timer.kind", kind) }

// Clock sets clock.kind ("real" or "virtual").
func (b *Builder) Clock(kind string) *Builder { return b.Set("clock.kind", kind) }

// Workers sets scheduler.workers, for schedulers that have workers.
func (b *Builder) Workers(n int) *Builder { return b.Set("scheduler.workers", n) }

// MaxBlockingThreads sets runtime.blocking.max_threads.
func (b *Builder) MaxBlockingThreads(n int) *Builder { return b.Set("runtime.blocking.max_threads", n) }

// BlockingKeepAlive sets runtime.blocking.keep_alive.
func (b *Builder) BlockingKeepAlive(d time.Duration) *Builder {
	return b.Set("runtime.blocking.keep_alive", d)
}

// ShutdownTimeout sets runtime.shutdown_timeout, used by Close.
func (b *Builder) ShutdownTimeout(d time.Duration) *Builder {
	return b.Set("runtime.shutdown_timeout", d)
}

// UnhandledPanic sets what a task's panic does to the runtime
// (runtime.unhandled_panic): config.UnhandledPanicLog (the default),
// UnhandledPanicIgnore, UnhandledPanicShutdownRuntime or
// UnhandledPanicCrash.
func (b *Builder) UnhandledPanic(policy string) *Builder {
	return b.Set("runtime.unhandled_panic", policy)
}

// ShutdownOnPanic makes a panic in any task shut the runtime down
// (runtime.unhandled_panic: shutdown_runtime).
func (b *Builder) ShutdownOnPanic() *Builder {
	return b.Set("runtime.unhandled_panic", config.UnhandledPanicShutdownRuntime)
}

// IgnoreEnv stops Build from reading WEFT_ environment variables.
func (b *Builder) IgnoreEnv() *Builder { b.ignoreEnv = true; return b }

// WorkerHooks installs worker lifecycle hooks.
func (b *Builder) WorkerHooks(h core.WorkerHooks) *Builder {
	b.opts = append(b.opts, WithWorkerHooks(h))
	return b
}

// TaskHooks installs task hooks.
func (b *Builder) TaskHooks(h core.TaskHooks) *Builder {
	b.opts = append(b.opts, WithTaskHooks(h))
	return b
}

// Logger sets the runtime's logger.
func (b *Builder) Logger(l *slog.Logger) *Builder {
	b.opts = append(b.opts, WithLogger(l))
	return b
}

// CustomScheduler is the scheduler kind a SchedulerFactory is known by.
const CustomScheduler = "custom"

// SchedulerFactory builds the scheduler with f instead of a registered
// module: scheduler.kind becomes "custom", known to this builder only. The
// conformance kit uses it to run a scheduler (or a deliberately broken one)
// under a real runtime without registering it process-wide.
func (b *Builder) SchedulerFactory(f func(core.SchedulerParams) (core.Scheduler, error)) *Builder {
	b.extra = append(b.extra, core.SchedulerModule(CustomScheduler, "a scheduler supplied by Builder.SchedulerFactory", nil,
		func(_ struct{}, p core.SchedulerParams) (core.Scheduler, error) { return f(p) }))
	return b.Scheduler(CustomScheduler)
}

// Option adds any Option.
func (b *Builder) Option(o Option) *Builder { b.opts = append(b.opts, o); return b }

// Composition validates the builder's configuration without building. A
// WEFT_ variable that names no key is ignored with a warning on the
// builder's Logger (slog.Default() without one).
func (b *Builder) Composition() (*config.Composition, error) {
	env := os.Environ()
	if b.ignoreEnv {
		env = []string{}
	}
	return config.LoadWith(config.LoadOptions{Path: b.path, Environ: env, Overrides: b.overrides, Modules: b.extra,
		Log: loggerOf(b.opts)})
}

// Build validates the configuration and builds the runtime.
func (b *Builder) Build() (*Runtime, error) {
	comp, err := b.Composition()
	if err != nil {
		return nil, err
	}
	return New(comp, b.opts...)
}
