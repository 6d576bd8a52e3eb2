package conformance

import (
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/runtime/rt"
)

// TimingRuntime runs the time API (package timing) end to end on runtimes
// with a virtual, auto-advancing clock. configure selects the timer and the
// scheduler under test, e.g.
//
//	conformance.TimingRuntime(t, func(b *rt.Builder) { b.Timer("wheel").Scheduler("currentthread") })
//
// It checks sleep ordering, timeouts, every missed-tick behaviour of an
// interval, cleanup of dropped and aborted sleeps, and that hours of
// virtual time pass without waiting for them. Every verdict is in virtual
// time; a hang fails the behaviour after a generous real-time limit.
func TimingRuntime(t *testing.T, configure func(*rt.Builder)) {
	for _, b := range timingRuntimeSuite {
		t.Run(b.name, func(t *testing.T) {
			b.run(t, newTimingRuntime(t, configure))
		})
	}
	t.Run("AnEarlierTimerArmedFromAnotherGoroutineCutsAParkShort", func(t *testing.T) {
		testTimingEarlierTimerUnparks(t, configure)
	})
}

// testTimingEarlierTimerUnparks runs on the real clock: the runtime parks
// until an hour-long sleep, then another goroutine arms an entry due in a
// few milliseconds. The park must be cut short for the entry to fire; if it
// is not, the watchdog fails the behaviour long before the hour.
func testTimingEarlierTimerUnparks(t *testing.T, configure func(*rt.Builder)) {
	b := rt.NewBuilder().IgnoreEnv()
	configure(b)
	r, err := b.Clock("real").Build()
	require.NoError(t, err)
	t.Cleanup(r.ShutdownBackground)
	var entry core.TimerEntry
	armed := make(chan core.Waker, 1)
	var long *timing.SleepFuture
	go func() {
		w := <-armed
		entry.Waker.Register(w)
		entry.Deadline = r.Time().Clock.Now().Add(5 * time.Millisecond)
		r.Time().Insert(&entry)
	}()
	timerBlockOn(t, r, timerFn(func(cx *core.Context) (int, bool) {
		if long == nil {
			long = timing.Sleep(time.Hour)
			if _, ok := long.Poll(cx); ok {
				t.Fatal("an hour passed at once")
			}
			armed <- cx.Waker()
			return 0, false
		}
		if entry.Fired() {
			long.Drop()
			return 1, true
		}
		return 0, false
	}))
}

// TimingRuntimeBehaviours returns the names of the behaviours TimingRuntime
// checks, in order.
func TimingRuntimeBehaviours() []string {
	var names []string
	for _, b := range timingRuntimeSuite {
		names = append(names, b.name)
	}
	return names
}

type timingRuntimeBehaviour struct {
	name string
	run  func(t *testing.T, r *rt.Runtime)
}

var timingRuntimeSuite = []timingRuntimeBehaviour{
	{"SleepingTasksWakeInDeadlineOrderAtTheirDeadlines", testTimingSleepOrder},
	{"TimeoutDropsTheInnerFutureWhenTheDeadlinePasses", testTimingTimeoutExpires},
	{"TimeoutReturnsTheValueAndLeavesNoTimerBehind", testTimingTimeoutSucceeds},
	{"IntervalBurstCatchesUpOnMissedTicks", func(t *testing.T, r *rt.Runtime) { testTimingInterval(t, r, timing.Burst) }},
	{"IntervalDelayRestartsFromTheLateTick", func(t *testing.T, r *rt.Runtime) { testTimingInterval(t, r, timing.Delay) }},
	{"IntervalSkipKeepsToTheGrid", func(t *testing.T, r *rt.Runtime) { testTimingInterval(t, r, timing.Skip) }},
	{"ResetOfAPendingSleepMovesItsWake", testTimingReset},
	{"AbortingASleepingTaskLeavesNoTimerEntry", testTimingAbort},
	{"HoursOfVirtualTimePassWithoutWaiting", testTimingHours},
}

// newTimingRuntime builds the runtime under test and checks it has an
// auto-advancing virtual clock and a timer.
func newTimingRuntime(t *testing.T, configure func(*rt.Builder)) *rt.Runtime {
	t.Helper()
	b := rt.NewBuilder().IgnoreEnv().Clock("virtual")
	configure(b)
	r, err := b.Build()
	require.NoError(t, err, "building the runtime")
	t.Cleanup(r.ShutdownBackground)
	require.NotNil(t, r.Time(), "the runtime has no time")
	require.NotNil(t, r.Time().Timer, "the runtime has no timer: configure must select one")
	vc, ok := r.Time().Clock.(core.VirtualClock)
	require.True(t, ok, "the runtime's clock is %T, not virtual", r.Time().Clock)
	require.True(t, vc.AutoAdvance())
	return r
}

