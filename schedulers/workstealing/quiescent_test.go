package workstealing_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// quiescentDriver is a fakeDriver that implements core.QuiescentDriver.
// Its only I/O is fakeIO: an operation that registers with the driver and
// completes when a Park delivers it, as a readiness event would. Nothing
// else completes it, so a runtime whose driver holder sleeps off the
// driver while an operation is registered never finishes that operation.
type quiescentDriver struct {
	*fakeDriver
	active atomic.Int64
	hook   atomic.Pointer[func()]

	mu         sync.Mutex
	registered []*fakeIO
	deliveries atomic.Int64
}

func newQuiescentDriver() *quiescentDriver {
	return &quiescentDriver{fakeDriver: newFakeDriver()}
}

func (d *quiescentDriver) Quiescent() bool { return d.active.Load() == 0 }

func (d *quiescentDriver) OnActive(fn func()) { d.hook.Store(&fn) }

// register adds op; the first registration after none runs the hook,
// after the count is visible, as core.QuiescentDriver requires.
func (d *quiescentDriver) register(op *fakeIO) {
	d.mu.Lock()
	d.registered = append(d.registered, op)
	d.mu.Unlock()
	if d.active.Add(1) == 1 {
		if fn := d.hook.Load(); fn != nil {
			(*fn)()
		}
	}
}

// Park delivers every registered operation; with none, it sleeps as the
// fakeDriver does.
func (d *quiescentDriver) Park(timeout time.Duration) error {
	d.mu.Lock()
	ops := d.registered
	d.registered = nil
	d.mu.Unlock()
	if len(ops) == 0 {
		return d.fakeDriver.Park(timeout)
	}
	for _, op := range ops {
		d.deliveries.Add(1)
		op.done.Store(true)
		d.active.Add(-1)
		op.waker.Wake()
	}
	return nil
}

var _ core.QuiescentDriver = (*quiescentDriver)(nil)

// fakeIO registers with the driver on its first poll and is ready once
// the driver delivered it.
type fakeIO struct {
	d     *quiescentDriver
	waker core.Waker
	done  atomic.Bool
}

func (o *fakeIO) Poll(cx *core.Context) (core.Unit, bool) {
	if o.waker == nil {
		o.waker = cx.Waker()
		o.d.register(o)
		return core.Unit{}, false
	}
	return core.Unit{}, o.done.Load()
}

func withQuiescentDriver(n int, d *quiescentDriver) func(core.SchedulerParams) (core.Scheduler, error) {
	return func(p core.SchedulerParams) (core.Scheduler, error) {
		p.NewDriver = func() (core.Driver, error) { return d, nil }
		cfg := workstealing.DefaultConfig()
		cfg.Workers = n
		return workstealing.New(cfg, p)
	}
}

// A runtime that does no I/O never touches a quiescent driver: workers
// wake one another through their channels, with no Park, poll or Unpark.
func TestAQuiescentDriverIsNeverParkedOrUnparked(t *testing.T) {
	d := newQuiescentDriver()
	r, _ := newRuntimeWith(t, withQuiescentDriver(2, d))
	c := &countdown{}
	const tasks = 2000
	c.reset(tasks)
	blockOn(t, r, rootThen(func(cx *core.Context) {
		for range tasks {
			spawn(cx, tick{c})
		}
	}, c))
	// Cross-worker wake-ups: each round wakes a task from outside the
	// runtime while the workers are idle.
	for range 200 {
		c.reset(1)
		blockOn(t, r, rootThen(func(cx *core.Context) { spawn(cx, tick{c}) }, c))
	}
	assert.Zero(t, d.sleeps.Load(), "Park calls that slept")
	assert.Zero(t, d.polls.Load(), "Park calls that polled")
	assert.Zero(t, d.unparks.Load(), "Unpark calls")
}

// The activation handshake: I/O registered while the slot's holder is parked
// on its channel moves the holder into the driver. Each round waits until
// every worker is parked with the holder off the (quiescent) driver, then
// spawns one task from outside the runtime; the worker it wakes is most
// often not the holder, and that worker registers an operation and parks
// beside the parked holder. Only a Park delivers the operation, so
// without the hook the round never ends.
func TestRegisteringIOWakesAHolderParkedOffTheDriver(t *testing.T) {
	d := newQuiescentDriver()
	r, s := newRuntimeWith(t, withQuiescentDriver(2, d))
	const rounds = 300
	var staged int
	for i := range rounds {
		// Bounded: a worker parks within microseconds of running out of
		// work. Giving up only skips the set-up, not the check.
		for range 20000 {
			if s.HolderParkedOffDriver() {
				staged++
				break
			}
			time.Sleep(10 * time.Microsecond)
		}
		c := &countdown{}
		c.reset(1)
		rt.Spawn(r.Handle(), ioThenTick(d, c))
		blockOn(t, r, core.Future[core.Unit](c))
		require.EqualValues(t, i+1, d.deliveries.Load())
	}
	t.Logf("%d of %d rounds started with the holder parked off the driver", staged, rounds)
	assert.Positive(t, staged)
}

// ioThenTick is a task that waits for one fakeIO, then counts down.
func ioThenTick(d *quiescentDriver, c *countdown) core.Future[core.Unit] {
	op := &fakeIO{d: d}
	return core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if _, ok := op.Poll(cx); !ok {
			return core.Unit{}, false
		}
		c.done()
		return core.Unit{}, true
	})
}
