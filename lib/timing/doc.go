// Package timing is weft's time API for tasks: sleeps, timeouts, intervals
// and the runtime's clock. It works with any timer module (wheel, heap)
// and any scheduler, because it reaches both only through the runtime's
// [core.Time], which a task gets from its Context:
//
//	cx.Worker().Time()   // the runtime's clock and timer
//
// A future of this package polled outside a runtime (nil worker), or in a
// runtime composed with timer.kind "none", panics with a message saying
// which; [Now] needs only the clock and works whenever there is a worker.
//
// # Sleeps
//
// [Sleep] and [SleepUntil] return a [*SleepFuture]. Go has no ambient
// runtime (no thread-local handle), so a relative sleep learns the clock at
// its first poll and its duration counts from there; code that needs a
// precise start computes the deadline with [Now] and uses SleepUntil. The
// future embeds its [core.TimerEntry], so arming it allocates nothing in the
// timer, and [SleepFuture.Reset] moves it (or re-arms a completed one)
// without a new future. A deadline that has passed at the first poll
// completes at once without touching the timer.
//
// # Cancellation
//
// SleepFuture, TimeoutFuture and Interval implement [core.Dropper]. Drop
// cancels the armed entry, so an abandoned sleep leaves nothing in the
// timer and its task is not woken on its behalf (except by a wake that a
// concurrent Fire had already taken, which a task treats as spurious).
// Combinators in weft call Drop on what they abandon; code that abandons a
// sleep by hand calls Drop itself.
//
// # Timeouts
//
// [Timeout] polls its inner future first and the deadline second, as Tokio
// does: a future that completes without waiting completes even past its
// deadline. On expiry the inner future is dropped and the result carries
// [ErrElapsed]; on success the sleep is cancelled. The deadline is polled
// without consuming the task's budget, so an inner future that spends the
// whole budget on every poll can still time out.
//
// # Intervals
//
// An [Interval] ticks at start, start+period, start+2*period, ... Each tick
// reports the instant it was scheduled for. When the task polls late by
// more than [MissedTickThreshold], the [MissedTickBehavior] decides what
// comes next; with a period of 100 and a task that next polls at 350:
//
//	Burst (default)  ticks 100, 200, 300 at once, then 400, 500, ...
//	Delay            tick 100 at 350, then 450, 550, ...   (period from now)
//	Skip             tick 100 at 350, then 400, 500, ...   (stay on the grid)
package timing
