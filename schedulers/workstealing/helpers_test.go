package workstealing_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// hangLimit bounds a test that would hang on a broken scheduler. Passing
// runs take milliseconds; the limit only turns a hang into a failure.
const hangLimit = 60 * time.Second

// newRuntime builds a runtime on the workstealing scheduler with n workers
// and the configuration adjusted by tweak, and returns it with its
// scheduler. The runtime is closed when the test ends.
func newRuntime(t testing.TB, n int, tweak ...func(*workstealing.Config)) (*rt.Runtime, *workstealing.Scheduler) {
	t.Helper()
	var s *workstealing.Scheduler
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		cfg := workstealing.DefaultConfig()
		cfg.Workers = n
		for _, f := range tweak {
			f(&cfg)
		}
		var err error
		s, err = workstealing.New(cfg, p)
		return s, err
	}).Build()
	require.NoError(t, err)
	t.Cleanup(r.ShutdownBackground)
	return r, s
}

// newRuntimeWith builds a runtime around the scheduler f builds.
func newRuntimeWith(t testing.TB, f func(core.SchedulerParams) (core.Scheduler, error)) (*rt.Runtime, *workstealing.Scheduler) {
	t.Helper()
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(f).Build()
	require.NoError(t, err)
	t.Cleanup(r.ShutdownBackground)
	return r, r.Scheduler().(*workstealing.Scheduler)
}

// blockOn runs rt.BlockOn under a watchdog.
func blockOn[T any](t testing.TB, r *rt.Runtime, f core.Future[T]) T {
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
		require.NoError(t, o.err)
		return o.v
	case <-time.After(hangLimit):
		r.ShutdownBackground()
		t.Fatalf("BlockOn did not return within %v", hangLimit)
		panic("unreachable")
	}
}

// trace records the order in which tasks first run.
type trace struct {
	mu    sync.Mutex
	names []string
}

func (tr *trace) add(name string) {
	tr.mu.Lock()
	tr.names = append(tr.names, name)
	tr.mu.Unlock()
}

func (tr *trace) get() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.names...)
}

// step is a task that records its name, runs body once, and completes.
func step(tr *trace, name string, body func(cx *core.Context)) core.Future[core.Unit] {
	return core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		tr.add(name)
		if body != nil {
			body(cx)
		}
		return core.Unit{}, true
	})
}

// rootThen is a root task that runs first once, then waits for wg's
// countdown to reach zero.
func rootThen(first func(cx *core.Context), c *countdown) core.Future[core.Unit] {
	ran := false
	return core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if !ran {
			ran = true
			first(cx)
		}
		return c.Poll(cx)
	})
}

func spawn(cx *core.Context, f core.Future[core.Unit]) { core.Spawn(cx, f) }

// countdown is the shared end of a workload: tasks count down, and the
// one that reaches zero wakes the waiter.
type countdown struct {
	left  atomic.Int64
	waker core.AtomicWaker
}

func (c *countdown) reset(n int) { c.left.Store(int64(n)) }

func (c *countdown) done() {
	if c.left.Add(-1) == 0 {
		c.waker.Wake()
	}
}

// Poll is ready once the count reached zero.
func (c *countdown) Poll(cx *core.Context) (core.Unit, bool) {
	if c.left.Load() == 0 {
		return core.Unit{}, true
	}
	c.waker.Register(cx.Waker())
	return core.Unit{}, c.left.Load() == 0
}

// tick is a task that counts down once.
type tick struct{ c *countdown }

func (t tick) Poll(*core.Context) (core.Unit, bool) { t.c.done(); return core.Unit{}, true }
