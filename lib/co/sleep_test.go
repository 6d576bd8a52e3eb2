package co_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/tasks"
	"github.com/weftrt/weft/lib/timing"
)

func TestSleepSuspendsTheBodyForTheDurationOnTheRuntimesClock(t *testing.T) {
	r, clock := newTimedRuntime(t)
	slept, err := run(t, r, func(c *co.Ctx) time.Duration {
		start := clock.Now()
		co.Sleep(c, time.Hour)
		return clock.Now().Sub(start)
	})
	require.NoError(t, err)
	assert.Equal(t, time.Hour, slept, "the virtual clock jumped exactly to the deadline")
}

func TestSleepUntilWaitsForTheInstantAndAPassedOneReturnsAtOnce(t *testing.T) {
	r, clock := newTimedRuntime(t)
	_, err := run(t, r, func(c *co.Ctx) int {
		deadline := timing.Now(c.Context()).Add(time.Minute)
		co.SleepUntil(c, deadline)
		assert.Equal(t, deadline, clock.Now())
		co.SleepUntil(c, deadline-1) // passed
		co.Sleep(c, 0)
		co.Sleep(c, -time.Second)
		assert.Equal(t, deadline, clock.Now(), "no sleep of the past moved the clock")
		return 0
	})
	require.NoError(t, err)
}

func TestAbortingASleepingTaskCancelsItsTimerEntry(t *testing.T) {
	r, _ := newTimedRuntime(t)
	var entries int
	left, err := run(t, r, func(c *co.Ctx) int {
		g := &gate{}
		h := co.Go(c, func(c *co.Ctx) int {
			co.Go(c, func(*co.Ctx) int { g.Open(); return 0 })
			co.Sleep(c, time.Hour)
			return 1
		})
		co.Await(c, core.Future[core.Unit](g)) // the sleeper is armed and suspended
		entries = c.Context().Worker().Time().Timer.Len()
		h.Abort()
		_, err := co.AwaitResult(c, h)
		assert.True(t, core.IsCancelled(err))
		return c.Context().Worker().Time().Timer.Len()
	})
	require.NoError(t, err)
	assert.Equal(t, 1, entries, "the sleep was armed")
	assert.Zero(t, left, "the abort cancelled the entry")
}

func TestASleepCaseLosesToAReadyBranchAndLeavesNoTimerEntry(t *testing.T) {
	r, _ := newTimedRuntime(t)
	left, err := run(t, r, func(c *co.Ctx) int {
		g := &gate{}
		co.Go(c, func(c *co.Ctx) int { c.Yield(); g.Open(); return 0 })
		if co.Select(c, co.Case(timing.Sleep(time.Hour), nil), co.Case(g, nil)) != 1 {
			panic("the sleep won")
		}
		return c.Context().Worker().Time().Timer.Len()
	})
	require.NoError(t, err)
	assert.Zero(t, left, "the dropped sleep cancelled its entry")
}

func TestAKeptTickerFiresOnceAndIsResetAcrossASelectLoop(t *testing.T) {
	r, clock := newTimedRuntime(t)
	ticks, err := run(t, r, func(c *co.Ctx) []core.Instant {
		tick := timing.Sleep(time.Second)
		defer core.Drop(tick)
		stop := timing.Sleep(5*time.Second + time.Millisecond)
		defer core.Drop(stop)
		var at []core.Instant
		for {
			switch co.Select(c, co.Keep(tick, nil), co.Keep(stop, nil)) {
			case 0:
				at = append(at, clock.Now())
				tick.ResetAfter(time.Second)
			case 1:
				return at
			}
		}
	})
	require.NoError(t, err)
	require.Len(t, ticks, 5)
	for i, at := range ticks {
		assert.Equal(t, core.Instant(0).Add(time.Duration(i+1)*time.Second), at)
	}
}

func TestWaitContextReturnsTheContextsErrorOnceItIsCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	got, err := run(t, newRuntime(t), func(c *co.Ctx) error {
		co.Go(c, func(c *co.Ctx) int { c.Yield(); cancel(); return 0 })
		return co.WaitContext(c, ctx)
	})
	require.NoError(t, err)
	assert.ErrorIs(t, got, context.Canceled)
	already, err := run(t, newRuntime(t), func(c *co.Ctx) error { return co.WaitContext(c, ctx) })
	require.NoError(t, err)
	assert.ErrorIs(t, already, context.Canceled, "a done context returns at once")
}

func TestADoneBranchWinsWhenItsContextIsDone(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	errBye := errors.New("bye")
	g := &gate{}
	idx, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		co.Go(c, func(c *co.Ctx) int { c.Yield(); cancel(errBye); return 0 })
		return co.Select(c, co.Case(g, nil), co.Done(ctx))
	})
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	assert.Same(t, errBye, context.Cause(ctx))
	assert.Equal(t, 1, g.Drops())
}

func TestAKeptContextDoneFutureRegistersOnceAndDropRemovesTheRegistration(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := co.ContextDone(ctx)
	n, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		wins := 0
		for range 100 {
			if co.Select(c, co.Keep(done, nil), co.Case(&counted{readyAt: 2}, nil)) == 1 {
				wins++
			}
			if !done.Registered() {
				panic("the kept future lost its registration")
			}
		}
		return wins
	})
	require.NoError(t, err)
	assert.Equal(t, 100, n)
	core.Drop(done)
	assert.False(t, done.Registered(), "Drop removed the AfterFunc registration")
	cancel() // nothing is woken: no task is left to wake
}

func TestAContextThatCannotBeDoneNeverRegisters(t *testing.T) {
	done := co.ContextDone(context.Background())
	idx, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		return co.Select(c, co.Keep(done, nil), co.Case(&counted{readyAt: 3}, nil))
	})
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	assert.False(t, done.Registered())
}

func TestWaitCancelledAndACancelledBranchFollowTheToken(t *testing.T) {
	tok := tasks.NewCancellationToken()
	g := &gate{}
	idx, err := run(t, newRuntime(t), func(c *co.Ctx) int {
		co.Go(c, func(c *co.Ctx) int { c.Yield(); tok.Cancel(); return 0 })
		co.WaitCancelled(c, tok)
		return co.Select(c, co.Case(g, nil), co.Cancelled(tok))
	})
	require.NoError(t, err)
	assert.Equal(t, 1, idx)
	assert.Equal(t, 1, g.Drops())
}

func TestADoneFuturePolledByAnotherTaskWakesThatTask(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := co.ContextDone(ctx)
	got, err := run(t, newRuntime(t), func(c *co.Ctx) error {
		// This task registers first, then hands the future to another.
		if co.Select(c, co.Keep(done, nil), co.Case(&counted{readyAt: 2}, nil)) != 1 {
			panic("the context is not done yet")
		}
		h := co.Go(c, func(c *co.Ctx) error { return co.Await(c, done) })
		co.Go(c, func(c *co.Ctx) int { c.Yield(); c.Yield(); cancel(); return 0 })
		e, _ := co.AwaitResult(c, h)
		return e
	})
	require.NoError(t, err)
	assert.ErrorIs(t, got, context.Canceled)
	assert.False(t, done.Registered())
}
