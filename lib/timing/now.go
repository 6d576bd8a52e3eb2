package timing

import (
	"math"
	"time"

	"github.com/weftrt/weft/core"
)

// Now returns the current instant of the runtime's clock. It panics when
// cx is not a runtime worker's Context or the runtime has no clock.
func Now(cx *core.Context) core.Instant {
	return runtimeTime(cx, "Now", false).Clock.Now()
}

// runtimeTime returns the runtime's clock and timers for an operation of
// this package, panicking with a message that names the missing piece.
func runtimeTime(cx *core.Context, op string, needTimer bool) *core.Time {
	w := cx.Worker()
	if w == nil {
		panic("weft/timing: " + op + " polled outside a runtime: the Context has no worker, so there is no clock or timer to use")
	}
	t := w.Time()
	if t == nil || t.Clock == nil {
		panic("weft/timing: " + op + ": the runtime has no clock (time is disabled in its composition)")
	}
	if needTimer && t.Timer == nil {
		panic("weft/timing: " + op + ": the runtime has no timer (timer.kind is \"none\" in its composition); compose it with a timer such as \"wheel\" or \"heap\"")
	}
	return t
}

// deadlineAfter returns now+d, saturating at the largest Instant, which
// means "never".
func deadlineAfter(now core.Instant, d time.Duration) core.Instant {
	if d > 0 && now > core.Instant(math.MaxInt64-int64(d)) {
		return never
	}
	return now.Add(d)
}

// never is the deadline of a sleep that does not end: it is not armed.
const never = core.Instant(math.MaxInt64)
