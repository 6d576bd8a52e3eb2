package percore

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

// hangLimit bounds a test that would hang on a broken scheduler; passing
// runs take milliseconds.
const hangLimit = 30 * time.Second

// fakeDriver is a driver without I/O: Park sleeps on a channel, and fails
// once the test arms it. Operations are unsupported.
type fakeDriver struct {
	index   int
	wake    chan struct{}
	failure atomic.Pointer[error]
	closed  atomic.Bool
	parks   atomic.Int64
}

var errNoIO = errors.New("fake driver: no I/O")

func newFakeDriver(i int) *fakeDriver {
	return &fakeDriver{index: i, wake: make(chan struct{}, 1)}
}

func (d *fakeDriver) Park(timeout time.Duration) error {
	d.parks.Add(1)
	if err := d.failure.Load(); err != nil {
		return *err
	}
	switch {
	case timeout == 0:
		select {
		case <-d.wake:
		default:
		}
	case timeout < 0:
		<-d.wake
	default:
		tm := time.NewTimer(timeout)
		select {
		case <-d.wake:
		case <-tm.C:
		}
		tm.Stop()
	}
	if err := d.failure.Load(); err != nil {
		return *err
	}
	return nil
}

func (d *fakeDriver) Unpark() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// fail makes the next Park return err and ends the current one.
func (d *fakeDriver) fail(err error) {
	d.failure.Store(&err)
	d.Unpark()
}

func (d *fakeDriver) Close() error { d.closed.Store(true); return nil }

func (d *fakeDriver) Listen(string, string, core.SocketOptions) (core.Handle, core.Addr, error) {
	return 0, core.Addr{}, errNoIO
}
func (d *fakeDriver) Accept(core.Handle) core.Future[core.Result[core.Accepted]] {
	return failed[core.Accepted]()
}
func (d *fakeDriver) Connect(string, string, core.SocketOptions) core.Future[core.Result[core.Handle]] {
	return failed[core.Handle]()
}
func (d *fakeDriver) Read(core.Handle, []byte) core.Future[core.Result[int]]  { return failed[int]() }
func (d *fakeDriver) Write(core.Handle, []byte) core.Future[core.Result[int]] { return failed[int]() }
func (d *fakeDriver) Shutdown(core.Handle, core.ShutdownHow) error            { return errNoIO }
func (d *fakeDriver) SetOption(core.Handle, core.SocketOption, int) error     { return errNoIO }
func (d *fakeDriver) LocalAddr(core.Handle) (core.Addr, error)                { return core.Addr{}, errNoIO }
func (d *fakeDriver) PeerAddr(core.Handle) (core.Addr, error)                 { return core.Addr{}, errNoIO }
func (d *fakeDriver) CloseHandle(core.Handle) error                           { return errNoIO }

func failed[T any]() core.Future[core.Result[T]] {
	return core.PollFunc[core.Result[T]](func(*core.Context) (core.Result[T], bool) {
		return core.Result[T]{Err: errNoIO}, true
	})
}

// fakeDrivers hands out fake drivers in worker order and remembers them.
type fakeDrivers struct {
	mu      sync.Mutex
	drivers []*fakeDriver
	// failAt makes the failAt-th call (from 1) fail; 0 never.
	failAt int
	// before runs at the start of every call, with the call's number.
	before func(call int)
	// wrap, if set, is what the pool gets instead of each fake driver.
	wrap func(*fakeDriver) core.Driver
}

func (f *fakeDrivers) newDriver() (core.Driver, error) {
	f.mu.Lock()
	call := len(f.drivers) + 1
	f.mu.Unlock()
	if f.before != nil {
		f.before(call)
	}
	if call == f.failAt {
		return nil, fmt.Errorf("no driver for call %d", call)
	}
	d := newFakeDriver(call - 1)
	f.mu.Lock()
	f.drivers = append(f.drivers, d)
	f.mu.Unlock()
	if f.wrap != nil {
		return f.wrap(d), nil
	}
	return d, nil
}

