package timing_test

import (
	"context"
	"errors"
	"math"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/lib/timing"
)

const ms = core.Instant(time.Millisecond)

func TestSleepCompletesAtItsDeadlineAndNotBefore(t *testing.T) {
	h := newHarness(t)
	w := &wakeCount{}
	s := timing.Sleep(100 * time.Millisecond)
	_, ok := poll(h, s, w)
	require.False(t, ok)
	d, known := s.Deadline()
	require.True(t, known)
	assert.Equal(t, 100*ms, d)
	assert.Equal(t, 1, h.timer.Len(), "a pending sleep arms one entry")

	h.advanceTo(100*ms - 1)
	assert.False(t, w.take(), "woken before the deadline")
	_, ok = poll(h, s, w)
	assert.False(t, ok)

	h.advanceTo(100 * ms)
	assert.True(t, w.take(), "the deadline wakes the task")
	_, ok = poll(h, s, w)
	assert.True(t, ok)
	assert.True(t, s.IsElapsed())
	assert.Zero(t, h.timer.Len())
}

func TestSleepDurationCountsFromTheFirstPoll(t *testing.T) {
	h := newHarness(t)
	s := timing.Sleep(time.Second)
	_, known := s.Deadline()
	assert.False(t, known, "a relative sleep has no deadline before its first poll")
	h.clock.Advance(time.Hour)
	run(h, s)
	assert.Equal(t, core.Instant(time.Hour+time.Second), h.clock.Now())
}

func TestSleepOfZeroAndSleepUntilThePastCompleteWithoutArmingATimer(t *testing.T) {
	h := newHarness(t)
	h.clock.Advance(time.Second)
	for _, s := range []*timing.SleepFuture{timing.Sleep(0), timing.Sleep(-time.Hour), timing.SleepUntil(500 * ms), timing.SleepUntil(h.clock.Now())} {
		_, ok := poll(h, s, core.NoopWaker)
		assert.True(t, ok)
	}
	assert.Zero(t, h.timer.Len())
}

func TestSleepUntilCompletesAtTheInstant(t *testing.T) {
	h := newHarness(t)
	run(h, timing.SleepUntil(1234*ms))
	assert.Equal(t, 1234*ms, h.clock.Now())
}

func TestSleepsCompleteInDeadlineOrder(t *testing.T) {
	h := newHarness(t)
	durations := []time.Duration{50, 10, 40, 20, 30, 10}
	fs := make([]core.Future[core.Unit], len(durations))
	for i, d := range durations {
		fs[i] = timing.Sleep(d * time.Millisecond)
	}
	order, at := runAll(h, fs...)
	require.Len(t, order, len(fs))
	for k := 1; k < len(order); k++ {
		assert.LessOrEqual(t, durations[order[k-1]], durations[order[k]], "completion order %v", order)
	}
	for i, d := range durations {
		assert.Equal(t, core.Instant(d*time.Millisecond), at[i], "sleep %d completed at its deadline", i)
	}
}

func TestDroppingAPendingSleepLeavesNoEntryAndNoWake(t *testing.T) {
	h := newHarness(t)
	w := &wakeCount{}
	s := timing.Sleep(time.Second)
	_, ok := poll(h, s, w)
	require.False(t, ok)
	require.Equal(t, 1, h.timer.Len())
	s.Drop()
	assert.Zero(t, h.timer.Len(), "Drop cancels the entry")
	h.advanceTo(core.Instant(time.Hour))
	assert.False(t, w.take(), "a dropped sleep never wakes its task")
	s.Drop() // idempotent
	assert.Panics(t, func() { poll(h, s, w) }, "polling a dropped sleep is a bug")
}

func TestResetMovesAPendingSleepLaterWithoutANewEntry(t *testing.T) {
	h := newHarness(t)
	w := &wakeCount{}
	s := timing.Sleep(100 * time.Millisecond)
	poll(h, s, w)
	s.Reset(300 * ms)
	assert.Equal(t, 1, h.timer.Len())
	h.advanceTo(100 * ms)
	assert.False(t, w.take(), "the old deadline no longer wakes")
	run(h, s)
	assert.Equal(t, 300*ms, h.clock.Now())
}

func TestResetMovesAPendingSleepEarlier(t *testing.T) {
	h := newHarness(t)
	s := timing.Sleep(time.Hour)
	poll(h, s, core.NoopWaker)
	s.Reset(5 * ms)
	run(h, s)
	assert.Equal(t, 5*ms, h.clock.Now())
}

func TestResetRearmsACompletedSleep(t *testing.T) {
	h := newHarness(t)
	s := timing.Sleep(10 * time.Millisecond)
	run(h, s)
	require.True(t, s.IsElapsed())
	s.ResetAfter(15 * time.Millisecond)
	assert.False(t, s.IsElapsed())
	run(h, s)
	assert.Equal(t, 25*ms, h.clock.Now())
}

