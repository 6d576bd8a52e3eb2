// Package fanin is a bounded fan-in with a deadline on weft: a pool of
// worker tasks runs jobs and sends each result into a bounded channel, and
// the collector takes results until every job is done or the deadline
// passes, when it cancels the workers. Command fanin (cmd/fanin) runs it;
// examples/plaingo/fanin is the same program on goroutines, to compare.
package fanin

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/lib/tasks"
	"github.com/weftrt/weft/lib/timing"
	"github.com/weftrt/weft/lib/wsync/mpsc"
)

// Job is one unit of work: it returns its result after its own time.
type Job func(c *co.Ctx) int

// Report is what Collect gathered.
type Report struct {
	Results  []int // in the order they arrived
	TimedOut bool  // the deadline passed before every job was done
}

// Collect runs jobs on workers tasks, at most workers at a time, with at
// most buffered results waiting for the collector, and collects results
// until every job is done or deadline has passed. On the deadline the
// workers are cancelled; a result sent before that is collected, none is
// lost in the channel.
func Collect(c *co.Ctx, jobs []Job, workers, buffered int, deadline time.Duration) Report {
	results, out := mpsc.New[int](buffered)
	var next atomic.Int64 // the index of the next job to take
	stop := tasks.NewCancellationToken()
	defer stop.Cancel()

	for range workers {
		tx := results.Clone()
		core.Drop(co.Go(c, func(c *co.Ctx) error {
			defer tx.Close()
			for i := next.Add(1) - 1; i < int64(len(jobs)); i = next.Add(1) - 1 {
				if stop.IsCancelled() {
					return nil
				}
				if err := co.Await(c, tx.Send(jobs[i](c))); err != nil {
					return err
				}
			}
			return nil
		}))
	}
	results.Close() // the workers hold the remaining senders

	var rep Report
	at := timing.Now(c.Context()).Add(deadline)
	for {
		r, err := co.AwaitResult(c, timing.TimeoutAt(out.Recv(), at))
		switch {
		case err != nil: // the deadline passed; the pending receive is dropped
			rep.TimedOut = true
			return rep
		case r.Err != nil: // closed: every worker is done
			return rep
		}
		rep.Results = append(rep.Results, r.Value)
	}
}
