package timing_test

import (
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// refTimer is the simplest correct core.Timer: a mutex and a slice,
// O(n) everything. The timing API is tested against it here because core
// cannot import the timer modules; the modules run the same API end to end
// on a real runtime in their own tests.
type refTimer struct {
	mu sync.Mutex
	es []*core.TimerEntry
}

func (r *refTimer) Insert(e *core.TimerEntry) { r.Reset(e, e.Deadline) }

func (r *refTimer) Reset(e *core.TimerEntry, d core.Instant) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Deadline = d
	spi.ResetFired(e)
	if spi.LinksOf(e).Owner != r {
		spi.LinksOf(e).Owner = r
		r.es = append(r.es, e)
	}
}

func (r *refTimer) Cancel(e *core.TimerEntry) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	i := slices.Index(r.es, e)
	if i < 0 {
		return false
	}
	r.es = slices.Delete(r.es, i, i+1)
	spi.LinksOf(e).Owner = nil
	return true
}

func (r *refTimer) NextDeadline() (core.Instant, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.es) == 0 {
		return 0, false
	}
	next := r.es[0].Deadline
	for _, e := range r.es {
		next = min(next, e.Deadline)
	}
	return next, true
}

func (r *refTimer) Fire(now core.Instant) int {
	r.mu.Lock()
	var wake []core.Waker
	n := 0
	r.es = slices.DeleteFunc(r.es, func(e *core.TimerEntry) bool {
		if e.Deadline > now {
			return false
		}
		spi.LinksOf(e).Owner = nil
		n++
		if w := spi.Expire(e); w != nil {
			wake = append(wake, w)
		}
		return true
	})
	r.mu.Unlock()
	for _, w := range wake {
		w.Wake()
	}
	return n
}

func (r *refTimer) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.es)
}

// testWorker is a core.Worker that only carries a Time.
type testWorker struct{ time *core.Time }

func (w *testWorker) Scheduler() core.Scheduler { return nil }
func (w *testWorker) Defer(x core.Waker)        { x.Wake() }
func (w *testWorker) Driver() core.Driver       { return nil }
func (w *testWorker) Time() *core.Time          { return w.time }

// wakeCount is a waker that counts its wakes.
type wakeCount struct{ n atomic.Int64 }

func (w *wakeCount) Wake() { w.n.Add(1) }

// take reports whether the waker was woken since the last take.
func (w *wakeCount) take() bool { return w.n.Swap(0) > 0 }

// harness polls futures on a worker Context whose runtime has a virtual
// clock and a refTimer, standing in for a scheduler.
type harness struct {
	t     *testing.T
	clock *core.VClock
	timer *refTimer
	time  *core.Time
	wbase spi.WorkerContext
	base  *core.Context
}

func newHarness(t *testing.T) *harness {
	clock := core.NewVirtualClock()
	timer := &refTimer{}
	tm := &core.Time{Clock: clock, Timer: timer}
	wbase := spi.NewWorkerContext(&testWorker{time: tm})
	return &harness{t: t, clock: clock, timer: timer, time: tm, wbase: wbase, base: wbase.Context()}
}

// poll polls f once with waker w and a fresh budget.
func poll[T any](h *harness, f core.Future[T], w core.Waker) (T, bool) {
	h.wbase.ResetBudget()
	cx := h.base.WithWaker(w)
	return f.Poll(&cx)
}

// advance moves the clock by d's worth of instant and fires the timer.
func (h *harness) advanceTo(i core.Instant) {
	h.clock.AdvanceTo(i)
	spi.Fire(h.time)
}

// run drives f to completion the way a scheduler with an auto-advancing
// virtual clock would: poll when woken, otherwise jump to the next
// deadline. It fails the test if f waits with nothing armed.
func run[T any](h *harness, f core.Future[T]) T {
	h.t.Helper()
	w := &wakeCount{}
	for range 10_000_000 {
		if v, ok := poll(h, f, w); ok {
			return v
		}
		for !w.take() {
			if !spi.AutoAdvance(h.time) {
				h.t.Fatalf("future pending with no timer armed at %v: it would wait for ever", h.clock.Now())
			}
		}
	}
	h.t.Fatal("future did not complete")
	panic("unreachable")
}

// runQueue is the run queue of runAll: a task's waker pushes its index.
type runQueue struct {
	mu     sync.Mutex
	ids    []int
	queued []bool
}

func (q *runQueue) push(id int) {
	q.mu.Lock()
	if !q.queued[id] {
		q.queued[id] = true
		q.ids = append(q.ids, id)
	}
	q.mu.Unlock()
}

func (q *runQueue) takeAll(buf []int) []int {
	q.mu.Lock()
	buf = append(buf[:0], q.ids...)
	q.ids = q.ids[:0]
	for _, id := range buf {
		q.queued[id] = false
	}
	q.mu.Unlock()
	return buf
}

// taskWaker queues its task on the run queue.
type taskWaker struct {
	q  *runQueue
	id int
}

func (w *taskWaker) Wake() { w.q.push(w.id) }

// runAll drives several futures together like a single-threaded scheduler
// with an auto-advancing virtual clock and returns the order in which they
// completed and the instant each completed at.
func runAll(h *harness, fs ...core.Future[core.Unit]) (order []int, at []core.Instant) {
	h.t.Helper()
	q := &runQueue{queued: make([]bool, len(fs))}
	wakers := make([]taskWaker, len(fs))
	done := make([]bool, len(fs))
	for i := range fs {
		wakers[i] = taskWaker{q: q, id: i}
		q.push(i)
	}
	at = make([]core.Instant, len(fs))
	var batch []int
	for left := len(fs); left > 0; {
		batch = q.takeAll(batch)
		if len(batch) == 0 {
			if !spi.AutoAdvance(h.time) {
				h.t.Fatalf("%d futures pending with no timer armed", left)
			}
			continue
		}
		for _, i := range batch {
			if done[i] {
				continue
			}
			if _, ok := poll(h, fs[i], &wakers[i]); ok {
				done[i] = true
				at[i] = h.clock.Now()
				order = append(order, i)
				left--
			}
		}
	}
	return order, at
}