func TestResetAfterBeforeTheFirstPollCountsFromThatPoll(t *testing.T) {
	h := newHarness(t)
	s := timing.Sleep(time.Hour)
	s.ResetAfter(7 * time.Millisecond)
	h.clock.Advance(time.Second)
	run(h, s)
	assert.Equal(t, core.Instant(time.Second)+7*ms, h.clock.Now())
}

func TestResetToTheEndOfTimeDisarms(t *testing.T) {
	h := newHarness(t)
	s := timing.Sleep(time.Second)
	poll(h, s, core.NoopWaker)
	s.Reset(math.MaxInt64)
	assert.Zero(t, h.timer.Len(), "a sleep that never ends holds no entry")
	_, ok := poll(h, s, core.NoopWaker)
	assert.False(t, ok)
}

func TestAnEndlessSleepHoldsNoEntry(t *testing.T) {
	h := newHarness(t)
	s := timing.Sleep(math.MaxInt64)
	h.clock.Advance(time.Second)
	_, ok := poll(h, s, core.NoopWaker)
	assert.False(t, ok)
	assert.Zero(t, h.timer.Len())
}

func TestSleepConsumesBudget(t *testing.T) {
	h := newHarness(t)
	s := timing.Sleep(time.Second)
	cx := h.base.WithWaker(core.NoopWaker)
	// Spend the whole budget, as a busy task would.
	h.wbase.ResetBudget()
	for cx.Proceed() {
	}
	_, ok := s.Poll(&cx)
	assert.False(t, ok)
	assert.Zero(t, h.timer.Len(), "with no budget the sleep does nothing this poll")
}

// pendingFuture never completes and records whether it was dropped.
type pendingFuture struct {
	polls   int
	dropped int
	readyAt int // complete on this poll (0: never)
	spend   bool
}

func (p *pendingFuture) Poll(cx *core.Context) (int, bool) {
	p.polls++
	if p.spend {
		for cx.Proceed() {
		}
	}
	if p.readyAt > 0 && p.polls >= p.readyAt {
		return 42, true
	}
	return 0, false
}

func (p *pendingFuture) Drop() { p.dropped++ }

func TestTimeoutReturnsTheValueAndCancelsItsTimer(t *testing.T) {
	h := newHarness(t)
	inner := &pendingFuture{readyAt: 2}
	to := timing.Timeout[int](inner, time.Second)
	w := &wakeCount{}
	_, ok := poll(h, to, w)
	require.False(t, ok)
	require.Equal(t, 1, h.timer.Len())
	r, ok := poll(h, to, w)
	require.True(t, ok)
	assert.Equal(t, 42, r.Value)
	assert.NoError(t, r.Err)
	assert.Zero(t, h.timer.Len(), "success cancels the deadline")
	assert.Zero(t, inner.dropped, "a completed future is not dropped")
}

func TestTimeoutDropsTheInnerFutureOnExpiry(t *testing.T) {
	h := newHarness(t)
	inner := &pendingFuture{}
	r := run(h, timing.Timeout[int](inner, 250*time.Millisecond))
	assert.Equal(t, 250*ms, h.clock.Now())
	require.ErrorIs(t, r.Err, timing.ErrElapsed)
	assert.ErrorIs(t, r.Err, context.DeadlineExceeded)
	assert.ErrorIs(t, r.Err, os.ErrDeadlineExceeded)
	var te interface{ Timeout() bool }
	require.True(t, errors.As(r.Err, &te))
	assert.True(t, te.Timeout())
	assert.Equal(t, 1, inner.dropped, "the abandoned inner future is dropped once")
	assert.Zero(t, h.timer.Len())
}

func TestTimeoutPollsTheInnerFutureFirst(t *testing.T) {
	h := newHarness(t)
	inner := &pendingFuture{readyAt: 2}
	to := timing.TimeoutAt[int](inner, 10*ms)
	poll(h, to, core.NoopWaker)
	h.advanceTo(core.Instant(time.Hour))
	r, ok := poll(h, to, core.NoopWaker)
	require.True(t, ok)
	assert.NoError(t, r.Err, "a future ready at the same poll wins over its deadline")
	assert.Equal(t, 42, r.Value)
}

func TestTimeoutExpiresEvenWhenTheInnerFutureSpendsTheBudget(t *testing.T) {
	h := newHarness(t)
	inner := &pendingFuture{spend: true}
	to := timing.Timeout[int](inner, time.Second)
	_, ok := poll(h, to, core.NoopWaker)
	require.False(t, ok)
	require.Equal(t, 1, h.timer.Len(), "the deadline is armed although the budget is spent")
	// A task that always spends its budget is always runnable, so the
	// clock is moved by hand here rather than by auto-advance.
	h.advanceTo(core.Instant(time.Second))
	r, ok := poll(h, to, core.NoopWaker)
	require.True(t, ok)
	assert.ErrorIs(t, r.Err, timing.ErrElapsed)
	assert.Equal(t, 1, inner.dropped)
}

