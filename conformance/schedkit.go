package conformance

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// SchedulerFactory builds the scheduler under test from the parameters the
// runtime hands it.
type SchedulerFactory func(core.SchedulerParams) (core.Scheduler, error)

// hangLimit is how long a behaviour may take before the watchdog declares a
// hang. It only bounds broken implementations; passing runs take
// milliseconds. CONFORMANCE_HANG_LIMIT (a Go duration) overrides it, which
// the suite's own tests use to fail a broken scheduler quickly.
var hangLimit = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("CONFORMANCE_HANG_LIMIT")); err == nil && d > 0 {
		return d
	}
	return 30 * time.Second
}()

// newRuntime builds a runtime around the scheduler under test, with the
// environment ignored so the suite is reproducible.
func newRuntime(t testing.TB, f SchedulerFactory, configure ...func(*rt.Builder)) *rt.Runtime {
	t.Helper()
	b := rt.NewBuilder().IgnoreEnv().SchedulerFactory(f)
	for _, c := range configure {
		c(b)
	}
	r, err := b.Build()
	if err != nil {
		t.Fatalf("building runtime: %v", err)
	}
	t.Cleanup(func() { r.ShutdownBackground() })
	return r
}

// blockOn runs rt.BlockOn under a watchdog.
func blockOn[T any](t testing.TB, r *rt.Runtime, f core.Future[T]) (T, error) {
	t.Helper()
	return blockOnWatching(t, r, f, nil)
}

// blockOnWatching is blockOn with a description of the behaviour's own
// state (saw may be nil), which the watchdog's message includes.
func blockOnWatching[T any](t testing.TB, r *rt.Runtime, f core.Future[T], saw func() string) (T, error) {
	t.Helper()
	type out struct {
		v   T
		err error
	}
	ch := make(chan out, 1)
	go func() {
		v, err := rt.BlockOn(r, f)
		ch <- out{v, err}
	}()
	select {
	case o := <-ch:
		return o.v, o.err
	case <-time.After(hangLimit):
		what := watchdogReport(r)
		if saw != nil {
			what = saw() + "; " + what
		}
		r.ShutdownBackground()
		t.Fatalf("BlockOn did not return within %v. The watchdog saw: %s", hangLimit, what)
		panic("unreachable")
	}
}

// watchdogReport tells a stalled scheduler from a starved task: it samples
// the workers' poll counters (when the scheduler reports them) twice, a
// short while apart. Workers that keep polling are busy with other tasks
// (the waiting task is starved or its wake went to a queue nobody takes
// from); workers that do not poll lost a wake or are stuck in a poll.
func watchdogReport(r *rt.Runtime) string {
	ms, ok := r.Scheduler().(core.MetricsSource)
	if !ok {
		return "the scheduler reports no metrics; a lost wake or a stalled worker"
	}
	sum := func() (polls, parks uint64, depth int) {
		for _, m := range ms.Metrics() {
			polls += m.Polls
			parks += m.Parks
			depth += m.QueueDepth
		}
		return
	}
	p0, k0, _ := sum()
	time.Sleep(200 * time.Millisecond)
	p1, k1, depth := sum()
	state := fmt.Sprintf("workers polled %d tasks and parked %d times in 200ms (%d polls in all, %d tasks in run queues)", p1-p0, k1-k0, p1, depth)
	if p1 == p0 {
		return state + ": nothing runs, so a wake was lost or a worker is stuck inside a poll"
	}
	return state + ": the workers are busy, so the waiting task is starved or its wake went where no worker looks"
}

// waitFor blocks a plain goroutine until the future is ready, under the
// watchdog.
func waitFor[T any](t testing.TB, f core.Future[T]) T {
	t.Helper()
	wake := make(chan struct{}, 1)
	cx := core.NewContext(core.WakerFunc(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}))
	deadline := time.After(hangLimit)
	for {
		if v, ok := f.Poll(cx); ok {
			return v
		}
		select {
		case <-wake:
		case <-deadline:
			t.Fatalf("future not ready within %v: a wake was lost", hangLimit)
		}
	}
}

