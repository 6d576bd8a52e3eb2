package future

import "github.com/weftrt/weft/core"

// This file holds the helpers through which every combinator keeps the
// contract stated in the package documentation.

// errPolledAfterDone is the panic value of a future of this package polled
// after it returned ready or was dropped: a violation of the Future contract
// by the caller.
func errPolledAfterDone(name string) string {
	return "future." + name + ": polled after it returned ready or was dropped"
}

// dropLive drops every non-nil future in futs exactly once, clearing its slot
// before dropping it so that nothing, not even a re-entrant call, can drop it
// again. If one Drop panics, the futures after it are still dropped before
// the panic continues, as Rust drops the rest of a slice when one element's
// drop panics.
func dropLive[T any](futs []core.Future[T]) {
	for i, f := range futs {
		if f == nil {
			continue
		}
		futs[i] = nil
		dropThen(f, futs[i+1:])
	}
}

// dropThen drops f; if that panics, it drops the live futures of rest before
// the panic propagates.
func dropThen[T any](f core.Future[T], rest []core.Future[T]) {
	ok := false
	defer func() {
		if !ok {
			dropLive(rest)
		}
	}()
	core.Drop(f)
	ok = true
}

// dropBoth drops a and then b, either of which may be nil. b is dropped even
// if dropping a panics.
func dropBoth(a, b any) {
	defer func() {
		if b != nil {
			core.Drop(b)
		}
	}()
	if a != nil {
		core.Drop(a)
	}
}

// budgetSpent reports whether the polling task's cooperative budget is spent,
// without consuming a unit when it is not. When it is spent, the task has
// been woken (by [core.Context.Proceed], which also counts the exhaustion for
// the scheduler's metrics) and the caller must return pending without
// polling anything. Outside a runtime the budget is never spent.
func budgetSpent(cx *core.Context) bool {
	return cx.BudgetRemaining() <= 0 && !cx.Proceed()
}
