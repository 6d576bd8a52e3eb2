package plugins_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/plugins"
	"github.com/weftrt/weft/runtime/rt"
)

func timerOptions(t *testing.T) plugins.TimerOptions {
	return plugins.TimerOptions{
		Launch:  plugins.LaunchConfig{Path: wheelBin, SHA256: digest(t, wheelSum)},
		Restart: plugins.RestartPolicy{Backoff: 5 * time.Millisecond},
	}
}

// The wheel, out of process: every behaviour of the timer suite runs on a
// session of one plugin process (the suite builds hundreds of timers; a
// process each would spend the test's time in handshakes).
func TestTimerConformanceOutOfProcess(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	tp, err := plugins.StartTimerPlugin(timerOptions(t))
	require.NoError(t, err)
	var mu sync.Mutex
	var timers []*plugins.Timer
	conformance.Timer(t, func(clock core.Clock) core.Timer {
		tm, err := tp.NewTimer(clock)
		require.NoError(t, err)
		mu.Lock()
		timers = append(timers, tm)
		mu.Unlock()
		return tm
	})
	for _, tm := range timers {
		require.NoError(t, tm.Close())
	}
	require.NoError(t, tp.Close())
	goleak.VerifyNone(t, ignore)
}

// The time API end to end on a runtime whose timer is the plugin, selected
// by configuration. TestMain skips one behaviour, HoursOfVirtualTimePass-
// WithoutWaiting, for its wall time (see skipHours); WEFT_PLUGINS_HOURS=1
// runs it.
func TestTimingRuntimeOutOfProcess(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	conformance.TimingRuntime(t, func(b *rt.Builder) {
		b.Scheduler("currentthread").Timer("plugin").
			Set("timer.path", wheelBin).Set("timer.sha256", wheelSum)
	})
	// Every runtime closed its plugin timer as it shut down.
	assert.Zero(t, plugins.OpenTimerPlugins(), "timer plugin processes left open")
	goleak.VerifyNone(t, ignore)
}

// Parking needs no call: NextDeadline and a Fire before the cached deadline
// answer on the host; only a Fire at a deadline asks the plugin.
func TestParkingOnAPluginTimerNeedsNoCall(t *testing.T) {
	clock := core.NewVirtualClock()
	clock.SetAutoAdvance(false)
	tm, err := plugins.NewTimer(timerOptions(t), clock)
	require.NoError(t, err)
	defer tm.Close()
	assert.Equal(t, time.Millisecond, tm.Resolution(), "the wheel's resolution, reported by the plugin")
	var e core.TimerEntry
	var woken atomic.Int32
	e.Waker.Register(core.WakerFunc(func() { woken.Add(1) }))
	e.Deadline = core.Instant(50 * time.Millisecond)
	tm.Insert(&e)
	for i := range 100 {
		next, ok := tm.NextDeadline()
		require.True(t, ok)
		require.LessOrEqual(t, next, e.Deadline)
		clock.AdvanceTo(core.Instant(i) * core.Instant(400*time.Microsecond))
		require.Zero(t, tm.Fire(clock.Now()))
	}
	assert.Zero(t, tm.Stats().Calls, "no Fire before the deadline asked the plugin")
	clock.AdvanceTo(e.Deadline)
	assert.Equal(t, 1, tm.Fire(clock.Now()))
	assert.Equal(t, uint64(1), tm.Stats().Calls)
	assert.Equal(t, int32(1), woken.Load())
	_, ok := tm.NextDeadline()
	assert.False(t, ok)
}

// Killing the timer plugin keeps every armed entry: the host fires them from
// its table while the process is away, and replays the rest to the
// restarted process.
func TestATimerPluginCrashLosesNoEntry(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	clock := core.NewVirtualClock()
	clock.SetAutoAdvance(false)
	tm, err := plugins.NewTimer(timerOptions(t), clock)
	require.NoError(t, err)
	const n = 300
	es := make([]core.TimerEntry, n)
	woken := make([]atomic.Int32, n)
	for i := range es {
		es[i].Deadline = core.Instant(time.Duration(i+1) * time.Millisecond)
		es[i].Waker.Register(core.WakerFunc(func() { woken[i].Add(1) }))
		tm.Insert(&es[i])
	}
	clock.AdvanceTo(core.Instant(100 * time.Millisecond))
	assert.Equal(t, 100, tm.Fire(clock.Now()))

	require.NoError(t, tm.Plugin().KillProcess())
	clock.AdvanceTo(core.Instant(150 * time.Millisecond))
	assert.Equal(t, 50, tm.Fire(clock.Now()), "fired from the host's table or by the restarted plugin")
	deadline := time.Now().Add(30 * time.Second)
	// Running says the process is up; the timer is served by it once its
	// session is attached.
	for tm.Plugin().Restarts() < 1 || !tm.Plugin().Running() || !tm.Attached() {
		require.True(t, time.Now().Before(deadline), "the plugin was not restarted")
		time.Sleep(5 * time.Millisecond)
	}
	calls := tm.Stats().Calls
	clock.AdvanceTo(core.Instant(time.Second))
	assert.Equal(t, 150, tm.Fire(clock.Now()))
	assert.Greater(t, tm.Stats().Calls, calls, "the restarted plugin serves the timer")
	for i := range woken {
		require.Equal(t, int32(1), woken[i].Load(), "entry %d", i)
	}
	assert.Zero(t, tm.Len())
	require.NoError(t, tm.Close())
	goleak.VerifyNone(t, ignore)
}
