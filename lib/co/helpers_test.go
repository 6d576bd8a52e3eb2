package co_test

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/lib/co"
	"github.com/weftrt/weft/runtime/rt"
)

// TestMain checks that no goroutine outlives the tests once the pool's idle
// coroutines are ended.
func TestMain(m *testing.M) {
	code := m.Run()
	co.ReleaseIdle()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// loopScheduler is a minimal scheduler for this package's tests (core
// cannot import the scheduler modules; they run the conformance suites
// with coroutine tasks on real schedulers): one FIFO queue run inside
// BlockOn by the calling goroutine, with Run's reschedule report honoured.
type loopScheduler struct {
	p core.SchedulerParams

	mu       sync.Mutex
	queue    core.TaskQueue
	closed   bool
	wake     chan struct{}
	running  sync.Mutex
	deferred []core.Waker
	wcx      spi.WorkerContext
	cx       *core.Context
	// time is nil, or a paused virtual clock and listTimer: when nothing
	// can run, BlockOn jumps the clock to the next deadline and fires it.
	time *core.Time
}

type loopWorker struct{ s *loopScheduler }

func (w loopWorker) Scheduler() core.Scheduler { return w.s }
func (w loopWorker) Defer(wk core.Waker)       { w.s.deferred = append(w.s.deferred, wk) }
func (w loopWorker) Driver() core.Driver       { return nil }
func (w loopWorker) Time() *core.Time          { return w.s.time }

func (s *loopScheduler) Spawn(t *core.Task, from core.Worker) error {
	spi.Bind(t, s)
	if err := s.p.Tasks.Bind(t); err != nil {
		return err
	}
	s.Schedule(t, from)
	return nil
}

func (s *loopScheduler) Schedule(t *core.Task, _ core.Worker) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		spi.Shutdown(t)
		return
	}
	s.queue.Push(t)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *loopScheduler) BlockOn(_ *core.Task, done <-chan struct{}) {
	s.running.Lock()
	defer s.running.Unlock()
	defer func() {
		s.mu.Lock()
		closed := s.closed
		s.mu.Unlock()
		if closed {
			s.cancelAll()
		}
	}()
	for {
		select {
		case <-done:
			return
		default:
		}
		s.mu.Lock()
		closed := s.closed
		t := s.queue.Pop()
		s.mu.Unlock()
		if closed {
			return
		}
		if t == nil {
			if len(s.deferred) > 0 {
				d := s.deferred
				s.deferred = nil
				for _, w := range d {
					w.Wake()
				}
				continue
			}
			if s.fireNext() {
				continue
			}
			select {
			case <-s.wake:
			case <-done:
				return
			}
			continue
		}
		s.wcx.ResetBudget()
		if spi.Run(t, s.cx) {
			s.Schedule(t, nil)
		}
	}
}

func (s *loopScheduler) Shutdown() {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	if s.running.TryLock() {
		s.cancelAll()
		s.running.Unlock()
	}
}

func (s *loopScheduler) cancelAll() {
	s.p.Tasks.ShutdownAll(0)
	s.mu.Lock()
	var rest core.TaskQueue
	rest.PushAll(&s.queue)
	s.mu.Unlock()
	for t := rest.Pop(); t != nil; t = rest.Pop() {
		spi.Shutdown(t)
	}
}

// fireNext moves the virtual clock to the next deadline and fires what is
// due, reporting whether there was a deadline.
func (s *loopScheduler) fireNext() bool {
	if s.time == nil {
		return false
	}
	next, ok := s.time.Timer.NextDeadline()
	if !ok {
		return false
	}
	s.time.Clock.(*core.VClock).AdvanceTo(next)
	s.time.Timer.Fire(s.time.Clock.Now())
	return true
}

// listTimer is a core.Timer kept as a slice under a mutex, enough for the
// tests of sleeping (the timer modules have the real ones).
type listTimer struct {
	mu sync.Mutex
	es []*core.TimerEntry
}

func (l *listTimer) Insert(e *core.TimerEntry) { l.Reset(e, e.Deadline) }

func (l *listTimer) Reset(e *core.TimerEntry, d core.Instant) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Deadline = d
	spi.ResetFired(e)
	if !slices.Contains(l.es, e) {
		l.es = append(l.es, e)
	}
}

func (l *listTimer) Cancel(e *core.TimerEntry) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := len(l.es)
	l.es = slices.DeleteFunc(l.es, func(x *core.TimerEntry) bool { return x == e })
	return len(l.es) < n
}

