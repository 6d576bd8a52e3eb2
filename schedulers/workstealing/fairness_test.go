package workstealing_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// spinsBeforeGlobalTaskRuns runs, on one worker, two tasks that wake
// themselves on every poll (so the worker's run queue is never empty),
// then puts a task in the global queue and counts how many spinner polls
// happen before it runs. The spinners give up after a bound, so a
// scheduler that never looks at the global queue fails instead of hanging.
func spinsBeforeGlobalTaskRuns(t *testing.T, tweak ...func(*workstealing.Config)) int64 {
	const bound = 10_000
	r, _ := newRuntime(t, 1, tweak...)
	var polls, at, ranAfter atomic.Int64
	ranAfter.Store(-1)
	var stop atomic.Bool
	spinner := core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if stop.Load() || polls.Add(1) > bound {
			return core.Unit{}, true
		}
		cx.Waker().Wake()
		return core.Unit{}, false
	})
	global := core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
		ranAfter.Store(polls.Load() - at.Load())
		stop.Store(true)
		return core.Unit{}, true
	})
	var h *core.JoinHandle[core.Unit]
	started := false
	blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if !started {
			started = true
			core.Spawn(cx, core.Future[core.Unit](spinner))
			core.Spawn(cx, core.Future[core.Unit](spinner))
			at.Store(polls.Load())
			// Through the runtime handle: the global queue.
			h = rt.Spawn(r.Handle(), core.Future[core.Unit](global))
		}
		res, ok := h.Poll(cx)
		if ok {
			require.NoError(t, res.Err)
		}
		return core.Unit{}, ok
	}))
	require.NotEqual(t, int64(-1), ranAfter.Load())
	return ranAfter.Load()
}

func TestAGlobalTaskRunsWithinTheFixedIntervalWhileLocalWorkKeepsComing(t *testing.T) {
	const interval = 8
	n := spinsBeforeGlobalTaskRuns(t, func(c *workstealing.Config) { c.GlobalQueueInterval = interval })
	assert.LessOrEqual(t, n, int64(interval), "spinner polls before the global task ran")
	t.Logf("the global task ran after %d spinner polls", n)
}

func TestAGlobalTaskRunsWithinTheLongestTunedIntervalWhileLocalWorkKeepsComing(t *testing.T) {
	n := spinsBeforeGlobalTaskRuns(t)
	assert.LessOrEqual(t, n, int64(127), "spinner polls before the global task ran")
	t.Logf("the global task ran after %d spinner polls", n)
}
