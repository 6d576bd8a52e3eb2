package percore

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// counters are a worker's own counts, written only by its goroutine.
type counters struct {
	polls, steals, stolen, overflows, parks, unparks, local uint64
}

// published is where a worker copies its counters for Metrics, at every
// maintenance tick, before every sleep and at shutdown; remote is counted
// directly by the senders of mailbox tasks.
type published struct {
	polls, steals, stolen, overflows, parks, unparks, local, budget atomic.Uint64
	remote                                                          atomic.Uint64
	depth                                                           atomic.Int64
}

// publish copies the worker's counters where Metrics reads them.
func (w *worker) publish() {
	c, p := &w.stats, &w.pub
	p.polls.Store(c.polls)
	p.steals.Store(c.steals)
	p.stolen.Store(c.stolen)
	p.overflows.Store(c.overflows)
	p.parks.Store(c.parks)
	p.unparks.Store(c.unparks)
	p.local.Store(c.local)
	p.budget.Store(w.cx.BudgetExhaustions())
	p.depth.Store(int64(w.rq.len()))
}

// Metrics implements core.MetricsSource: every worker's counters as last
// published (each worker publishes at its maintenance ticks, before it
// sleeps and when it stops).
func (s *Scheduler) Metrics() []core.WorkerMetrics {
	out := make([]core.WorkerMetrics, len(s.workers))
	for i, w := range s.workers {
		p := &w.pub
		out[i] = core.WorkerMetrics{
			Worker:          i,
			Polls:           p.polls.Load(),
			Steals:          p.steals.Load(),
			StolenTasks:     p.stolen.Load(),
			Overflows:       p.overflows.Load(),
			Parks:           p.parks.Load(),
			Unparks:         p.unparks.Load(),
			LocalSchedules:  p.local.Load(),
			RemoteSchedules: p.remote.Load(),
			BudgetYields:    p.budget.Load(),
			QueueDepth:      int(p.depth.Load()),
		}
	}
	return out
}
