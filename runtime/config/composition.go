package config

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/weftrt/weft/core"
)

// None is the kind that disables a module. It is valid for the driver and
// the timer only: a runtime without a driver does no I/O, one without a
// timer has no sleeps or timeouts.
const None = "none"

// The values of runtime.unhandled_panic: what the runtime does when a
// task's future panics. Whatever the choice, the panic is recovered per
// task and its JoinHandle resolves with a *core.JoinError that carries the
// panic value and stack.
const (
	// UnhandledPanicLog (the default) keeps the runtime running and logs
	// the panic on the runtime's logger at error level, with the task's
	// ID, the panic value and the stack where it happened, so that a
	// panic nobody joins still leaves a trace.
	UnhandledPanicLog = "log"
	// UnhandledPanicIgnore keeps the runtime running and reports the
	// panic only through the task's JoinHandle.
	UnhandledPanicIgnore = "ignore"
	// UnhandledPanicShutdownRuntime logs the panic and shuts the runtime
	// down.
	UnhandledPanicShutdownRuntime = "shutdown_runtime"
	// UnhandledPanicCrash ends the process as an unrecovered goroutine
	// panic does: "panic: VALUE" and the stack where it happened on
	// standard error, then exit status 2, without running deferred calls
	// or shutting anything down.
	UnhandledPanicCrash = "crash"
)

// unhandledPanicValues lists the values of runtime.unhandled_panic.
var unhandledPanicValues = []string{UnhandledPanicLog, UnhandledPanicIgnore, UnhandledPanicShutdownRuntime, UnhandledPanicCrash}

// Composition is a loaded, validated configuration: the runtime's settings
// and the module chosen for each kind. Load returns a fresh Composition on
// every call; it is a snapshot and must be treated as read-only.
type Composition struct {
	Runtime RuntimeConfig
	// One selection per module kind, in the order of core.Kinds.
	Driver, Clock, Timer, Scheduler Selection
}

// Selection returns the selection of the given module kind. It panics on a
// kind that is not one of core.Kinds.
func (c *Composition) Selection(kind core.Kind) Selection {
	switch kind {
	case core.KindDriver:
		return c.Driver
	case core.KindClock:
		return c.Clock
	case core.KindTimer:
		return c.Timer
	case core.KindScheduler:
		return c.Scheduler
	}
	panic(fmt.Sprintf("config: unknown module kind %q", kind))
}

// selection returns a pointer to the selection of kind, for the loader.
func (c *Composition) selection(kind core.Kind) *Selection {
	switch kind {
	case core.KindDriver:
		return &c.Driver
	case core.KindClock:
		return &c.Clock
	case core.KindTimer:
		return &c.Timer
	case core.KindScheduler:
		return &c.Scheduler
	}
	panic(fmt.Sprintf("config: unknown module kind %q", kind))
}

// Selection is the module chosen for one kind and its configuration.
type Selection struct {
	// Name is the value of the section's kind key: the registered name of
	// the module ("currentthread"), or None.
	Name string
	// Module is the registered module; the zero Module when Name is None.
	Module core.Module
	// Config is the pointer returned by Module.NewConfig, decoded and
	// validated; nil when the module takes no configuration or Name is
	// None.
	Config any
}

// RuntimeConfig holds the settings of the runtime itself, the runtime
// section of the file.
type RuntimeConfig struct {
	// Name names the runtime in logs and metrics. Not empty.
	Name string `koanf:"name"`
	// UnhandledPanic is what a task panic does to the runtime: one of
	// UnhandledPanicLog, UnhandledPanicIgnore,
	// UnhandledPanicShutdownRuntime or UnhandledPanicCrash.
	UnhandledPanic string `koanf:"unhandled_panic"`
	// ShutdownTimeout bounds how long shutdown waits for blocking work;
	// zero does not wait. Not negative.
	ShutdownTimeout time.Duration `koanf:"shutdown_timeout"`
	// EventBuffer is how many driver events a worker takes per park.
	// Between 1 and MaxEventBuffer.
	EventBuffer int `koanf:"event_buffer"`
	// Blocking configures the pool that runs blocking calls.
	Blocking BlockingConfig `koanf:"blocking"`
}

// BlockingConfig configures the runtime's pool of goroutines for blocking
// calls.
type BlockingConfig struct {
	// MaxThreads caps the goroutines running blocking calls at once.
	// Between 1 and MaxBlockingThreads.
	MaxThreads int `koanf:"max_threads"`
	// KeepAlive is how long an idle blocking goroutine waits for work
	// before it exits. Positive.
	KeepAlive time.Duration `koanf:"keep_alive"`
}

