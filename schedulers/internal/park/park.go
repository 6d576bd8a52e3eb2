// Package park is how a worker of weft's multi-worker schedulers sleeps
// and is woken: the Parker, whose state machine makes an unpark that
// comes before the park impossible to lose, and which sleeps in the
// worker's I/O driver when the driver has something to deliver and on a
// channel otherwise.
//
// workstealing gives each worker a Parker and lets one parked worker at a
// time sleep in the runtime's one driver (Park); the others sleep on
// their channels (Wait). percore gives each worker its own driver, in
// which it parks. Either way, who may unpark whom, and which worker holds
// the timers, is the scheduler's business; the Parker only sleeps and
// wakes.
package park

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// State is a Parker's state.
type State uint32

// Parker states.
const (
	// Empty: awake, no notification pending.
	Empty State = iota
	// Parked: asleep on its channel, until an unpark (Wait).
	Parked
	// ParkedOffDriver: asleep on its channel (with a timer for a timed
	// park) instead of in the driver, because there is no driver or the
	// driver is quiescent; also the state in which Park decides between
	// the two.
	ParkedOffDriver
	// ParkedDriver: asleep in the driver.
	ParkedDriver
	// Notified: an unpark is pending; the next park returns at once.
	Notified
)

// Parker puts one worker to sleep and wakes it. Its state machine makes
// an unpark that arrives before the park (or while the worker is still
// deciding where to sleep) impossible to lose, and spares the system call
// of Driver.Unpark while the worker is awake:
//
//	unpark:  prev := swap(NOTIFIED); wake according to prev
//	park:    CAS NOTIFIED->EMPTY succeeds?  return (consume it)
//	         CAS EMPTY->PARKED_x fails?     it was NOTIFIED: consume, return
//	         sleep; store EMPTY
//
//	worker                          unparker
//	  CAS EMPTY->PARKED
//	                                  swap(NOTIFIED) == PARKED
//	                                  send a token
//	  receive the token
//	  CAS NOTIFIED->EMPTY, return
//
// Whichever of the swap and the CAS comes first, the other sees it. The
// channel has one buffered slot, so a token sent between the CAS and the
// receive waits for the receiver: there is no window in which a wake can
// fall between "decided to sleep" and "asleep" (the condvar trap that
// Tokio closes by taking the mutex in unpark). A timed sleep can end
// without receiving a token that is sent just after; that token makes a
// later park return early, which the worker treats as a spurious wake.
// Senders publish their work (a queue push) before they unpark, and a
// worker looks at its queues after every park, so the store of EMPTY
// after a sleep, which may swallow a notification that arrived late,
// loses no work.
type Parker struct {
	state atomic.Uint32
	// driver is nil when the worker has no driver to sleep in.
	driver core.Driver
	// quiescent is driver, if it can tell when it has nothing to deliver
	// (core.QuiescentDriver); nil otherwise.
	quiescent core.QuiescentDriver
	ch        chan struct{}
	// timer bounds a timed sleep off the driver. Only the worker's own
	// goroutine parks, so only it touches the timer.
	timer *time.Timer
}

// New returns an awake Parker without a driver.
func New() *Parker {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &Parker{ch: make(chan struct{}, 1), timer: t}
}

// SetDriver makes Park sleep in d (nil: never in a driver), and off it
// while d is quiescent when d implements core.QuiescentDriver. The caller
// registers the activation hook (core.QuiescentDriver.OnActive) that ends
// such a sleep, with Activate; see Park. Call it before the Parker is
// used.
func (p *Parker) SetDriver(d core.Driver) {
	p.driver = d
	p.quiescent, _ = d.(core.QuiescentDriver)
}

// DriverQuiescent reports whether the driver is quiescent: a Park in it
// could end only through Unpark or its timeout, so there is nothing to
// poll, and a sleeper may wait on its channel instead, where a wake-up
// costs a channel send rather than a system call on each side.
func (p *Parker) DriverQuiescent() bool { return p.quiescent != nil && p.quiescent.Quiescent() }

// State returns the current state (a snapshot, for tests and diagnostics).
func (p *Parker) State() State { return State(p.state.Load()) }

// Unpark wakes the worker or, if it is awake, makes its next park return
// at once. It reports whether the worker was asleep. Any goroutine may
// call it.
func (p *Parker) Unpark() bool {
	if State(p.state.Load()) == Notified {
		// Already pending: the swap would change nothing.
		return false
	}
	// Pairs with the CASes in Wait and Park: whichever runs first, the
	// other sees NOTIFIED or PARKED_x.
	switch State(p.state.Swap(uint32(Notified))) {
	case Parked, ParkedOffDriver:
		p.token()
		return true
	case ParkedDriver:
		p.driver.Unpark()
		return true
	}
	return false
}

