package workstealing

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

// Global queue interval tuning. A busy worker looks at the global queue
// once every interval ticks; tuned, the interval is the number of polls
// that fit in targetGlobalQueueInterval at the measured mean poll time, so
// a task in the global queue waits about that long whatever the tasks
// cost.
const (
	targetGlobalQueueInterval = 200 * time.Microsecond
	minGlobalQueueInterval    = 2
	maxGlobalQueueInterval    = 127
	// pollTimeAlpha is the weight of one poll in the mean poll time
	// (an exponentially weighted moving average).
	pollTimeAlpha = 0.1
	// initialGlobalQueueInterval seeds the average so that the interval
	// starts at Tokio's long-standing fixed value.
	initialGlobalQueueInterval = 61
)

// stats are one worker's counters. Only the goroutine holding the worker's
// core writes them; publish copies them to the worker's atomics, where
// Metrics reads them.
type stats struct {
	polls, steals, stolen, overflows, parks uint64
	localSchedules, lifoHits, budgetYields  uint64

	// Poll time is measured per batch (from the moment the worker starts
	// running tasks until it runs out or pauses for maintenance), not per
	// poll, so a poll costs no clock read.
	batchStart time.Time
	batchPolls uint64
	pollEWMA   float64 // nanoseconds
	// measured: pollEWMA holds a measurement, not just its seed.
	measured bool
}

func newStats() stats {
	return stats{pollEWMA: float64(targetGlobalQueueInterval.Nanoseconds()) / initialGlobalQueueInterval}
}

// startProcessing marks the start of a batch of polls.
func (st *stats) startProcessing() {
	st.batchStart = time.Now()
	st.batchPolls = 0
}

// endProcessing folds the batch into the mean poll time. A batch of n
// polls weighs as n single polls would: alpha' = 1-(1-alpha)^n.
func (st *stats) endProcessing() {
	n := st.batchPolls
	if n == 0 {
		return
	}
	st.batchPolls = 0
	elapsed := float64(time.Since(st.batchStart).Nanoseconds())
	mean := elapsed / float64(n)
	w := 1 - math.Pow(1-pollTimeAlpha, float64(n))
	st.pollEWMA = w*mean + (1-w)*st.pollEWMA
	st.measured = true
}

// tunedGlobalQueueInterval returns the fixed interval when configured,
// else the tuned one.
func (st *stats) tunedGlobalQueueInterval(fixed int) uint32 {
	if fixed > 0 {
		return uint32(fixed)
	}
	return tuneInterval(st.pollEWMA)
}

// tuneInterval is the number of polls of meanPollNanos that fit in the
// target interval, clamped to [2, 127].
func tuneInterval(meanPollNanos float64) uint32 {
	if meanPollNanos <= 0 || math.IsNaN(meanPollNanos) {
		return maxGlobalQueueInterval
	}
	n := float64(targetGlobalQueueInterval.Nanoseconds()) / meanPollNanos
	switch {
	case n < minGlobalQueueInterval:
		return minGlobalQueueInterval
	case n > maxGlobalQueueInterval:
		return maxGlobalQueueInterval
	}
	return uint32(n)
}

// published holds the last copy of a worker's counters, readable from any
// goroutine.
type published struct {
	polls, steals, stolen, overflows, parks atomic.Uint64
	localSchedules, lifoHits, budgetYields  atomic.Uint64
	meanPoll                                atomic.Uint64 // float64 bits
	// unparks is counted by the waking goroutine itself, not published.
	unparks atomic.Uint64
}

func (p *published) store(st *stats) {
	p.polls.Store(st.polls)
	p.steals.Store(st.steals)
	p.stolen.Store(st.stolen)
	p.overflows.Store(st.overflows)
	p.parks.Store(st.parks)
	p.localSchedules.Store(st.localSchedules)
	p.lifoHits.Store(st.lifoHits)
	p.budgetYields.Store(st.budgetYields)
	if st.measured {
		p.meanPoll.Store(math.Float64bits(st.pollEWMA))
	}
}

// Metrics returns a snapshot of every worker's counters, implementing
// core.MetricsSource. Counters are cumulative since New. They are
// published by each worker when it parks, every event_interval ticks while
// it is busy, and when it stops, so a busy worker's figures may lag by up
// to that many ticks; after Shutdown they are exact. QueueDepth is read
// live. The scheduler has one global queue, so tasks scheduled from
// outside the workers are counted once, in worker 0's RemoteSchedules;
// summed over workers, every counter gives the scheduler's total.
func (s *Scheduler) Metrics() []core.WorkerMetrics {
	out := make([]core.WorkerMetrics, len(s.workers))
	for i, w := range s.workers {
		p := &w.pub
		out[i] = core.WorkerMetrics{
			Worker:         i,
			Polls:          p.polls.Load(),
			Steals:         p.steals.Load(),
			StolenTasks:    p.stolen.Load(),
			Overflows:      p.overflows.Load(),
			Parks:          p.parks.Load(),
			Unparks:        p.unparks.Load(),
			LocalSchedules: p.localSchedules.Load(),
			LIFOHits:       p.lifoHits.Load(),
			BudgetYields:   p.budgetYields.Load(),
			QueueDepth:     w.queue.len(),
			MeanPollNanos:  math.Float64frombits(p.meanPoll.Load()),
		}
	}
	out[0].RemoteSchedules = s.inject.remoteCount()
	return out
}
