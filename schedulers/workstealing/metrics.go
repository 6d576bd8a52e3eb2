package workstealing

import (
	"math"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/metrics"
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
	// initialGlobalQueueInterval seeds the mean poll time so that the
	// interval starts at Tokio's long-standing fixed value.
	initialGlobalQueueInterval = 61
	initialMeanPoll            = float64(targetGlobalQueueInterval) / initialGlobalQueueInterval
)

// tunedGlobalQueueInterval returns the fixed interval when configured,
// else the one tuned from pt.
func tunedGlobalQueueInterval(fixed int, pt *metrics.PollTime) uint32 {
	if fixed > 0 {
		return uint32(fixed)
	}
	return tuneInterval(pt.Mean())
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
		out[i] = w.pub.Snapshot(i)
		out[i].QueueDepth = w.rq.Len()
	}
	out[0].RemoteSchedules = s.global.Pushes()
	return out
}
