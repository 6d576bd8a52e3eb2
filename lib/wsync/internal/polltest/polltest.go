// Package polltest is the test kit of weft's sync packages: it polls
// futures by hand, outside any runtime, with wakers that count, and builds
// Contexts with a constrained budget or a fake worker, so unit tests can
// check exactly who was woken, and how, without a scheduler.
package polltest

import (
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// Waker counts its wakes.
type Waker struct{ n atomic.Int64 }

// Wake implements core.Waker.
func (w *Waker) Wake() { w.n.Add(1) }

// Woken reports whether the waker was woken since the last call, and
// forgets the wakes.
func (w *Waker) Woken() bool { return w.n.Swap(0) > 0 }

// Hand polls futures as one task would: with its own Waker and a Context
// without worker or budget.
type Hand struct {
	W  Waker
	Cx *core.Context
}

// NewHand returns a Hand.
func NewHand() *Hand {
	h := &Hand{}
	h.Cx = core.NewContext(&h.W)
	return h
}

// Woken reports whether the hand's waker was woken since the last call.
func (h *Hand) Woken() bool { return h.W.Woken() }

// Poll polls f once with h's Context.
func Poll[T any](h *Hand, f core.Future[T]) (T, bool) { return f.Poll(h.Cx) }

// worker is a core.Worker whose scheduler records where tasks were
// scheduled from.
type worker struct{ sched *Scheduler }

func (w *worker) Scheduler() core.Scheduler { return w.sched }
func (w *worker) Defer(wk core.Waker)       { wk.Wake() }
func (w *worker) Driver() core.Driver       { return nil }
func (w *worker) Time() *core.Time          { return nil }

// Scheduler is a fake core.Scheduler that counts the tasks scheduled from
// its own worker (Local) and from anywhere else (Remote). It runs nothing.
type Scheduler struct {
	Local, Remote atomic.Int64
	worker        core.Worker
}

// Spawn implements core.Scheduler: it binds the task.
func (s *Scheduler) Spawn(t *core.Task, _ core.Worker) error {
	spi.Bind(t, s)
	return nil
}

// Schedule implements core.Scheduler: it counts.
func (s *Scheduler) Schedule(_ *core.Task, from core.Worker) {
	if from != nil && from == s.worker {
		s.Local.Add(1)
	} else {
		s.Remote.Add(1)
	}
}

// BlockOn implements core.Scheduler; it returns at once.
func (s *Scheduler) BlockOn(*core.Task, <-chan struct{}) {}

// Shutdown implements core.Scheduler; it does nothing.
func (s *Scheduler) Shutdown() {}

// WorkerContext returns the Context of a fake worker with a full budget, a
// task of that worker's scheduler, idle so that its next wake schedules
// it, and the scheduler that counts those schedules. Poll a future with
// TaskContext(cx, task) to have it register task as its waker.
func WorkerContext() (*core.Context, *Scheduler, *core.Task) {
	s := &Scheduler{}
	w := &worker{sched: s}
	s.worker = w
	wcx := spi.NewWorkerContext(w)
	wcx.ResetBudget()
	cx := wcx.Context()
	t, _ := core.NewTask[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) { return core.Unit{}, false }))
	_ = s.Spawn(t, nil)
	spi.Run(t, spi.NewWorkerContext(w).Context()) // now idle
	return cx, s, t
}

// TaskContext returns a Context sharing cx's worker and budget whose waker
// is t.
func TaskContext(cx *core.Context, t *core.Task) *core.Context {
	c := cx.WithWaker(t)
	return &c
}

// BudgetContext returns a Context with a constrained, full budget whose
// exhaustion wakes w.
func BudgetContext(w core.Waker) *core.Context {
	wcx := spi.NewWorkerContext(&worker{sched: &Scheduler{}})
	wcx.ResetBudget()
	cx := wcx.Context().WithWaker(w)
	return &cx
}
