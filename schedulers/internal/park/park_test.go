package park_test

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/internal/park"
	"github.com/weftrt/weft/schedulers/internal/schedtest"
)

// hangLimit only turns a lost wake-up into a failure instead of a hang;
// a correct parker never comes near it.
const hangLimit = 10 * time.Second

// fakeDriver is a driver without I/O: Park waits on a channel for Unpark.
// The Parker calls nothing but Park and Unpark (and the quiescence
// methods of schedtest.QuiescentDriver, when wrapped in one), so the
// embedded interface is left nil.
type fakeDriver struct {
	core.Driver
	wake    chan struct{}
	parks   atomic.Int64
	unparks atomic.Int64
	err     error
}

func newFakeDriver() *fakeDriver { return &fakeDriver{wake: make(chan struct{}, 1)} }

func (d *fakeDriver) Park(timeout time.Duration) error {
	d.parks.Add(1)
	if timeout < 0 {
		<-d.wake
	} else if timeout > 0 {
		select {
		case <-d.wake:
		case <-time.After(timeout):
		}
	}
	return d.err
}

func (d *fakeDriver) Unpark() {
	d.unparks.Add(1)
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// newQuiescentParker returns a parker on a quiescent driver whose
// activation hook reaches it, as percore wires its workers.
func newQuiescentParker() (*park.Parker, *fakeDriver, *schedtest.QuiescentDriver) {
	d := newFakeDriver()
	q := &schedtest.QuiescentDriver{Driver: d}
	p := park.New()
	p.SetDriver(q)
	q.OnActive(p.Activate)
	return p, d, q
}

// parkAsync runs p.Park(-1) on a goroutine and returns a channel closed
// when it returns.
func parkAsync(p *park.Parker) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Park(-1)
	}()
	return done
}

func waitState(t *testing.T, p *park.Parker, want park.State) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for p.State() != want {
		if time.Now().After(deadline) {
			t.Fatalf("the parker never reached state %d", want)
		}
		time.Sleep(50 * time.Microsecond)
	}
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(hangLimit):
		t.Fatal(what)
	}
}

func TestAnUnparkBeforeTheParkIsNotLost(t *testing.T) {
	p := park.New()
	if p.Unpark() {
		t.Fatal("Unpark reports a sleeper, and nobody was asleep")
	}
	p.Wait() // returns at once: the notification was pending
	if p.State() != park.Empty {
		t.Fatalf("state %d after the park, want Empty", p.State())
	}
	p.Unpark()
	if err := p.Park(-1); err != nil { // returns at once too
		t.Fatal(err)
	}
}

func TestOneNotificationIsPendingHoweverManyUnparks(t *testing.T) {
	p := park.New()
	p.Unpark()
	p.Unpark()
	if !p.Consume() || p.Consume() {
		t.Fatal("two unparks of an awake parker must leave exactly one notification")
	}
}

func TestAnUnparkWakesAWaitingWorker(t *testing.T) {
	p := park.New()
	done := make(chan struct{})
	go func() { p.Wait(); close(done) }()
	waitState(t, p, park.Parked)
	if !p.Unpark() {
		t.Fatal("Unpark does not report the sleeper")
	}
	waitDone(t, done, "the unpark did not end Wait")
}

func TestAParkWithoutADriverTimesOut(t *testing.T) {
	p := park.New()
	if err := p.Park(time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if p.State() != park.Empty {
		t.Fatalf("state %d after the park, want Empty", p.State())
	}
}

func TestAParkInTheDriverReturnsItsErrorAndIsEndedByDriverUnpark(t *testing.T) {
	d := newFakeDriver() // not a core.QuiescentDriver: parks in it
	d.err = errors.New("park failed")
	p := park.New()
	p.SetDriver(d)
	var err error
	done := make(chan struct{})
	go func() { err = p.Park(-1); close(done) }()
	waitState(t, p, park.ParkedDriver)
	if !p.Unpark() {
		t.Fatal("Unpark does not report the sleeper")
	}
	waitDone(t, done, "Unpark did not end the park in the driver")
	if err != d.err {
		t.Fatalf("Park returned %v, want the driver's error", err)
	}
	if d.unparks.Load() != 1 {
		t.Fatalf("%d Driver.Unpark calls, want 1", d.unparks.Load())
	}
}

func TestAnUnparkOfAnAwakeWorkerMakesNoSystemCall(t *testing.T) {
	d := newFakeDriver()
	p := park.New()
	p.SetDriver(d)
	p.Unpark()
	p.Unpark()
	if d.unparks.Load() != 0 {
		t.Fatalf("%d Driver.Unpark calls for an awake worker", d.unparks.Load())
	}
}

func TestAWorkerParksOffAQuiescentDriverAndIsWokenWithoutIt(t *testing.T) {
	p, d, _ := newQuiescentParker()
	done := parkAsync(p)
	waitState(t, p, park.ParkedOffDriver)
	p.Unpark()
	waitDone(t, done, "the unpark did not end the park")
	if d.parks.Load() != 0 || d.unparks.Load() != 0 {
		t.Fatalf("%d Park and %d Unpark calls on a quiescent driver, want none", d.parks.Load(), d.unparks.Load())
	}
}

func TestRegisteringIOMovesAParkedWorkerIntoItsDriver(t *testing.T) {
	p, d, q := newQuiescentParker()
	done := parkAsync(p)
	waitState(t, p, park.ParkedOffDriver)
	q.Register()
	waitDone(t, done, "registering I/O left the worker parked off its driver")
	done = parkAsync(p)
	waitState(t, p, park.ParkedDriver)
	p.Unpark()
	waitDone(t, done, "the unpark did not end the park in the driver")
	if d.parks.Load() != 1 {
		t.Fatalf("%d parks in the driver, want the second park only", d.parks.Load())
	}
	if d.unparks.Load() != 1 {
		t.Fatalf("%d Driver.Unpark calls, want 1 for the park in the driver", d.unparks.Load())
	}
}

// The handshake under random interleavings: a registration racing with
// the decision to park off the driver never leaves the worker parked on
// its channel with I/O registered. Once the registration has returned,
// the park has either ended (woken by the hook, or never begun) or is in
// the driver, where an unpark ends it; a park still on its channel then
// would have missed the activation.
func TestNoActivationIsLostRacingWithAPark(t *testing.T) {
	for range 2000 {
		p, _, q := newQuiescentParker()
		registered := make(chan struct{})
		go func() {
			q.Register()
			close(registered)
		}()
		done := parkAsync(p)
		<-registered
		deadline := time.Now().Add(hangLimit)
	wait:
		for {
			select {
			case <-done:
				break wait
			default:
			}
			if p.State() == park.ParkedDriver {
				p.Unpark()
				<-done
				break
			}
			if time.Now().After(deadline) {
				t.Fatal("parked off the driver with I/O registered: the activation was lost")
			}
			time.Sleep(10 * time.Microsecond)
		}
	}
}

func TestActivateLeavesAWaitingWorkerAlone(t *testing.T) {
	p := park.New()
	done := make(chan struct{})
	go func() { p.Wait(); close(done) }()
	waitState(t, p, park.Parked)
	p.Activate()
	if p.State() != park.Parked {
		t.Fatalf("state %d after Activate, want Parked", p.State())
	}
	p.Unpark()
	waitDone(t, done, "the unpark did not end Wait")
}
