package workstealing_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"

	"github.com/weftrt/weft/conformance"
	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/workstealing"
)

// fakeDriver is a driver without I/O: Park sleeps until Unpark or the
// timeout, and it records how many goroutines are inside Park at once.
type fakeDriver struct {
	wake                   chan struct{}
	inPark, maxInPark      atomic.Int32
	sleeps, polls, unparks atomic.Int64
	closes                 atomic.Int32
}

func newFakeDriver() *fakeDriver { return &fakeDriver{wake: make(chan struct{}, 1)} }

var errNoIO = errors.New("fake driver: no I/O")

func (d *fakeDriver) Park(timeout time.Duration) error {
	n := d.inPark.Add(1)
	defer d.inPark.Add(-1)
	for {
		m := d.maxInPark.Load()
		if n <= m || d.maxInPark.CompareAndSwap(m, n) {
			break
		}
	}
	switch {
	case timeout == 0:
		d.polls.Add(1)
		select {
		case <-d.wake:
		default:
		}
	case timeout < 0:
		d.sleeps.Add(1)
		<-d.wake
	default:
		d.sleeps.Add(1)
		t := time.NewTimer(timeout)
		select {
		case <-d.wake:
		case <-t.C:
		}
		t.Stop()
	}
	return nil
}

func (d *fakeDriver) Unpark() {
	d.unparks.Add(1)
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

func (d *fakeDriver) Close() error { d.closes.Add(1); return nil }

func (d *fakeDriver) Listen(string, string, core.SocketOptions) (core.Handle, core.Addr, error) {
	return 0, core.Addr{}, errNoIO
}
func (d *fakeDriver) Accept(core.Handle) core.Future[core.Result[core.Accepted]] { return nil }
func (d *fakeDriver) Connect(string, string, core.SocketOptions) core.Future[core.Result[core.Handle]] {
	return nil
}
func (d *fakeDriver) Read(core.Handle, []byte) core.Future[core.Result[int]]  { return nil }
func (d *fakeDriver) Write(core.Handle, []byte) core.Future[core.Result[int]] { return nil }
func (d *fakeDriver) Shutdown(core.Handle, core.ShutdownHow) error            { return errNoIO }
func (d *fakeDriver) SetOption(core.Handle, core.SocketOption, int) error     { return errNoIO }
func (d *fakeDriver) LocalAddr(core.Handle) (core.Addr, error)                { return core.Addr{}, errNoIO }
func (d *fakeDriver) PeerAddr(core.Handle) (core.Addr, error)                 { return core.Addr{}, errNoIO }
func (d *fakeDriver) CloseHandle(core.Handle) error                           { return errNoIO }

// withDriver builds schedulers of n workers on a fresh fake driver, which
// it hands to record.
func withDriver(n int, record func(*fakeDriver)) conformance.SchedulerFactory {
	return func(p core.SchedulerParams) (core.Scheduler, error) {
		d := newFakeDriver()
		if record != nil {
			record(d)
		}
		p.NewDriver = func() (core.Driver, error) { return d, nil }
		cfg := workstealing.DefaultConfig()
		cfg.Workers = n
		return workstealing.New(cfg, p)
	}
}

// TestConformanceWithADriver runs the suite with workers that park on a
// driver: one sleeps in it, the others on their own parkers, and a wake
// for the one in the driver goes through Driver.Unpark.
func TestConformanceWithADriver(t *testing.T) {
	conformance.Scheduler(t, withDriver(2, nil))
}

func TestOnlyOneWorkerAtATimeWaitsOnTheDriver(t *testing.T) {
	var d *fakeDriver
	f := withDriver(4, func(x *fakeDriver) { d = x })
	conformance.Scheduler(t, func(p core.SchedulerParams) (core.Scheduler, error) {
		return f(p)
	})
	// The last runtime the suite built: its driver saw sleepers, never
	// two at once, and was closed exactly once.
	assert.Positive(t, d.sleeps.Load()+d.polls.Load())
	assert.LessOrEqual(t, d.maxInPark.Load(), int32(1), "two workers inside Driver.Park at once")
	assert.EqualValues(t, 1, d.closes.Load(), "the scheduler closes the driver it created, once")
}

func TestShutdownClosesTheDriver(t *testing.T) {
	var d *fakeDriver
	r, _ := newRuntimeWith(t, withDriver(2, func(x *fakeDriver) { d = x }))
	blockOn(t, r, core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) { return core.Unit{}, true })))
	assert.Zero(t, d.closes.Load())
	r.ShutdownBackground()
	assert.EqualValues(t, 1, d.closes.Load())
	assert.LessOrEqual(t, d.maxInPark.Load(), int32(1))
}
