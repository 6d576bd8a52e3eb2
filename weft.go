// Package weft is the batteries-included entry point to the weft runtime:
// one import registers every built-in module and gives a working default
// runtime. The default composition is declared by the modules themselves
// (each registers with a default rank), so the facade builds the same
// runtime as rt.NewBuilder().Build() with the same modules linked:
// workstealing, the real clock, the timing wheel and the platform's
// readiness driver (epoll on Linux, kqueue on macOS and the BSDs).
//
// The plugin modules (drivers, timers and scheduler policies served by a
// subprocess over hashicorp/go-plugin) are not among them, so that a
// program on this package links no go-plugin, gRPC or protobuf. A program
// that wants them adds one import:
//
//	import _ "github.com/weftrt/weft/plugins"
//
//	v, err := weft.Run(myFuture) // build the default runtime, block on, close
//
// For control over the composition, use Open (a configuration file), or
// NewBuilder (the same keys from Go). The contracts themselves (futures,
// tasks, the scheduler, driver, timer and clock SPIs) live in
// github.com/weftrt/weft/core; runtime assembly in
// github.com/weftrt/weft/runtime/rt.
package weft

import (
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"

	// Built-in modules register themselves from init.
	_ "github.com/weftrt/weft/drivers/epoll"
	_ "github.com/weftrt/weft/drivers/iouring"
	_ "github.com/weftrt/weft/drivers/kqueue"
	_ "github.com/weftrt/weft/schedulers/currentthread"
	_ "github.com/weftrt/weft/schedulers/percore"
	_ "github.com/weftrt/weft/schedulers/workstealing"
	_ "github.com/weftrt/weft/timers/heap"
	_ "github.com/weftrt/weft/timers/wheel"
)

// Future is core.Future: a poll-driven computation producing a T.
type Future[T any] = core.Future[T]

// Context is core.Context: what a future receives when polled.
type Context = core.Context

// JoinHandle is core.JoinHandle: the owner's view of a spawned task.
type JoinHandle[T any] = core.JoinHandle[T]

// Result is core.Result: a value or an error.
type Result[T any] = core.Result[T]

// Runtime is an assembled runtime; see rt.Runtime.
type Runtime = rt.Runtime

// Builder composes a runtime from Go; see rt.Builder.
type Builder = rt.Builder

// New builds the default composition (overridden by WEFT_ environment
// variables).
func New(opts ...rt.Option) (*Runtime, error) { return rt.Open("", opts...) }

// Open builds the composition described by the configuration file at path
// (YAML, TOML or JSON), with WEFT_ environment variables applied on top.
func Open(path string, opts ...rt.Option) (*Runtime, error) { return rt.Open(path, opts...) }

// NewBuilder starts a composition in Go.
func NewBuilder() *Builder { return rt.NewBuilder() }

// BlockOn runs f as the runtime's root task and waits for it; see
// rt.BlockOn.
func BlockOn[T any](r *Runtime, f Future[T]) (T, error) { return rt.BlockOn(r, f) }

// Spawn starts f as a task. s is the *Context of the calling task (the task
// goes to the calling worker) or a runtime or its Handle (from any
// goroutine).
func Spawn[T any](s core.Spawner, f Future[T]) *JoinHandle[T] { return core.Spawn(s, f) }

// Yield returns a future that gives other tasks a turn once.
func Yield() Future[core.Unit] { return core.Yield() }

// Run builds the default runtime, runs f to completion on it, and closes
// the runtime: the equivalent of Tokio's #[tokio::main].
func Run[T any](f Future[T]) (T, error) {
	var zero T
	r, err := New()
	if err != nil {
		return zero, err
	}
	v, err := rt.BlockOn(r, f)
	if cerr := r.Close(); err == nil && cerr != nil {
		return v, cerr
	}
	return v, err
}