// The bounds of the runtime's counts: what one machine can serve.
const (
	// MaxEventBuffer bounds runtime.event_buffer. Each driver allocates an
	// event buffer of this size (12 to 32 bytes an event), and a park that
	// finds more events ready leaves the rest to the next one, so a larger
	// buffer only costs memory: 65536 events are at most 2 MiB a driver,
	// and percore has a driver per worker.
	MaxEventBuffer = 1 << 16
	// MaxBlockingThreads bounds runtime.blocking.max_threads. A blocking
	// call in progress holds an OS thread, and Go aborts a program that
	// uses more than 10000 of them (the default of
	// runtime/debug.SetMaxThreads); 8192 leaves the rest to the
	// scheduler's workers and the program's own threads.
	MaxBlockingThreads = 8192
)

// DefaultRuntime returns the runtime settings used when the configuration
// sets none.
func DefaultRuntime() RuntimeConfig {
	return RuntimeConfig{
		Name:            "weft",
		UnhandledPanic:  UnhandledPanicLog,
		ShutdownTimeout: 10 * time.Second,
		EventBuffer:     1024,
		Blocking: BlockingConfig{
			MaxThreads: 512,
			KeepAlive:  10 * time.Second,
		},
	}
}

// Validate reports every invalid setting of r as a *core.ConfigError whose
// key is relative to the runtime section ("blocking.max_threads"), joined
// with errors.Join; nil when r is valid.
func (r *RuntimeConfig) Validate() error {
	var errs []error
	bad := func(key, problem string, valid ...string) {
		errs = append(errs, &core.ConfigError{Key: key, Problem: problem, Valid: valid})
	}
	if r.Name == "" {
		bad("name", "must not be empty")
	}
	if !slices.Contains(unhandledPanicValues, r.UnhandledPanic) {
		bad("unhandled_panic", fmt.Sprintf("unknown value %q", r.UnhandledPanic), unhandledPanicValues...)
	}
	if r.ShutdownTimeout < 0 {
		bad("shutdown_timeout", fmt.Sprintf("must be >= 0, got %v", r.ShutdownTimeout))
	}
	if r.EventBuffer < 1 {
		bad("event_buffer", fmt.Sprintf("must be >= 1, got %d", r.EventBuffer))
	} else if r.EventBuffer > MaxEventBuffer {
		bad("event_buffer", fmt.Sprintf("must be at most %d (a park that finds more events ready leaves the rest "+
			"to the next one; a larger buffer only costs memory), got %d", MaxEventBuffer, r.EventBuffer))
	}
	if r.Blocking.MaxThreads < 1 {
		bad("blocking.max_threads", fmt.Sprintf("must be >= 1, got %d", r.Blocking.MaxThreads))
	} else if r.Blocking.MaxThreads > MaxBlockingThreads {
		bad("blocking.max_threads", fmt.Sprintf("must be at most %d (each blocking call holds an OS thread, and Go "+
			"aborts a program with more than 10000), got %d", MaxBlockingThreads, r.Blocking.MaxThreads))
	}
	if r.Blocking.KeepAlive <= 0 {
		bad("blocking.keep_alive", fmt.Sprintf("must be > 0, got %v", r.Blocking.KeepAlive))
	}
	return errors.Join(errs...)
}

// sections lists the top-level sections: runtime, then core.Kinds.
func sections() []string {
	s := []string{runtimeSection}
	for _, k := range core.Kinds {
		s = append(s, string(k))
	}
	return s
}

const (
	runtimeSection = "runtime"
	kindKey        = "kind"
)

// DefaultKind returns the module a section selects when the configuration
// names none: among the registered modules of kind that are available on
// this system, the one of highest rank (core.Preferred; each module
// declares its rank where it registers). With none, it is None, which for
// the scheduler and the clock is a problem reported at the kind key.
//
// With every built-in module linked, the default composition is the
// workstealing scheduler, the real clock, the wheel timer and the
// platform's readiness driver (epoll on Linux, kqueue on macOS and the
// BSDs, none elsewhere).
func DefaultKind(kind core.Kind) string {
	return defaultKind(kind, nil)
}

// defaultKind is DefaultKind over the registry and a load's extra modules.
func defaultKind(kind core.Kind, extra []core.Module) string {
	mods := extra
	for _, name := range core.Names(kind) {
		if slices.ContainsFunc(extra, func(m core.Module) bool { return m.Kind == kind && m.Name == name }) {
			continue // the load's module of that name hides the registered one
		}
		if m, err := core.Lookup(kind, name); err == nil {
			mods = append(mods, m)
		}
	}
	if m, ok := core.Preferred(kind, mods); ok {
		return m.Name
	}
	return None
}

// noneAllowed reports whether a kind may be disabled with None.
func noneAllowed(kind core.Kind) bool {
	return kind == core.KindDriver || kind == core.KindTimer
}
