// Package future is weft's toolkit for composing futures: leaf futures
// ([Ready], [Pending], [FromFunc], [Lazy]), adapters ([Map], [Then]),
// joins ([Join2], [JoinAll], [TryJoinAll]), selects ([Select], [Select2])
// and [Wait], which drives a future to completion on the calling goroutine
// outside any runtime.
//
// # The combinator contract
//
// Every combinator here keeps four promises about the futures it owns (its
// children), on top of the [core.Future] and [core.Dropper] contracts:
//
//  1. A child that returned ready is never polled again.
//  2. A child that returned ready is never dropped.
//  3. A child that is abandoned before it is ready (a select loser, the rest
//     of a join after an error, every live child when the combinator itself
//     is dropped) is dropped with [core.Drop] exactly once, and never polled
//     afterwards.
//  4. A combinator's own Drop drops every live child, and is a no-op once the
//     combinator has returned ready or was already dropped.
//
// The implementation keeps these promises by construction: a combinator
// clears its reference to a child as soon as the child returns ready or is
// dropped, so a cleared slot can be neither polled nor dropped.
//
// Polling a combinator of this package after it returned ready or after it
// was dropped is a bug in the caller; it panics with a message saying so
// rather than silently returning stale data. [Pending] and [FromFunc] keep no
// state and are the exceptions.
//
// # Wakers of children
//
// [JoinAll] and [TryJoinAll] give each child its own waker: a small value
// holding the child's index and a pointer to a wake set shared with the
// combinator. Waking child i puts i on the set's ready list and wakes the
// waker the combinator was last polled with; the next poll of the combinator
// polls only the children on the list, in the order they were woken. A wake
// of one child out of n therefore costs one child poll, not n.
//
//	child i: Wake() ──► set: ready += i (unless already there) ──► parent waker: Wake()
//	parent:  Poll() ──► set: take ready, remember cx.Waker() ──► poll each i taken
//
// Many wakes of a child between two polls of the combinator cause one poll
// of the child and one wake of the parent. A wake that arrives while the
// child is being polled (a child that yields wakes itself) is kept for the
// combinator's next poll, never served in a loop inside the current one. A
// child that finished is never polled again and its late wakes stop at the
// set; once the combinator itself finished or was dropped, every child wake
// stops there. (A wake already past that check on another goroutine at that
// moment may still deliver one spurious wake to the parent; wakers tolerate
// spurious wakes.) The protocol is described in wakeset.go.
//
// The Context a child is polled with is derived from the parent's with
// [core.Context.WithWaker] into a field of the combinator, so no allocation
// happens per poll. It is re-derived on every poll because the worker running
// a task can differ from one poll to the next.
//
// [Join2], [Select] and [Select2] poll all their live children on every poll
// with the parent's Context: they have few children, and a per-child waker
// would cost more than it saves.
//
// # Cooperative budget
//
// Leaf resources consume the task's budget ([core.Context.Proceed]); the
// combinators here consume none of it, but they respect it:
//
//   - [Select] and [Select2] check the budget on entry, as Tokio's select!
//     does: when it is spent they poll nothing and return pending after the
//     task was woken. Otherwise a loop over a select whose branches are always
//     ready and not budgeted would never yield.
//   - [JoinAll] and [TryJoinAll] check the budget before each child. When it
//     is spent they stop and return pending; the children they did not reach
//     are polled first on the next poll, so one busy child cannot starve its
//     siblings.
//   - [Join2] alternates which child it polls first, for the same reason.
//
// Outside a runtime the budget is unconstrained and these checks never fire.
//
// # Fairness of Select
//
// When several branches are ready at once, the winner is the first one
// polled. [Select] and [Select2] start each poll at a pseudo-random branch
// (Tokio's select! does the same), drawn from a small xorshift generator ([Fair])
// seeded when the select is created, so a select that is rebuilt on every
// loop iteration does not favour its first branch. The seeds come from a
// process-wide counter, so a single-goroutine program creating selects in the
// same order sees the same choices.
//
// # Panics
//
// A child that panics unwinds through its combinator, which is left
// consistent: the panicking child and every other unfinished child are still
// live, and dropping the combinator drops each of them once. [Wait] does so
// before the panic leaves it.
package future
