package percore

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/weftrt/weft/core"
)

// quiescentDriver is a fakeDriver that implements core.QuiescentDriver:
// register counts an I/O source, and the first after none runs the hook.
type quiescentDriver struct {
	*fakeDriver
	active  atomic.Int64
	hook    atomic.Pointer[func()]
	unparks atomic.Int64
}

func (d *quiescentDriver) Quiescent() bool    { return d.active.Load() == 0 }
func (d *quiescentDriver) OnActive(fn func()) { d.hook.Store(&fn) }
func (d *quiescentDriver) Unpark()            { d.unparks.Add(1); d.fakeDriver.Unpark() }

func (d *quiescentDriver) register() {
	if d.active.Add(1) == 1 {
		if fn := d.hook.Load(); fn != nil {
			(*fn)()
		}
	}
}

var _ core.QuiescentDriver = (*quiescentDriver)(nil)

func newQuiescentParker() (*parker, *quiescentDriver) {
	d := &quiescentDriver{fakeDriver: newFakeDriver(0)}
	p := newParker()
	p.setDriver(d)
	return p, d
}

// sleepAsync runs p.sleep(-1) on a goroutine and returns a channel closed
// when it returns.
func sleepAsync(p *parker) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.sleep(-1)
	}()
	return done
}

func waitState(t *testing.T, p *parker, want uint32) {
	t.Helper()
	deadline := time.Now().Add(hangLimit)
	for p.state.Load() != want {
		require.True(t, time.Now().Before(deadline), "the parker never reached state %d", want)
		time.Sleep(50 * time.Microsecond)
	}
}

func TestAWorkerSleepsOffAQuiescentDriverAndIsWokenWithoutIt(t *testing.T) {
	p, d := newQuiescentParker()
	done := sleepAsync(p)
	waitState(t, p, parkAsleepChan)
	p.unpark()
	<-done
	assert.Zero(t, d.parks.Load(), "Park calls on a quiescent driver")
	assert.Zero(t, d.unparks.Load(), "Unpark calls for a worker asleep off the driver")
}

func TestRegisteringIOMovesASleepingWorkerIntoItsDriver(t *testing.T) {
	p, d := newQuiescentParker()
	done := sleepAsync(p)
	waitState(t, p, parkAsleepChan)
	d.register()
	select {
	case <-done: // the activation hook ended the sleep
	case <-time.After(hangLimit):
		t.Fatal("registering I/O left the worker asleep off its driver")
	}
	done = sleepAsync(p)
	waitState(t, p, parkAsleep)
	p.unpark()
	<-done
	assert.EqualValues(t, 1, d.parks.Load(), "the second sleep is in the driver")
	assert.EqualValues(t, 1, d.unparks.Load(), "and its wake-up goes through Driver.Unpark")
}

// The handshake under random interleavings: a registration racing with
// the decision to sleep off the driver never leaves the worker asleep on
// its channel with I/O registered. Once the registration has returned,
// the sleep has either ended (woken by the hook, or never begun) or is in
// the driver, where an unpark ends it; a sleep still on its channel then
// would have missed the activation.
func TestNoActivationIsLostRacingWithASleep(t *testing.T) {
	for range 2000 {
		p, d := newQuiescentParker()
		registered := make(chan struct{})
		go func() {
			d.register()
			close(registered)
		}()
		done := sleepAsync(p)
		<-registered
		deadline := time.Now().Add(hangLimit)
	wait:
		for {
			select {
			case <-done:
				break wait
			default:
			}
			if p.state.Load() == parkAsleep {
				p.unpark()
				<-done
				break
			}
			require.True(t, time.Now().Before(deadline), "asleep off the driver with I/O registered: the activation was lost")
			time.Sleep(10 * time.Microsecond)
		}
	}
}