func TestDroppingATimeoutDropsTheInnerFutureAndCancelsTheTimer(t *testing.T) {
	h := newHarness(t)
	inner := &pendingFuture{}
	to := timing.Timeout[int](inner, time.Second)
	poll(h, to, core.NoopWaker)
	to.Drop()
	to.Drop()
	assert.Equal(t, 1, inner.dropped)
	assert.Zero(t, h.timer.Len())
}

func TestTimeoutResetMovesTheDeadline(t *testing.T) {
	h := newHarness(t)
	to := timing.Timeout[int](&pendingFuture{}, time.Second)
	poll(h, to, core.NoopWaker)
	to.Reset(3 * ms)
	d, _ := to.Deadline()
	assert.Equal(t, 3*ms, d)
	r := run(h, to)
	assert.ErrorIs(t, r.Err, timing.ErrElapsed)
	assert.Equal(t, 3*ms, h.clock.Now())
}

// ticks polls iv until it has produced n ticks, sleeping (auto-advancing)
// between them, and returns the scheduled instants and the instants at
// which each was observed.
func ticks(h *harness, iv *timing.Interval, n int) (sched, seen []core.Instant) {
	for range n {
		at := run(h, iv.Tick())
		sched = append(sched, at)
		seen = append(seen, h.clock.Now())
	}
	return sched, seen
}

func TestIntervalTicksImmediatelyThenEveryPeriod(t *testing.T) {
	h := newHarness(t)
	h.clock.Advance(7 * time.Millisecond)
	iv := timing.NewInterval(100 * time.Millisecond)
	sched, seen := ticks(h, iv, 4)
	want := []core.Instant{7 * ms, 107 * ms, 207 * ms, 307 * ms}
	assert.Equal(t, want, sched)
	assert.Equal(t, want, seen)
}

func TestIntervalAtStartsAtTheGivenInstant(t *testing.T) {
	h := newHarness(t)
	iv := timing.NewIntervalAt(1000*ms, 250*time.Millisecond)
	sched, _ := ticks(h, iv, 3)
	assert.Equal(t, []core.Instant{1000 * ms, 1250 * ms, 1500 * ms}, sched)
}

// lateInterval ticks once at 0, then lets the task be busy until 350 ms,
// then collects four more ticks. The period is 100 ms.
func lateInterval(t *testing.T, b timing.MissedTickBehavior) (sched, seen []core.Instant) {
	h := newHarness(t)
	iv := timing.NewInterval(100 * time.Millisecond)
	iv.SetMissedTickBehavior(b)
	assert.Equal(t, b, iv.MissedTickBehavior())
	first, _ := ticks(h, iv, 1)
	require.Equal(t, []core.Instant{0}, first)
	h.clock.Advance(350 * time.Millisecond) // the task was busy
	return ticks(h, iv, 4)
}

func TestIntervalBurstDeliversMissedTicksAtOnce(t *testing.T) {
	sched, seen := lateInterval(t, timing.Burst)
	assert.Equal(t, []core.Instant{100 * ms, 200 * ms, 300 * ms, 400 * ms}, sched)
	assert.Equal(t, []core.Instant{350 * ms, 350 * ms, 350 * ms, 400 * ms}, seen,
		"the three missed ticks come at once, then the schedule resumes")
}

func TestIntervalDelayRestartsThePeriodFromTheLateTick(t *testing.T) {
	sched, seen := lateInterval(t, timing.Delay)
	assert.Equal(t, []core.Instant{100 * ms, 450 * ms, 550 * ms, 650 * ms}, sched)
	assert.Equal(t, []core.Instant{350 * ms, 450 * ms, 550 * ms, 650 * ms}, seen)
}

func TestIntervalSkipDropsMissedTicksAndKeepsToTheGrid(t *testing.T) {
	sched, seen := lateInterval(t, timing.Skip)
	assert.Equal(t, []core.Instant{100 * ms, 400 * ms, 500 * ms, 600 * ms}, sched)
	assert.Equal(t, []core.Instant{350 * ms, 400 * ms, 500 * ms, 600 * ms}, seen)
}

func TestIntervalTicksLessThanTheThresholdLateKeepTheSchedule(t *testing.T) {
	for _, b := range []timing.MissedTickBehavior{timing.Burst, timing.Delay, timing.Skip} {
		h := newHarness(t)
		iv := timing.NewInterval(100 * time.Millisecond)
		iv.SetMissedTickBehavior(b)
		ticks(h, iv, 1)
		h.clock.Advance(100*time.Millisecond + timing.MissedTickThreshold)
		sched, _ := ticks(h, iv, 2)
		assert.Equal(t, []core.Instant{100 * ms, 200 * ms}, sched, "%v", b)
	}
}

