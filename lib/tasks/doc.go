// Package tasks holds utilities for structured task management on weft:
//
//   - [CancellationToken]: a cancellation signal shared by tasks, with
//     child tokens (cancelling a parent cancels its children, not the
//     other way round), a [CancelledFuture] to await it, a [DropGuard]
//     that cancels when dropped, and [FromContext] to cancel from a
//     context.Context.
//   - [TaskTracker]: counts tasks (or futures) it tracks, keeps none of
//     their outputs, and offers a [TaskTracker.Wait] future that resolves
//     once the tracker is closed and every tracked task has ended; the
//     graceful-shutdown building block.
//   - [JoinSet]: owns a set of spawned tasks of one output type and joins
//     them in the order they finish; aborting the set, or dropping it,
//     aborts its tasks.
//
// Every waiting future of this package implements core.Dropper and removes
// its waiter in O(1) when dropped. Wakes are never lost: a waiter dropped
// at the moment it is woken leaves whatever woke it (a finished task of a
// JoinSet, a closed and empty tracker, a cancelled token) for the next
// waiter to find.
package tasks
