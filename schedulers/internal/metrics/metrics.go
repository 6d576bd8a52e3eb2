// Package metrics is how weft's schedulers keep and publish their
// per-worker figures (core.WorkerMetrics): Counters, the plain counts a
// worker's own goroutine keeps without synchronisation; PollTime, the mean
// poll time measured per batch of polls; and Published, the atomic copy a
// worker makes of both from time to time, which Metrics reads from any
// goroutine.
//
// A worker counts on its hot path in plain fields and publishes at its
// maintenance ticks, before it parks and when it stops, so counting costs
// no atomic operation and a reader's figures may lag a busy worker by up
// to one event interval.
package metrics

import (
	"math"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

// Counters are one worker's counts, cumulative since the scheduler was
// made. Only the goroutine running the worker writes them. The fields
// are those of core.WorkerMetrics.
type Counters struct {
	// Polls counts tasks polled.
	Polls uint64
	// Steals counts successful steal operations; StolenTasks the tasks
	// they took.
	Steals, StolenTasks uint64
	// Overflows counts pushes into a full run queue.
	Overflows uint64
	// Parks counts the worker's parks; Unparks its returns from them.
	Parks, Unparks uint64
	// LocalSchedules counts tasks scheduled by the worker itself (spawned
	// or woken during its polls, or yielding).
	LocalSchedules uint64
	// LIFOHits counts polls of tasks taken from the LIFO slot.
	LIFOHits uint64
	// BudgetYields counts polls that ended because the budget ran out.
	BudgetYields uint64
}

// Poll time averaging.
const (
	// pollTimeAlpha is the weight of one poll in the mean poll time (an
	// exponentially weighted moving average).
	pollTimeAlpha = 0.1
)

// PollTime is a worker's mean poll time, an exponentially weighted moving
// average in which each poll weighs pollTimeAlpha. It is measured per
// batch (from the moment the worker starts running tasks until it runs
// out or pauses for maintenance), not per poll, so a poll costs no clock
// read: the batch's mean counts as that many polls of that duration. Only
// the goroutine running the worker uses it.
type PollTime struct {
	start      time.Time
	startPolls uint64
	mean       float64 // nanoseconds
	// measured: mean holds a measurement, not just its seed.
	measured bool
}

// Seed sets the mean that the first batch is weighed against, so that a
// figure derived from it (workstealing's tuned global queue interval)
// starts at a chosen value. Unseeded, the first batch's mean is taken as
// it is.
func (pt *PollTime) Seed(nanos float64) { pt.mean = nanos }

// Start marks the start of a batch; polls is the worker's poll count
// (Counters.Polls) at that moment.
func (pt *PollTime) Start(polls uint64) {
	pt.start = time.Now()
	pt.startPolls = polls
}

// End folds the batch that began at the last Start into the mean; polls is
// the worker's poll count now. A batch of n polls weighs as n single
// polls would: alpha' = 1-(1-alpha)^n. A batch without polls changes
// nothing.
func (pt *PollTime) End(polls uint64) {
	n := polls - pt.startPolls
	if n == 0 {
		return
	}
	pt.startPolls = polls
	mean := float64(time.Since(pt.start).Nanoseconds()) / float64(n)
	if !pt.measured && pt.mean == 0 {
		pt.mean = mean
	} else {
		w := 1 - math.Pow(1-pollTimeAlpha, float64(n))
		pt.mean = w*mean + (1-w)*pt.mean
	}
	pt.measured = true
}

// Mean returns the mean poll time in nanoseconds (the seed until a batch
// was measured).
func (pt *PollTime) Mean() float64 { return pt.mean }

// Published is the copy of a worker's figures that any goroutine may read.
// The worker stores it; Snapshot loads it.
type Published struct {
	polls, steals, stolen, overflows, parks, unparks atomic.Uint64
	localSchedules, lifoHits, budgetYields           atomic.Uint64
	depth                                            atomic.Int64
	meanPoll                                         atomic.Uint64 // float64 bits
}

// Store copies c, the worker's queue depth and its mean poll time (once
// one was measured; pt may be nil for a scheduler that does not measure
// it) where Snapshot reads them. Only the goroutine running the worker
// calls it.
func (p *Published) Store(c *Counters, depth int, pt *PollTime) {
	p.polls.Store(c.Polls)
	p.steals.Store(c.Steals)
	p.stolen.Store(c.StolenTasks)
	p.overflows.Store(c.Overflows)
	p.parks.Store(c.Parks)
	p.unparks.Store(c.Unparks)
	p.localSchedules.Store(c.LocalSchedules)
	p.lifoHits.Store(c.LIFOHits)
	p.budgetYields.Store(c.BudgetYields)
	p.depth.Store(int64(depth))
	if pt != nil && pt.measured {
		p.meanPoll.Store(math.Float64bits(pt.mean))
	}
}

// Snapshot returns the last published figures of the worker numbered
// worker. RemoteSchedules is left to the caller: remote schedules are
// counted by the queue that receives them (globalq.Queue.Pushes), not by
// the worker.
func (p *Published) Snapshot(worker int) core.WorkerMetrics {
	return core.WorkerMetrics{
		Worker:         worker,
		Polls:          p.polls.Load(),
		Steals:         p.steals.Load(),
		StolenTasks:    p.stolen.Load(),
		Overflows:      p.overflows.Load(),
		Parks:          p.parks.Load(),
		Unparks:        p.unparks.Load(),
		LocalSchedules: p.localSchedules.Load(),
		LIFOHits:       p.lifoHits.Load(),
		BudgetYields:   p.budgetYields.Load(),
		QueueDepth:     int(p.depth.Load()),
		MeanPollNanos:  math.Float64frombits(p.meanPoll.Load()),
	}
}