func (p *Parker) token() {
	select {
	case p.ch <- struct{}{}:
	default: // a token is already waiting; one is enough
	}
}

// Consume takes a pending notification, reporting whether there was one.
func (p *Parker) Consume() bool {
	return p.state.CompareAndSwap(uint32(Notified), uint32(Empty))
}

// Activate is the body of the driver's activation hook
// (core.QuiescentDriver.OnActive): I/O was registered while the driver
// was quiescent. If the worker sleeps off its driver, it is woken, so that
// it parks again, in the driver; see Park for the handshake. A worker
// asleep in the driver, or on its channel in Wait, is left alone.
func (p *Parker) Activate() {
	if p.state.CompareAndSwap(uint32(ParkedOffDriver), uint32(Notified)) {
		p.token()
	}
}

// Wait sleeps on the channel until unparked, however long that takes. Only
// the worker's own goroutine calls it.
func (p *Parker) Wait() {
	if !p.state.CompareAndSwap(uint32(Empty), uint32(Parked)) {
		// Notified meanwhile.
		p.state.Store(uint32(Empty))
		return
	}
	for {
		<-p.ch
		// A token without NOTIFIED is left over from a timed sleep; keep
		// sleeping.
		if p.Consume() {
			return
		}
	}
}

// Park sleeps for at most timeout (negative: until unparked or, in the
// driver, an I/O event) and returns the driver's Park error. It sleeps in
// the driver only when the driver has something to deliver; otherwise,
// or without a driver, on the channel, bounded by a timer. Only the
// worker's own goroutine calls it.
//
// A quiescent driver (core.QuiescentDriver: nothing registered, nothing
// in flight) could end the sleep only through Unpark, which for epoll is
// an eventfd write by the waker and a return from epoll_wait: two system
// calls on every cross-worker wake-up of a runtime that does no I/O. The
// worker sleeps on its channel instead, and the driver's activation hook
// (Activate) moves it into the driver when a task registers I/O. The
// handshake, all sequentially consistent:
//
//	worker (Park)                          registering task
//	  (the scheduler has published           driver count: 0 -> 1
//	   which worker the hook must reach)     hook: finds the worker
//	  state: EMPTY -> OFF_DRIVER             CAS state: OFF_DRIVER -> NOTIFIED,
//	  driver quiescent?                        then send a token
//	    yes: sleep on the channel
//	    no:  CAS OFF_DRIVER -> DRIVER,
//	         sleep in the driver
//
// If the worker's check sees the driver quiescent, the count's increment
// comes later in the total order, so the hook finds the worker (the
// scheduler published it before Park) and its CAS finds OFF_DRIVER (or
// NOTIFIED from another waker, which ends the sleep as well): the worker
// wakes, and its next park goes into the driver. If the hook's CAS comes
// before the worker's check, the check sees the activity: either the hook
// found OFF_DRIVER, and the worker's CAS to DRIVER fails so that it does
// not sleep at all, or it found EMPTY, and the worker sleeps in the
// driver, where the registered I/O wakes it. A token the hook sends is
// then left over and shortens a later sleep, which the worker treats as a
// spurious wake.
func (p *Parker) Park(timeout time.Duration) error {
	if p.Consume() {
		return nil
	}
	if !p.state.CompareAndSwap(uint32(Empty), uint32(ParkedOffDriver)) {
		// Notified meanwhile.
		p.state.Store(uint32(Empty))
		return nil
	}
	inDriver := p.driver != nil && !p.DriverQuiescent()
	var err error
	switch {
	case inDriver && !p.state.CompareAndSwap(uint32(ParkedOffDriver), uint32(ParkedDriver)):
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
	// Consume the notification, if any, that ended the sleep.
	p.state.Store(uint32(Empty))
	return err
}

// Deadline is the timeout of a park by the worker that holds the timers:
// it publishes that the worker is about to park for at most timeout
// (spi.Parking), so that a timer armed meanwhile on another
// goroutine with an earlier deadline unparks it to recompute, and returns
// the timeout bounded by the next deadline. With an auto-advancing virtual
// clock the park is unbounded (-1): a virtual deadline is reached by
// advancing the clock once every worker is idle, never by waiting; the
// instant is still published, so that a timer armed from outside the
// runtime wakes the holder to consider advancing. The caller calls
// tm.Unparked after the park.
func Deadline(tm *core.Time, timeout time.Duration) time.Duration {
	virtual := spi.CanAutoAdvance(tm)
	timeout = spi.Parking(tm, timeout)
	if virtual {
		return -1
	}
	return timeout
}
