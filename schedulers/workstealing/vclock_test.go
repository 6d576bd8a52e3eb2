package workstealing_test

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// TestTimingRuntimeConformance runs the time API's end-to-end suite
// (virtual, auto-advancing clock) on 1, 2 and 4 workers: sleeps wake in
// deadline order at their deadlines, which needs the clock to move only
// when every worker is idle.
func TestTimingRuntimeConformance(t *testing.T) {
	for _, n := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("workers=%d", n), func(t *testing.T) {
			conformance.TimingRuntime(t, func(b *rt.Builder) {
				b.Timer(testTimerName).Scheduler(workstealing.Name).Workers(n)
			})
		})
	}
}

// timedRuntime builds a runtime with the test timer and the given clock.
func timedRuntime(t *testing.T, clock string, n int) *rt.Runtime {
	t.Helper()
	r, err := rt.NewBuilder().IgnoreEnv().Clock(clock).Timer(testTimerName).
		Scheduler(workstealing.Name).Workers(n).Build()
	require.NoError(t, err)
	t.Cleanup(r.ShutdownBackground)
	return r
}

// sleeper sleeps d and then records the instant it woke.
func sleeper(d time.Duration, woke *atomic.Int64) core.Future[core.Unit] {
	s := timing.Sleep(d)
	return core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if _, ok := s.Poll(cx); !ok {
			return core.Unit{}, false
		}
		woke.Store(int64(timing.Now(cx)))
		return core.Unit{}, true
	})
}

func TestTheVirtualClockDoesNotAdvanceWhileATaskIsRunnable(t *testing.T) {
	r := timedRuntime(t, "virtual", 2)
	var woke atomic.Int64
	var moved atomic.Int64
	const busyPolls = 200
	polls := 0
	// busy yields busyPolls times; during and between its polls the clock
	// must stand still although another task sleeps and the other
	// worker is idle.
	busy := core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		start := timing.Now(cx)
		for i := 0; i < 50; i++ {
			runtime.Gosched()
		}
		if timing.Now(cx) != start {
			moved.Add(1)
		}
		if polls++; polls == busyPolls {
			return core.Unit{}, true
		}
		cx.Waker().Wake()
		return core.Unit{}, false
	})
	var hs [2]*core.JoinHandle[core.Unit]
	blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if hs[0] == nil {
			hs[0] = core.Spawn(cx, sleeper(10*time.Second, &woke))
			hs[1] = core.Spawn(cx, core.Future[core.Unit](busy))
		}
		for _, h := range hs {
			if _, ok := h.Poll(cx); !ok {
				return core.Unit{}, false
			}
		}
		return core.Unit{}, true
	}))
	assert.Zero(t, moved.Load(), "the clock moved while a task was runnable")
	assert.Equal(t, int64(10*time.Second), woke.Load(), "the sleeper woke at its deadline")
}

func TestTheVirtualClockDoesNotAdvanceWhileATaskIsBlockedInPlace(t *testing.T) {
	r := timedRuntime(t, "virtual", 1)
	var woke atomic.Int64
	var moved atomic.Bool
	var hs [2]*core.JoinHandle[core.Unit]
	blocker := core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		start := timing.Now(cx)
		workstealing.BlockInPlace(cx, func() {
			// The worker's core went to another goroutine, which has
			// nothing to do but sleep: it must not jump the clock.
			for i := 0; i < 2000; i++ {
				runtime.Gosched()
			}
		})
		moved.Store(timing.Now(cx) != start)
		return core.Unit{}, true
	})
	blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if hs[0] == nil {
			hs[0] = core.Spawn(cx, sleeper(time.Minute, &woke))
			hs[1] = core.Spawn(cx, core.Future[core.Unit](blocker))
		}
		for _, h := range hs {
			if _, ok := h.Poll(cx); !ok {
				return core.Unit{}, false
			}
		}
		return core.Unit{}, true
	}))
	assert.False(t, moved.Load(), "the clock moved while a task was blocked in place")
	assert.Equal(t, int64(time.Minute), woke.Load())
}

// TestATimerArmedWhileAnotherWorkerSleepsInTheDriverSlotFires: with a
// real clock and no timer armed, the worker that sleeps in the driver
// slot sleeps without a deadline. A task on another worker then arms a
// short sleep; when that worker goes to sleep it must tell the first one,
// or the sleep would never end.
func TestATimerArmedWhileAnotherWorkerSleepsInTheDriverSlotFires(t *testing.T) {
	r := timedRuntime(t, "real", 2)
	for i := 0; i < 20; i++ {
		var woke atomic.Int64
		blockOn(t, r, sleeper(time.Millisecond, &woke))
		require.NotZero(t, woke.Load())
	}
}
