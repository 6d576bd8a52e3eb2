// Package integration holds the tests that compose modules of different
// kinds: the driver suites of epoll, io_uring and kqueue on the
// currentthread, workstealing and percore schedulers, the timing suite of
// the wheel and the heap on a runtime, and the benchmarks that need a
// whole runtime (W7a on a scheduler, io_uring against epoll).
//
// They live in a module of their own so that each scheduler, driver and
// timer module requires only core, the shared kit of its kind
// (drivers/internal or schedulers/internal), golang.org/x/sys and test
// libraries: no implementation module requires another, and each builds,
// tests and is tagged on its own (GOWORK=off). .ci/check-module-deps
// enforces it. The package itself is empty; only its tests link the
// modules.
package integration