// timerBlockOn runs rt.BlockOn under a watchdog so a lost wake fails the
// behaviour instead of hanging the run.
func timerBlockOn[T any](t *testing.T, r *rt.Runtime, f core.Future[T]) T {
	t.Helper()
	type out struct {
		v   T
		err error
	}
	ch := make(chan out, 1)
	go func() {
		v, err := rt.BlockOn(r, f)
		ch <- out{v, err}
	}()
	select {
	case o := <-ch:
		require.NoError(t, o.err)
		return o.v
	case <-time.After(timerHangLimit):
		r.ShutdownBackground()
		t.Fatalf("BlockOn did not return within %v: a timer wake was lost or the clock did not auto-advance", timerHangLimit)
		panic("unreachable")
	}
}

// timerFn adapts a closure to a future.
func timerFn[T any](f func(cx *core.Context) (T, bool)) core.Future[T] { return core.PollFunc[T](f) }

// timerSpawnAll returns a future that spawns every future from inside the
// runtime and completes when all have.
func timerSpawnAll(fs []core.Future[core.Unit]) core.Future[core.Unit] {
	var hs []*core.JoinHandle[core.Unit]
	next := 0
	return timerFn(func(cx *core.Context) (core.Unit, bool) {
		if hs == nil {
			hs = make([]*core.JoinHandle[core.Unit], len(fs))
			for i, f := range fs {
				hs[i] = core.Spawn(cx, f)
			}
		}
		for ; next < len(hs); next++ {
			r, ok := hs[next].Poll(cx)
			if !ok {
				return core.Unit{}, false
			}
			if r.Err != nil {
				panic(r.Err)
			}
		}
		return core.Unit{}, true
	})
}

// timerSleeper is a task that sleeps d and records when it woke.
func timerSleeper(d time.Duration, mu *sync.Mutex, order *[]int, at []core.Instant, id int) core.Future[core.Unit] {
	s := timing.Sleep(d)
	return timerFn(func(cx *core.Context) (core.Unit, bool) {
		if _, ok := s.Poll(cx); !ok {
			return core.Unit{}, false
		}
		mu.Lock()
		*order = append(*order, id)
		at[id] = timing.Now(cx)
		mu.Unlock()
		return core.Unit{}, true
	})
}

func testTimingSleepOrder(t *testing.T, r *rt.Runtime) {
	const n = 2000
	rng := rand.New(rand.NewPCG(21, 22))
	ds := make([]time.Duration, n)
	fs := make([]core.Future[core.Unit], n)
	var mu sync.Mutex
	var order []int
	at := make([]core.Instant, n)
	for i := range ds {
		ds[i] = time.Duration(rng.Int64N(int64(10*time.Second))) + time.Millisecond
		fs[i] = timerSleeper(ds[i], &mu, &order, at, i)
	}
	start := r.Time().Clock.Now()
	timerBlockOn(t, r, timerSpawnAll(fs))
	require.Len(t, order, n)
	res := core.Instant(time.Millisecond) // no timer rounds coarser
	for k := 1; k < n; k++ {
		a, b := order[k-1], order[k]
		require.LessOrEqual(t, at[a], at[b])
		require.LessOrEqual(t, ds[a], ds[b]+time.Duration(res),
			"sleep of %v woke after one of %v", ds[a], ds[b])
	}
	for i, d := range ds {
		// Each task started sleeping at its first poll, at or after start.
		require.GreaterOrEqual(t, at[i], start.Add(d), "sleep %d of %v woke early", i, d)
	}
}

// timerNeverReady is a future that never completes and counts its drops.
type timerNeverReady struct{ dropped atomic.Int32 }

// Poll is never ready.
func (f *timerNeverReady) Poll(*core.Context) (int, bool) { return 0, false }

// Drop counts a drop.
func (f *timerNeverReady) Drop() { f.dropped.Add(1) }

func testTimingTimeoutExpires(t *testing.T, r *rt.Runtime) {
	inner := &timerNeverReady{}
	to := timing.Timeout[int](inner, 90*time.Second)
	var at core.Instant
	res := timerBlockOn(t, r, timerFn(func(cx *core.Context) (core.Result[int], bool) {
		v, ok := to.Poll(cx)
		if ok {
			at = timing.Now(cx)
		}
		return v, ok
	}))
	require.True(t, errors.Is(res.Err, timing.ErrElapsed), "got %v", res.Err)
	assert.Equal(t, int32(1), inner.dropped.Load(), "the inner future is dropped exactly once")
	assert.GreaterOrEqual(t, at, core.Instant(90*time.Second))
	assert.Zero(t, r.Time().Timer.Len())
}

func testTimingTimeoutSucceeds(t *testing.T, r *rt.Runtime) {
	to := timing.Timeout[core.Unit](timing.Sleep(time.Second), time.Hour)
	res := timerBlockOn(t, r, core.Future[core.Result[core.Unit]](to))
	require.NoError(t, res.Err)
	assert.Zero(t, r.Time().Timer.Len(), "the hour-long deadline was cancelled")
	now := r.Time().Clock.Now()
	assert.Less(t, now, core.Instant(time.Hour), "the clock did not run to the cancelled deadline")
}