func (f *fakeDrivers) all() []*fakeDriver {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*fakeDriver(nil), f.drivers...)
}

// runtimeWith builds a runtime on an n-worker pool whose drivers come from
// f.
func runtimeWith(t *testing.T, n int, f *fakeDrivers, tweak ...func(*Config)) (*rt.Runtime, *Scheduler) {
	t.Helper()
	var s *Scheduler
	r, err := rt.NewBuilder().IgnoreEnv().SchedulerFactory(func(p core.SchedulerParams) (core.Scheduler, error) {
		cfg := DefaultConfig()
		cfg.Workers = n
		for _, tw := range tweak {
			tw(&cfg)
		}
		if f != nil {
			p.NewDriver = f.newDriver
		}
		var err error
		s, err = New(cfg, p)
		return s, err
	}).Build()
	require.NoError(t, err)
	t.Cleanup(r.ShutdownBackground)
	return r, s
}

// blockOn runs rt.BlockOn under a watchdog and returns its result.
func blockOn[T any](t *testing.T, r *rt.Runtime, f core.Future[T]) (T, error) {
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
		r.ShutdownBackground()
		t.Fatalf("BlockOn did not return within %v", hangLimit)
		panic("unreachable")
	}
}

// gate is a future pending until opened.
type gate struct {
	open  atomic.Bool
	waker core.AtomicWaker
	polls atomic.Int64
	drop  func()
}

func (g *gate) Poll(cx *core.Context) (core.Unit, bool) {
	g.polls.Add(1)
	if g.open.Load() {
		return core.Unit{}, true
	}
	g.waker.Register(cx.Waker())
	return core.Unit{}, g.open.Load()
}

func (g *gate) Drop() {
	if g.drop != nil {
		g.drop()
	}
}

func (g *gate) release() { g.open.Store(true); g.waker.Wake() }

func TestWorkersStartOneAtATime(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	calls := make(chan int, 8)
	release := make(chan struct{})
	f := &fakeDrivers{before: func(call int) {
		calls <- call
		<-release
	}}
	built := make(chan error, 1)
	go func() {
		cfg := DefaultConfig()
		cfg.Workers = 4
		s, err := New(cfg, core.SchedulerParams{Tasks: core.NewTaskSet(nil), NewDriver: f.newDriver})
		if err == nil {
			s.Shutdown()
		}
		built <- err
	}()
	for want := 1; want <= 4; want++ {
		assert.Equal(t, want, <-calls)
		// The next worker starts only once this one has its driver and
		// reported ready.
		select {
		case c := <-calls:
			t.Fatalf("driver %d created while worker %d was still starting", c, want-1)
		case err := <-built:
			t.Fatalf("New returned (%v) before worker %d started", err, want-1)
		case <-time.After(blocked):
		}
		release <- struct{}{}
	}
	require.NoError(t, <-built)
	for _, d := range f.all() {
		assert.True(t, d.closed.Load())
	}
	goleak.VerifyNone(t, ignore)
}