func TestIntervalResetRestartsThePeriodFromNow(t *testing.T) {
	h := newHarness(t)
	iv := timing.NewInterval(100 * time.Millisecond)
	ticks(h, iv, 1)
	h.clock.Advance(30 * time.Millisecond)
	iv.Reset()
	sched, _ := ticks(h, iv, 2)
	assert.Equal(t, []core.Instant{130 * ms, 230 * ms}, sched)
	iv.ResetAt(1000 * ms)
	sched, _ = ticks(h, iv, 1)
	assert.Equal(t, []core.Instant{1000 * ms}, sched)
}

func TestDroppingAnIntervalCancelsItsTimer(t *testing.T) {
	h := newHarness(t)
	iv := timing.NewInterval(time.Second)
	ticks(h, iv, 1)
	poll(h, iv.Tick(), core.NoopWaker)
	require.Equal(t, 1, h.timer.Len())
	iv.Drop()
	assert.Zero(t, h.timer.Len())
}

func TestIntervalRejectsANonPositivePeriod(t *testing.T) {
	assert.PanicsWithValue(t, "weft/timing: interval period must be positive, got 0s", func() { timing.NewInterval(0) })
	assert.Panics(t, func() { timing.NewIntervalAt(0, -time.Second) })
}

func TestMissedTickBehaviorsHaveNames(t *testing.T) {
	assert.Equal(t, "burst", timing.Burst.String())
	assert.Equal(t, "delay", timing.Delay.String())
	assert.Equal(t, "skip", timing.Skip.String())
	assert.Equal(t, "MissedTickBehavior(9)", timing.MissedTickBehavior(9).String())
}

func TestNowReadsTheRuntimeClock(t *testing.T) {
	h := newHarness(t)
	h.clock.Advance(42 * time.Second)
	cx := h.base.WithWaker(core.NoopWaker)
	assert.Equal(t, core.Instant(42*time.Second), timing.Now(&cx))
}

func TestNowWorksWithTimersDisabled(t *testing.T) {
	clock := core.NewVirtualClock()
	clock.Advance(time.Second)
	cx := spi.NewWorkerContext(&testWorker{time: &core.Time{Clock: clock}}).Context()
	assert.Equal(t, core.Instant(time.Second), timing.Now(cx))
}

func TestSleepOutsideARuntimePanicsNamingTheProblem(t *testing.T) {
	cx := core.NewContext(nil)
	assert.PanicsWithValue(t,
		"weft/timing: Sleep polled outside a runtime: the Context has no worker, so there is no clock or timer to use",
		func() { timing.Sleep(time.Second).Poll(cx) })
	assert.Panics(t, func() { timing.Now(cx) })
}

func TestSleepWithTimersDisabledPanicsNamingTheProblem(t *testing.T) {
	for name, tm := range map[string]*core.Time{
		"nil Time":  nil,
		"nil Timer": {Clock: core.NewVirtualClock()},
	} {
		wcx := spi.NewWorkerContext(&testWorker{time: tm})
		wcx.ResetBudget()
		cx := wcx.Context()
		defer func() {
			r := recover()
			require.NotNil(t, r, name)
			assert.Contains(t, r, "weft/timing: Sleep: the runtime has no", name)
		}()
		timing.Sleep(time.Second).Poll(cx)
	}
}

// TestHoursOfVirtualTimePassInAnInstant runs ten hours of a one-second
// interval and a thousand sleeps of up to ten hours on the auto-advancing
// virtual clock. It asserts only virtual time; the wall time is logged.
func TestHoursOfVirtualTimePassInAnInstant(t *testing.T) {
	h := newHarness(t)
	start := time.Now()
	iv := timing.NewInterval(time.Second)
	fs := make([]core.Future[core.Unit], 0, 1001)
	for i := range 1000 {
		fs = append(fs, timing.Sleep(time.Duration(i*7919%36000+1)*time.Second))
	}
	ticksSeen := 0
	fs = append(fs, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		for {
			if _, ok := iv.PollTick(cx); !ok {
				return core.Unit{}, false
			}
			if ticksSeen++; ticksSeen == 36001 {
				return core.Unit{}, true
			}
		}
	}))
	_, at := runAll(h, fs...)
	assert.Equal(t, core.Instant(10*time.Hour), h.clock.Now())
	assert.Equal(t, core.Instant(10*time.Hour), at[1000], "the interval's 36001st tick is at ten hours")
	t.Logf("10 h of virtual time, 36,001 ticks and 1,000 sleeps took %v of wall time", time.Since(start))
}
