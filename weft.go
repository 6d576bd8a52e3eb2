// Package weft is the entry point to the weft runtime: one import
// registers every built-in module and runs straight-line Go code as weft
// tasks on the default runtime.
//
// A program's main body is a function of a *[Ctx], run as a coroutine task
// (package lib/co): it spawns tasks with [Go] and waits on futures with
// [Await] as if they were blocking calls, while each wait suspends only
// the task, not a thread:
//
//	func main() {
//		err := weft.Run(func(c *weft.Ctx) error {
//			h := weft.Go(c, func(c *weft.Ctx) int { return 41 })
//			v, err := weft.Await(c, h).Unwrap()
//			fmt.Println(v+1, err) // 42 <nil>
//			return err
//		})
//		if err != nil {
//			log.Fatal(err)
//		}
//	}
//
// [Run] and [Main] build the default runtime (workstealing, the real
// clock, the timing wheel and the platform's readiness driver: epoll on
// Linux, kqueue on macOS and the BSDs; WEFT_ environment variables
// override any key), run the body, and close the runtime. On a runtime
// you composed yourself, from a configuration file ([Open]) or from Go
// ([NewBuilder]), [RunOn] and [MainOn] do the same without building or
// closing it. The body's error comes back as it returned it; only a body
// that never returned (it panicked: a *core.JoinError, or the runtime
// was shut down under it: core.ErrShutdown) yields another error.
//
// What a body must not do (block its goroutine on something only another
// weft task can provide) and what the runtime does when it does is in
// lib/co's documentation. Networking is lib/wnet, channels lib/wsync,
// timers lib/timing, task groups and cancellation lib/tasks. The
// poll-driven level beneath all this (futures as state machines, wakers,
// the scheduler, driver, timer and clock SPIs) is package core, and
// runtime assembly is runtime/rt.
//
// The default composition is declared by the modules themselves (each
// registers with a default rank), so the facade builds the same runtime as
// rt.NewBuilder().Build() with the same modules linked. The plugin
// modules (drivers, timers and scheduler policies served by a subprocess
// over hashicorp/go-plugin) are not among them, so that a program on this
// package links no go-plugin, gRPC or protobuf; a program that wants them
// adds one import:
//
//	import _ "github.com/weftrt/weft/plugins"
package weft

import (
	"errors"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
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

// Ctx is a coroutine task's handle on itself, passed to its body; see
// co.Ctx.
type Ctx = co.Ctx

// Future is core.Future: a poll-driven computation producing a T.
type Future[T any] = core.Future[T]

// JoinHandle is core.JoinHandle: the owner's view of a spawned task, and a
// future of its result.
type JoinHandle[T any] = core.JoinHandle[T]

// Result is core.Result: a value or an error.
type Result[T any] = core.Result[T]

// Runtime is an assembled runtime; see rt.Runtime.
type Runtime = rt.Runtime

// Builder composes a runtime from Go; see rt.Builder.
type Builder = rt.Builder

// Run builds the default runtime, runs body on it as the root task, closes
// the runtime and returns body's error: the equivalent of Tokio's
// #[tokio::main] for a main body that returns only an error. A failure to
// build or close the runtime is returned too (the body's error first).
func Run(body func(c *Ctx) error) error {
	_, err := Main(func(c *Ctx) (core.Unit, error) { return core.Unit{}, body(c) })
	return err
}

// Main is Run for a body that returns a value: it builds the default
// runtime, runs body on it, closes the runtime and returns body's value
// and error. When it returns, no goroutine it started is left (the idle
// coroutines of lib/co's pool are ended too). See the package documentation for the errors other than the
// body's own.
func Main[T any](body func(c *Ctx) (T, error)) (T, error) {
	r, err := New()
	if err != nil {
		var zero T
		return zero, err
	}
	v, err := co.Main(r, body)
	if cerr := r.Close(); cerr != nil {
		err = errors.Join(err, cerr)
	}
	// The runtime is gone; so are the idle coroutines its bodies left in
	// lib/co's pool, so that Main leaves no goroutine behind.
	co.ReleaseIdle()
	return v, err
}

// RunOn runs body as the root task of r, a runtime built with Open or
// NewBuilder, and returns its error; r stays open. It must not be called
// from inside a task.
func RunOn(r *Runtime, body func(c *Ctx) error) error { return co.Run(r, body) }

// MainOn runs body as the root task of r and returns its value and error;
// r stays open. It must not be called from inside a task.
func MainOn[T any](r *Runtime, body func(c *Ctx) (T, error)) (T, error) {
	return co.Main(r, body)
}

// Go spawns body as a coroutine task and returns its handle. s is the
// calling body's *Ctx (the task starts on the same worker), or a runtime
// or its Handle (from any goroutine). Await the handle for the body's
// value: weft.Await(c, h).Unwrap() gives the value, or a *core.JoinError
// if the task panicked or was aborted.
func Go[T any](s core.Spawner, body func(c *Ctx) T) *JoinHandle[T] { return co.Go(s, body) }

// Await waits for f inside a body and returns its value: the task is
// suspended (its worker runs other tasks) until f is ready. Any weft
// future can be awaited: a join handle, a channel receive, a read, a
// sleep. It panics when c is not the running body's Ctx; see co.Await.
func Await[T any](c *Ctx, f Future[T]) T { return co.Await(c, f) }

// New builds the default composition (overridden by WEFT_ environment
// variables).
func New(opts ...rt.Option) (*Runtime, error) { return rt.Open("", opts...) }

// Open builds the composition described by the configuration file at path
// (YAML, TOML or JSON), with WEFT_ environment variables applied on top.
func Open(path string, opts ...rt.Option) (*Runtime, error) { return rt.Open(path, opts...) }

// NewBuilder starts a composition in Go.
func NewBuilder() *Builder { return rt.NewBuilder() }