func TestAStartupFailureStopsTheStartedWorkersAndFailsNew(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	var started, stopped atomic.Int64
	f := &fakeDrivers{failAt: 3}
	cfg := DefaultConfig()
	cfg.Workers = 4
	_, err := New(cfg, core.SchedulerParams{
		Tasks:     core.NewTaskSet(nil),
		NewDriver: f.newDriver,
		Hooks: core.WorkerHooks{
			AfterStart: func() { started.Add(1) },
			BeforeStop: func() { stopped.Add(1) },
		},
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "driver of worker 2")
	assert.Contains(t, err.Error(), "no driver for call 3")
	drivers := f.all()
	require.Len(t, drivers, 2, "worker 3 never started")
	for _, d := range drivers {
		assert.True(t, d.closed.Load(), "the driver of started worker %d is closed", d.index)
	}
	assert.Equal(t, started.Load(), stopped.Load())
	goleak.VerifyNone(t, ignore)
}

func TestTheFirstWorkerFailureReachesTheRoot(t *testing.T) {
	for _, failing := range []int{0, 1} {
		t.Run(fmt.Sprintf("worker=%d", failing), func(t *testing.T) {
			ignore := goleak.IgnoreCurrent()
			f := &fakeDrivers{}
			r, s := runtimeWith(t, 2, f)
			boom := errors.New("ring broke")
			other := &gate{}
			rt.Spawn(r.Handle(), core.Future[core.Unit](other))
			_, err := blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
				// The root fails a driver once it runs, then waits
				// forever: only the failure can end it.
				if d := f.all()[failing]; d.failure.Load() == nil {
					d.fail(boom)
				}
				return core.Unit{}, false
			}))
			require.Error(t, err)
			var we *WorkerError
			require.True(t, errors.As(err, &we), "got %v", err)
			assert.Equal(t, failing, we.Worker)
			assert.ErrorIs(t, err, boom)
			assert.True(t, core.IsCancelled(err))
			assert.ErrorIs(t, s.Failure(), boom)

			// A new BlockOn takes the first failure at once, on the live
			// worker; and once a later failure has left no live worker, a
			// BlockOn still returns with the first failure.
			_, err = blockOn(t, r, core.PollFunc[int](func(*core.Context) (int, bool) { return 0, false }))
			assert.ErrorIs(t, err, boom)
			f.all()[1-failing].fail(errors.New("second"))
			_, err = blockOn(t, r, core.PollFunc[int](func(*core.Context) (int, bool) { return 0, false }))
			assert.ErrorIs(t, err, boom)
			require.NoError(t, r.Close())
			for _, d := range f.all() {
				assert.True(t, d.closed.Load())
			}
			goleak.VerifyNone(t, ignore)
		})
	}
}

func TestAFailedWorkersTasksMoveToTheOthers(t *testing.T) {
	f := &fakeDrivers{}
	r, s := runtimeWith(t, 2, f)
	boom := errors.New("ring broke")
	// The root fails worker 1's driver, waits for the failure to be
	// recorded, then spawns tasks and wakes them from outside: every one
	// runs, on worker 0.
	const n = 50
	var ran atomic.Int64
	var on1 atomic.Int64
	_, err := blockOn(t, r, core.PollFunc[int](func(cx *core.Context) (int, bool) {
		if s.Failure() == nil {
			f.all()[1].fail(boom)
			cx.Defer(cx.Waker())
			return 0, false
		}
		return 0, true
	}))
	// The root may have been delivered the failure, or have finished
	// first.
	if err != nil {
		require.ErrorIs(t, err, boom)
	}
	var hs []*core.JoinHandle[core.Unit]
	for i := 0; i < n; i++ {
		hs = append(hs, rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
			ran.Add(1)
			if cx.Worker().(*worker).index == 1 {
				on1.Add(1)
			}
			return core.Unit{}, true
		}))))
	}
	for _, h := range hs {
		cx := core.NewContext(nil)
		deadline := time.Now().Add(hangLimit)
		for {
			if _, ok := h.Poll(cx); ok {
				break
			}
			require.True(t, time.Now().Before(deadline), "a task stayed stranded")
			time.Sleep(time.Millisecond)
		}
	}
	assert.EqualValues(t, n, ran.Load())
	assert.EqualValues(t, 0, on1.Load(), "the failed worker polls nothing")
}

func TestNoDriverClosesBeforeEveryWorkerHasDrained(t *testing.T) {
	for _, failFirst := range []bool{false, true} {
		t.Run(fmt.Sprintf("failed=%v", failFirst), func(t *testing.T) {
			f := &fakeDrivers{}
			r, _ := runtimeWith(t, 4, f)
			var drops, early atomic.Int64
			check := func() {
				drops.Add(1)
				for _, d := range f.all() {
					if d.closed.Load() {
						early.Add(1)
					}
				}
			}
			// Tasks spread over the workers (spawned from a busy root, so
			// they go through the global queue), each pending with a Drop
			// that would use every worker's driver.
			const n = 400
			_, err := blockOn(t, r, core.PollFunc[int](func(cx *core.Context) (int, bool) {
				for i := 0; i < n; i++ {
					core.Spawn(cx, core.Future[core.Unit](&gate{drop: check}))
				}
				return 0, true
			}))
			require.NoError(t, err)
			if failFirst {
				f.all()[2].fail(errors.New("ring broke"))
			}
			require.NoError(t, r.Close())
			assert.EqualValues(t, n, drops.Load(), "every pending task was dropped")
			assert.EqualValues(t, 0, early.Load(), "no driver closed while a task was being dropped")
			for _, d := range f.all() {
				assert.True(t, d.closed.Load())
			}
		})
	}
}

