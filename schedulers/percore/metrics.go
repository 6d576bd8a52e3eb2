package percore

import "github.com/weftrt/weft/core"

// publish copies the worker's counters where Metrics reads them (the
// kit's metrics.Published), at every maintenance tick, before every park
// and at shutdown.
func (w *worker) publish() {
	w.stats.BudgetYields = w.cx.BudgetExhaustions()
	// percore does not measure poll times: MeanPollNanos stays 0.
	w.pub.Store(&w.stats, w.rq.Len(), nil)
}

// Metrics implements core.MetricsSource: every worker's counters as last
// published (each worker publishes at its maintenance ticks, before it
// parks and when it stops). A worker's RemoteSchedules are the wakes sent
// to its mailbox, counted by the mailbox as they arrive.
func (s *Scheduler) Metrics() []core.WorkerMetrics {
	out := make([]core.WorkerMetrics, len(s.workers))
	for i, w := range s.workers {
		out[i] = w.pub.Snapshot(i)
		out[i].RemoteSchedules = w.mb.Pushes()
	}
	return out
}