func (l *listTimer) NextDeadline() (core.Instant, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.es) == 0 {
		return 0, false
	}
	return slices.MinFunc(l.es, func(a, b *core.TimerEntry) int { return cmp.Compare(a.Deadline, b.Deadline) }).Deadline, true
}

func (l *listTimer) Fire(now core.Instant) int {
	l.mu.Lock()
	var due []core.Waker
	n := len(l.es)
	l.es = slices.DeleteFunc(l.es, func(e *core.TimerEntry) bool {
		if e.Deadline > now {
			return false
		}
		if w := spi.Expire(e); w != nil {
			due = append(due, w)
		}
		return true
	})
	fired := n - len(l.es)
	l.mu.Unlock()
	for _, w := range due {
		w.Wake()
	}
	return fired
}

func (l *listTimer) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.es)
}

// newRuntime builds a runtime on loopScheduler.
func newRuntime(t testing.TB) *rt.Runtime {
	t.Helper()
	return mustRuntime(t, nil)
}

// newTimedRuntime builds a runtime on loopScheduler with a paused virtual
// clock that jumps to the next deadline whenever no task can run, so
// sleeps take no real time.
func newTimedRuntime(t testing.TB) (*rt.Runtime, *core.VClock) {
	t.Helper()
	clock := core.NewVirtualClock()
	return mustRuntime(t, &core.Time{Clock: clock, Timer: new(listTimer)}), clock
}

func mustRuntime(t testing.TB, tm *core.Time) *rt.Runtime {
	t.Helper()
	r, err := buildRuntime(tm)
	if err != nil {
		t.Fatalf("building runtime: %v", err)
	}
	t.Cleanup(func() { r.ShutdownBackground() })
	return r
}

// exampleRuntime is newTimedRuntime for the examples, which have no
// testing.TB; they close it themselves.
func exampleRuntime() *rt.Runtime {
	r, err := buildRuntime(&core.Time{Clock: core.NewVirtualClock(), Timer: new(listTimer)})
	if err != nil {
		panic(err)
	}
	return r
}

// buildRuntime builds a runtime on loopScheduler, with time tm (nil: none).
func buildRuntime(tm *core.Time) (*rt.Runtime, error) {
	return rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		s := &loopScheduler{p: p, wake: make(chan struct{}, 1), time: tm}
		s.wcx = spi.NewWorkerContext(loopWorker{s})
		s.cx = s.wcx.Context()
		return s, nil
	}).Build()
}

// run runs body as the root coroutine task under a watchdog.
func run[T any](t testing.TB, r *rt.Runtime, body func(c *co.Ctx) T) (T, error) {
	t.Helper()
	type out struct {
		v   T
		err error
	}
	ch := make(chan out, 1)
	go func() {
		v, err := co.Main(r, func(c *co.Ctx) (T, error) { return body(c), nil })
		ch <- out{v, err}
	}()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-time.After(30 * time.Second):
		t.Fatal("the root task hung")
		panic("unreachable")
	}
}

// gate is a future that stays pending until opened, counting drops. Any
// number of tasks may wait on it (each awaits the same gate).
type gate struct {
	mu      sync.Mutex
	open    bool
	ws      map[core.Waker]bool
	dropped int
}

func (g *gate) Poll(cx *core.Context) (core.Unit, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.open {
		return core.Unit{}, true
	}
	if g.ws == nil {
		g.ws = map[core.Waker]bool{}
	}
	g.ws[cx.Waker()] = true
	return core.Unit{}, false
}

// Drop counts the drop; the dropped waiter's waker stays registered, and a
// spurious wake is harmless.
func (g *gate) Drop() {
	g.mu.Lock()
	g.dropped++
	g.mu.Unlock()
}

func (g *gate) Open() {
	g.mu.Lock()
	g.open = true
	ws := g.ws
	g.ws = nil
	g.mu.Unlock()
	for w := range ws {
		w.Wake()
	}
}

func (g *gate) Drops() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dropped
}

// waiters reports how many tasks have polled the gate and wait on it.
func (g *gate) waiters() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.ws)
}

func (g *gate) waiting() bool { return g.waiters() > 0 }

// runE runs a body that reports a failed check as its error, and returns
// that error or the runtime's.
func runE(t testing.TB, r *rt.Runtime, body func(c *co.Ctx) error) error {
	t.Helper()
	v, err := run(t, r, body)
	if err != nil {
		return err
	}
	return v
}