func TestMoreThan64WorkersIsAConfigErrorNamingTheKey(t *testing.T) {
	for _, n := range []int{0, 65} {
		_, err := rt.NewBuilder().IgnoreEnv().Scheduler(Name).Workers(n).Build()
		require.Error(t, err)
		assert.Contains(t, err.Error(), fmt.Sprintf(`weft: config key "scheduler.workers": must be between 1 and 64, got %d`, n))
	}
	r, err := rt.NewBuilder().IgnoreEnv().Scheduler(Name).Workers(64).Build()
	require.NoError(t, err)
	require.NoError(t, r.Close())
}

// TestARemoteWakeRunsTheTaskOnItsOwner checks the affinity rule: a task
// woken from outside the pool goes to the mailbox of the worker that last
// polled it, so with one runnable task at a time (nothing to steal) it
// runs on the same worker every time.
func TestARemoteWakeRunsTheTaskOnItsOwner(t *testing.T) {
	r, _ := runtimeWith(t, 4, nil)
	const rounds = 200
	var mu sync.Mutex
	var workers []int
	polled := make(chan struct{}, 1)
	var waker core.AtomicWaker
	h := rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		mu.Lock()
		workers = append(workers, cx.Worker().(*worker).index)
		n := len(workers)
		mu.Unlock()
		if n > rounds {
			return core.Unit{}, true
		}
		waker.Register(cx.Waker())
		polled <- struct{}{}
		return core.Unit{}, false
	})))
	for i := 0; i < rounds; i++ {
		select {
		case <-polled:
		case <-time.After(hangLimit):
			t.Fatal("the task was not polled after a wake")
		}
		waker.Wake()
	}
	res, err := blockOn(t, r, core.Future[core.Result[core.Unit]](h))
	require.NoError(t, err)
	require.NoError(t, res.Err)
	mu.Lock()
	defer mu.Unlock()
	for i, w := range workers {
		require.Equal(t, workers[0], w, "poll %d ran on worker %d, the owner is %d (%v)", i, w, workers[0], workers)
	}
}

// TestAWakeFromATaskMovesTheWokenTaskToTheWaker checks the other half of
// the rule: a task woken from inside a poll on worker j runs on j next.
func TestAWakeFromATaskMovesTheWokenTaskToTheWaker(t *testing.T) {
	r, _ := runtimeWith(t, 2, nil)
	var waker core.AtomicWaker
	var registered atomic.Bool
	var ranOn atomic.Int64
	ranOn.Store(-1)
	sleeper := rt.Spawn(r.Handle(), core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if registered.Load() {
			ranOn.Store(int64(cx.Worker().(*worker).index))
			return core.Unit{}, true
		}
		waker.Register(cx.Waker())
		registered.Store(true)
		return core.Unit{}, false
	})))
	wakerOn := int64(-1)
	_, err := blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if !registered.Load() {
			cx.Defer(cx.Waker())
			return core.Unit{}, false
		}
		if wakerOn < 0 {
			wakerOn = int64(cx.Worker().(*worker).index)
			if w := waker.Take(); w != nil {
				cx.Wake(w)
			}
		}
		if res, ok := sleeper.Poll(cx); ok {
			require.NoError(t, res.Err)
			return core.Unit{}, true
		}
		return core.Unit{}, false
	}))
	require.NoError(t, err)
	assert.Equal(t, wakerOn, ranOn.Load(), "the woken task ran on the waking worker")
}
