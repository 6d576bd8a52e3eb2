package timing

import (
	"fmt"
	"time"

	"github.com/weftrt/weft/core"
)

// MissedTickBehavior says what an [Interval] does after a tick that its
// task polled more than [MissedTickThreshold] late. The zero value is Burst.
type MissedTickBehavior uint8

const (
	// Burst keeps the original schedule: the ticks that were missed are
	// delivered one after another without waiting, until the interval has
	// caught up. Use it when every tick must be counted.
	Burst MissedTickBehavior = iota
	// Delay restarts the schedule from the late tick: the next tick comes
	// one period after the task observed the late one.
	Delay
	// Skip drops the missed ticks and keeps to the original grid: the next
	// tick is the first instant of the schedule after now.
	Skip
)

// MissedTickThreshold is how late a tick may be observed and still count as
// on time. Timers round deadlines (the wheel to a millisecond) and a busy
// worker polls a woken task a little later; a tick this close to its
// schedule does not make the interval change course.
const MissedTickThreshold = 5 * time.Millisecond

// String returns the behaviour's name.
func (b MissedTickBehavior) String() string {
	switch b {
	case Burst:
		return "burst"
	case Delay:
		return "delay"
	case Skip:
		return "skip"
	}
	return fmt.Sprintf("MissedTickBehavior(%d)", uint8(b))
}

// next returns the instant of the tick after one scheduled for at, observed
// at now, which is past the threshold.
func (b MissedTickBehavior) next(at, now core.Instant, period time.Duration) core.Instant {
	switch b {
	case Delay:
		return deadlineAfter(now, period)
	case Skip:
		late := now.Sub(at)
		return deadlineAfter(now, period-late%period)
	}
	return deadlineAfter(at, period)
}

// Interval yields ticks at a fixed period. Create one with [NewInterval]
// or [NewIntervalAt]; poll it with [Interval.PollTick] or await
// [Interval.Tick]. One task owns it. It implements [core.Dropper]: Drop
// cancels its timer.
type Interval struct {
	sleep    SleepFuture
	period   time.Duration
	behavior MissedTickBehavior
	tick     tickFuture
}

// NewInterval returns an interval whose first tick completes at its first
// poll and whose later ticks follow every period. It panics if period is
// not positive.
func NewInterval(period time.Duration) *Interval {
	iv := newInterval(period)
	iv.sleep.state = sleepRelative
	return iv
}

// NewIntervalAt returns an interval whose first tick is at start. It panics
// if period is not positive.
func NewIntervalAt(start core.Instant, period time.Duration) *Interval {
	iv := newInterval(period)
	iv.sleep.state = sleepAbsolute
	iv.sleep.entry.Deadline = start
	return iv
}

func newInterval(period time.Duration) *Interval {
	if period <= 0 {
		panic(fmt.Sprintf("weft/timing: interval period must be positive, got %v", period))
	}
	iv := &Interval{period: period}
	iv.tick.iv = iv
	return iv
}

// Period returns the interval's period.
func (iv *Interval) Period() time.Duration { return iv.period }

// MissedTickBehavior returns what the interval does after a late tick.
func (iv *Interval) MissedTickBehavior() MissedTickBehavior { return iv.behavior }

// SetMissedTickBehavior sets what the interval does after a late tick.
func (iv *Interval) SetMissedTickBehavior(b MissedTickBehavior) { iv.behavior = b }

// PollTick polls for the next tick. It returns the instant the tick was
// scheduled for once it has come, and arranges a wake otherwise. Each call
// consumes one unit of the task's budget.
func (iv *Interval) PollTick(cx *core.Context) (core.Instant, bool) {
	if !cx.Proceed() {
		return 0, false
	}
	if _, ok := iv.sleep.poll(cx); !ok {
		return 0, false
	}
	at := iv.sleep.entry.Deadline
	now := iv.sleep.time.Clock.Now()
	next := deadlineAfter(at, iv.period)
	if now.Sub(at) > MissedTickThreshold {
		next = iv.behavior.next(at, now, iv.period)
	}
	iv.sleep.Reset(next)
	return at, true
}

// Tick returns a future of the next tick's scheduled instant. The interval
// keeps one such future and returns it each time, so awaiting ticks in a
// loop allocates nothing; await one tick at a time.
func (iv *Interval) Tick() core.Future[core.Instant] { return &iv.tick }

// Reset restarts the schedule: the next tick comes one period from now
// (from the first poll, for an interval never polled).
func (iv *Interval) Reset() { iv.sleep.ResetAfter(iv.period) }

// ResetAt restarts the schedule with the next tick at the given instant.
func (iv *Interval) ResetAt(at core.Instant) { iv.sleep.Reset(at) }

// Drop implements [core.Dropper]: it cancels the interval's timer. The
// interval must not be polled afterwards.
func (iv *Interval) Drop() { iv.sleep.Drop() }

// tickFuture is the future Tick returns: one tick of its interval.
type tickFuture struct{ iv *Interval }

// Poll implements [core.Future] by polling the interval for a tick.
func (f *tickFuture) Poll(cx *core.Context) (core.Instant, bool) { return f.iv.PollTick(cx) }
