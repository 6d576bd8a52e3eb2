package workstealing_test

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// waitUntil spins (yielding) until cond holds; the deadline only turns a
// broken scheduler's hang into a failure.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never happened: %s", what)
		}
		runtime.Gosched()
	}
}

func total(ms []core.WorkerMetrics, f func(core.WorkerMetrics) uint64) uint64 {
	var n uint64
	for _, m := range ms {
		n += f(m)
	}
	return n
}

func TestMetricsCountTheWorkDone(t *testing.T) {
	r, s := newRuntime(t, 1)
	// The idle worker parks; the root's arrival must unpark it.
	waitUntil(t, "the worker parks", func() bool { return s.Metrics()[0].Parks > 0 })

	const spawned = 300 // more than a run queue holds: one overflow
	c := &countdown{}
	c.reset(spawned + 1)
	spent := false
	budgetHog := core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if spent {
			c.done()
			return core.Unit{}, true
		}
		spent = true
		for cx.Proceed() {
		}
		return core.Unit{}, false // woken by the spent budget
	})
	blockOn(t, r, rootThen(func(cx *core.Context) {
		for i := 0; i < spawned; i++ {
			spawn(cx, tick{c})
		}
		spawn(cx, budgetHog)
	}, c))
	s.Shutdown() // every worker publishes its counters when it stops

	ms := s.Metrics()
	require.Len(t, ms, 1)
	m := ms[0]
	assert.Equal(t, 0, m.Worker)
	assert.GreaterOrEqual(t, m.Polls, uint64(spawned+3), "root, tasks, two polls of the hog")
	assert.GreaterOrEqual(t, m.LocalSchedules, uint64(spawned+1), "every spawn from the root")
	assert.GreaterOrEqual(t, m.RemoteSchedules, uint64(1), "the root came from outside")
	assert.GreaterOrEqual(t, m.Overflows, uint64(1))
	assert.GreaterOrEqual(t, m.LIFOHits, uint64(1))
	assert.GreaterOrEqual(t, m.BudgetYields, uint64(1))
	assert.GreaterOrEqual(t, m.Parks, uint64(1))
	assert.GreaterOrEqual(t, m.Unparks, uint64(1))
	assert.Zero(t, m.Steals, "one worker has nobody to steal from")
	assert.Zero(t, m.QueueDepth)
	assert.Greater(t, m.MeanPollNanos, 0.0)
}

func TestMetricsCountSteals(t *testing.T) {
	r, s := newRuntime(t, 2)
	var ran atomic.Int64
	c := &countdown{}
	const children = 10
	c.reset(children)
	blockOn(t, r, rootThen(func(cx *core.Context) {
		for i := 0; i < children; i++ {
			spawn(cx, core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
				ran.Add(1)
				c.done()
				return core.Unit{}, true
			}))
		}
		// Hold this worker: the children can only run if the other
		// worker steals them.
		waitUntil(t, "the other worker steals", func() bool { return ran.Load() > 0 })
	}, c))
	s.Shutdown()
	ms := s.Metrics()
	steals := total(ms, func(m core.WorkerMetrics) uint64 { return m.Steals })
	stolen := total(ms, func(m core.WorkerMetrics) uint64 { return m.StolenTasks })
	assert.GreaterOrEqual(t, steals, uint64(1))
	assert.GreaterOrEqual(t, stolen, steals, "each steal takes at least one task")
}

func TestMetricsHaveOneEntryPerWorker(t *testing.T) {
	_, s := newRuntime(t, 3)
	ms := s.Metrics()
	require.Len(t, ms, 3)
	for i, m := range ms {
		assert.Equal(t, i, m.Worker)
	}
	var _ core.MetricsSource = s
	var _ core.Scheduler = (*workstealing.Scheduler)(nil)
}