// probe is an instrumented future. It is pending until released, counts its
// polls and drops, and records protocol violations: a poll after ready, a
// poll after drop, two polls at once, a drop after ready.
type probe struct {
	released   atomic.Bool
	value      int
	waker      core.AtomicWaker
	polls      atomic.Int64
	drops      atomic.Int64
	inPoll     atomic.Bool
	done       atomic.Bool
	violations atomic.Int64
	// onPoll runs inside every poll, before the readiness check.
	onPoll func(cx *core.Context)
}

func newProbe(v int) *probe { return &probe{value: v} }

func (p *probe) Poll(cx *core.Context) (int, bool) {
	if !p.inPoll.CompareAndSwap(false, true) {
		p.violations.Add(1)
	}
	defer p.inPoll.Store(false)
	p.polls.Add(1)
	if p.done.Load() || p.drops.Load() > 0 {
		p.violations.Add(1)
	}
	if p.onPoll != nil {
		p.onPoll(cx)
	}
	if p.released.Load() {
		p.done.Store(true)
		return p.value, true
	}
	p.waker.Register(cx.Waker())
	// Re-check after registering, so a release between the check and the
	// registration is not lost.
	if p.released.Load() {
		p.waker.Take()
		p.done.Store(true)
		return p.value, true
	}
	return 0, false
}

func (p *probe) Drop() {
	if p.done.Load() {
		p.violations.Add(1)
	}
	p.drops.Add(1)
	p.waker.Take()
}

// release makes the probe ready and wakes its task.
func (p *probe) release() {
	p.released.Store(true)
	p.waker.Wake()
}

func (p *probe) check(t testing.TB) {
	t.Helper()
	if n := p.violations.Load(); n != 0 {
		t.Errorf("future contract violated %d time(s): polled after ready or drop, polled concurrently, or dropped after ready", n)
	}
}

// steps builds a root future from a sequence of poll functions: each step
// runs until it reports done, then the next starts. The last step's value
// is the result.
type steps[T any] struct {
	fns []func(cx *core.Context) (T, bool)
	i   int
}

func seq[T any](fns ...func(cx *core.Context) (T, bool)) *steps[T] { return &steps[T]{fns: fns} }

func (s *steps[T]) Poll(cx *core.Context) (T, bool) {
	for {
		v, ok := s.fns[s.i](cx)
		if !ok {
			return v, false
		}
		s.i++
		if s.i == len(s.fns) {
			return v, true
		}
	}
}

// joinAll is a minimal join over handles used by the suite itself, so that
// it does not depend on the future package it may be testing.
type joinAll[T any] struct {
	hs   []*core.JoinHandle[T]
	out  []core.Result[T]
	done []bool
	left int
}

func awaitAll[T any](hs []*core.JoinHandle[T]) *joinAll[T] {
	return &joinAll[T]{hs: hs, out: make([]core.Result[T], len(hs)), done: make([]bool, len(hs)), left: len(hs)}
}

func (j *joinAll[T]) Poll(cx *core.Context) ([]core.Result[T], bool) {
	for i, h := range j.hs {
		if j.done[i] {
			continue
		}
		if r, ok := h.Poll(cx); ok {
			j.out[i] = r
			j.done[i] = true
			j.left--
		}
	}
	return j.out, j.left == 0
}

// fn is shorthand for a PollFunc.
func fn[T any](f func(cx *core.Context) (T, bool)) core.Future[T] { return core.PollFunc[T](f) }

// ready is a future that is immediately ready with v.
func ready[T any](v T) core.Future[T] {
	return fn(func(*core.Context) (T, bool) { return v, true })
}

// counter counts wake-ups of a waker from many goroutines.
type counter struct {
	mu sync.Mutex
	n  int
}

func (c *counter) inc() { c.mu.Lock(); c.n++; c.mu.Unlock() }
func (c *counter) get() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}