// testTimingInterval ticks once, stays busy for 350 ms of virtual time,
// then collects four ticks (period 100 ms).
func testTimingInterval(t *testing.T, r *rt.Runtime, b timing.MissedTickBehavior) {
	vc := r.Time().Clock.(core.VirtualClock)
	iv := timing.NewIntervalAt(r.Time().Clock.Now(), 100*time.Millisecond)
	iv.SetMissedTickBehavior(b)
	start := r.Time().Clock.Now()
	var sched, seen []time.Duration
	timerBlockOn(t, r, timerFn(func(cx *core.Context) (core.Unit, bool) {
		for {
			at, ok := iv.PollTick(cx)
			if !ok {
				return core.Unit{}, false
			}
			sched = append(sched, at.Sub(start))
			seen = append(seen, timing.Now(cx).Sub(start))
			if len(sched) == 1 {
				vc.Advance(350 * time.Millisecond) // busy
			}
			if len(sched) == 5 {
				iv.Drop()
				return core.Unit{}, true
			}
		}
	}))
	ms := time.Millisecond
	want := map[timing.MissedTickBehavior][2][]time.Duration{
		timing.Burst: {{0, 100 * ms, 200 * ms, 300 * ms, 400 * ms}, {0, 350 * ms, 350 * ms, 350 * ms, 400 * ms}},
		timing.Delay: {{0, 100 * ms, 450 * ms, 550 * ms, 650 * ms}, {0, 350 * ms, 450 * ms, 550 * ms, 650 * ms}},
		timing.Skip:  {{0, 100 * ms, 400 * ms, 500 * ms, 600 * ms}, {0, 350 * ms, 400 * ms, 500 * ms, 600 * ms}},
	}[b]
	assert.Equal(t, want[0], sched, "scheduled instants (%v)", b)
	assert.Equal(t, want[1], seen, "observed instants (%v)", b)
	assert.Zero(t, r.Time().Timer.Len(), "a dropped interval leaves no entry")
}

func testTimingReset(t *testing.T, r *rt.Runtime) {
	s := timing.Sleep(time.Hour)
	var armed, woke core.Instant
	polled := false
	timerBlockOn(t, r, timerFn(func(cx *core.Context) (core.Unit, bool) {
		if _, ok := s.Poll(cx); ok {
			woke = timing.Now(cx)
			return core.Unit{}, true
		}
		if !polled {
			polled = true
			armed = timing.Now(cx)
			s.Reset(armed.Add(25 * time.Millisecond))
		}
		return core.Unit{}, false
	}))
	assert.Equal(t, 25*time.Millisecond, woke.Sub(armed), "the reset sleep woke at its new deadline")
	assert.Zero(t, r.Time().Timer.Len())
}

func testTimingAbort(t *testing.T, r *rt.Runtime) {
	const n = 100
	timerBlockOn(t, r, timerFn(func() func(cx *core.Context) (core.Unit, bool) {
		var hs []*core.JoinHandle[core.Unit]
		var wait *timing.SleepFuture
		return func(cx *core.Context) (core.Unit, bool) {
			if hs == nil {
				for range n {
					hs = append(hs, core.Spawn(cx, core.Future[core.Unit](timing.Sleep(time.Hour))))
				}
				// Let every sleeper arm its timer first.
				wait = timing.Sleep(time.Millisecond)
			}
			if wait != nil {
				if _, ok := wait.Poll(cx); !ok {
					return core.Unit{}, false
				}
				wait = nil
				require.Equal(t, n, r.Time().Timer.Len(), "every sleeping task armed one entry")
				for _, h := range hs {
					h.Abort()
				}
			}
			for len(hs) > 0 {
				res, ok := hs[0].Poll(cx)
				if !ok {
					return core.Unit{}, false
				}
				require.True(t, core.IsCancelled(res.Err))
				hs = hs[1:]
			}
			return core.Unit{}, true
		}
	}()))
	assert.Zero(t, r.Time().Timer.Len(), "aborted sleeps were dropped and cancelled")
	assert.Less(t, r.Time().Clock.Now(), core.Instant(time.Hour))
}

func testTimingHours(t *testing.T, r *rt.Runtime) {
	const tasks = 10_000
	const span = 10 * time.Hour
	start := time.Now()
	fs := make([]core.Future[core.Unit], 0, tasks+1)
	for i := range tasks {
		d := time.Duration(i*7919%36000+1) * time.Second
		fs = append(fs, core.Future[core.Unit](timing.Sleep(d)))
	}
	ticks := 0
	iv := timing.NewInterval(time.Second)
	fs = append(fs, timerFn(func(cx *core.Context) (core.Unit, bool) {
		for {
			if _, ok := iv.PollTick(cx); !ok {
				return core.Unit{}, false
			}
			if ticks++; ticks == int(span/time.Second)+1 {
				iv.Drop()
				return core.Unit{}, true
			}
		}
	}))
	t0 := r.Time().Clock.Now()
	timerBlockOn(t, r, timerSpawnAll(fs))
	elapsed := r.Time().Clock.Now().Sub(t0)
	assert.GreaterOrEqual(t, elapsed, span)
	assert.Less(t, elapsed, span+time.Second, "the clock ran no further than the last deadline")
	assert.Zero(t, r.Time().Timer.Len())
	t.Logf("%v of virtual time (%d sleeps, %d interval ticks) took %v of wall time", elapsed, tasks, ticks, time.Since(start))
}
