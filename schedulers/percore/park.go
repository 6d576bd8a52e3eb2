package percore

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

// Parker states.
const (
	// parkAwake: running, no notification pending.
	parkAwake uint32 = iota
	// parkAsleep: asleep in its driver.
	parkAsleep
	// parkAsleepChan: asleep on its channel, because it has no driver or
	// its driver is quiescent; also the state in which the worker decides
	// between the two (see sleep).
	parkAsleepChan
	// parkNotified: an unpark is pending; the next sleep returns at once.
	parkNotified
)

// parker puts one worker to sleep on its own driver (or, without a driver,
// on a channel) and wakes it. Its state machine makes an unpark that comes
// before the sleep impossible to lose, and spares the system call of
// Driver.Unpark when the worker is awake:
//
//	unpark:  prev := swap(NOTIFIED); if prev == ASLEEP, wake the sleeper
//	sleep:   CAS NOTIFIED->AWAKE succeeds?  return (consume it)
//	         CAS AWAKE->ASLEEP fails?       it was NOTIFIED: consume, return
//	         sleep in the driver; store AWAKE
//
// Whichever of the swap and the CAS comes first, the other sees it. A
// sender publishes its work (a mailbox push, a global queue push) before
// unpark, and the worker looks at every queue after each sleep, so the
// store of AWAKE after the sleep, which may swallow a notification that
// arrived late, loses no work: the worker is about to look anyway.
//
// A worker whose driver is quiescent (core.QuiescentDriver: nothing
// registered, nothing in flight) sleeps on its channel instead of in the
// driver, so that waking it costs a channel send rather than an eventfd
// write or an io_uring NOP and the wait's return. The driver's activation
// hook (activate) moves it into the driver when I/O is registered, by the
// handshake workstealing's parkDriver describes:
//
//	sleep:     CAS AWAKE->ASLEEP_CHAN; quiescent?
//	             yes: sleep on the channel
//	             no:  CAS ASLEEP_CHAN->ASLEEP, sleep in the driver
//	activate:  (after the driver's count left zero)
//	           CAS ASLEEP_CHAN->NOTIFIED, then send a token
//
// If the quiescence check saw nothing registered, the registration comes
// later in the sequentially consistent order, so its hook's CAS finds
// ASLEEP_CHAN (or NOTIFIED) and the sleep ends; if the hook's CAS came
// first, the check sees the registration and the CAS to ASLEEP fails.
type parker struct {
	state  atomic.Uint32
	driver core.Driver // nil without a driver
	// quiescent is driver, if it can tell when it has nothing to deliver;
	// nil otherwise.
	quiescent core.QuiescentDriver
	ch        chan struct{}
	timer     *time.Timer
}

// setDriver makes the parker sleep in d, and off it while d is quiescent
// when d implements core.QuiescentDriver.
func (p *parker) setDriver(d core.Driver) {
	p.driver = d
	if q, ok := d.(core.QuiescentDriver); ok {
		p.quiescent = q
		q.OnActive(p.activate)
	}
}

// driverIdle reports whether the driver is quiescent: a Park could end
// only through Unpark or its timeout, so there is nothing to poll and the
// worker may sleep on its channel instead.
func (p *parker) driverIdle() bool { return p.quiescent != nil && p.quiescent.Quiescent() }

// activate is the driver's activation hook: a worker asleep on its
// channel while its driver was quiescent wakes, so that it sleeps again in
// the driver.
func (p *parker) activate() {
	if p.state.CompareAndSwap(parkAsleepChan, parkNotified) {
		p.token()
	}
}

func (p *parker) token() {
	select {
	case p.ch <- struct{}{}:
	default: // a token is already waiting; one is enough
	}
}

func newParker() *parker {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &parker{ch: make(chan struct{}, 1), timer: t}
}

// unpark wakes the worker or makes its next sleep return at once. Any
// goroutine may call it.
func (p *parker) unpark() {
	if p.state.Load() == parkNotified {
		// Already pending: the swap would change nothing.
		return
	}
	switch p.state.Swap(parkNotified) {
	case parkAsleep:
		p.driver.Unpark()
	case parkAsleepChan:
		p.token()
	}
}

// consume takes a pending notification, reporting whether there was one.
func (p *parker) consume() bool { return p.state.CompareAndSwap(parkNotified, parkAwake) }

// sleep waits at most timeout (negative: until unparked or an I/O event)
// in the driver or on the channel (see parker for which). It returns the
// driver's Park error. Only the worker's own goroutine calls it.
func (p *parker) sleep(timeout time.Duration) error {
	if p.consume() {
		return nil
	}
	if !p.state.CompareAndSwap(parkAwake, parkAsleepChan) {
		p.state.Store(parkAwake)
		return nil
	}
	inDriver := p.driver != nil && !p.driverIdle()
	var err error
	switch {
	case inDriver && !p.state.CompareAndSwap(parkAsleepChan, parkAsleep):
		// Notified since the first CAS: do not sleep.
	case inDriver:
		err = p.driver.Park(timeout)
	case timeout < 0:
		<-p.ch
	case timeout > 0:
		p.timer.Reset(timeout)
		select {
		case <-p.ch:
		case <-p.timer.C:
		}
		p.timer.Stop()
	}
	// Consume the notification, if any, that ended the sleep. A token left
	// in the channel by a late unpark makes a later sleep return early,
	// which the worker treats as a spurious wake.
	p.state.Store(parkAwake)
	return err
}
