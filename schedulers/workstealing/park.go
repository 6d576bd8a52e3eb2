package workstealing

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
)

// Parker states.
const (
	// parkEmpty: awake, no notification pending.
	parkEmpty uint32 = iota
	// parkedCond: asleep on its own channel.
	parkedCond
	// parkedDriver: asleep in the driver (or, without a driver, asleep on
	// its channel with a timer for the next deadline).
	parkedDriver
	// parkNotified: an unpark is pending; the next park returns at once.
	parkNotified
)

// parker puts one worker to sleep and wakes it. Its state machine makes
// an unpark that arrives before the park (or while the worker is still
// deciding where to sleep) impossible to lose:
//
//	unpark:  prev := swap(NOTIFIED); wake according to prev
//	park:    CAS NOTIFIED->EMPTY succeeds?  return (consume it)
//	         CAS EMPTY->PARKED_x fails?     it was NOTIFIED: consume, return
//	         sleep; swap(EMPTY)
//
//	worker                          unparker
//	  CAS EMPTY->PARKED_COND
//	                                  swap(NOTIFIED) == PARKED_COND
//	                                  send a token
//	  receive the token
//	  CAS NOTIFIED->EMPTY, return
//
// The channel has one buffered slot, so a token sent between the CAS and
// the receive waits for the receiver: there is no window in which a wake
// can fall between "decided to sleep" and "asleep" (the condvar trap that
// Tokio closes by taking the mutex in unpark). A timed sleep can end
// without receiving a token that is sent just after; that token makes a
// later park return early, which the worker treats as a spurious wake.
type parker struct {
	state atomic.Uint32
	ch    chan struct{}
	// timer bounds a driverless timed sleep. Only the goroutine holding
	// the worker's core parks, so only it touches the timer.
	timer *time.Timer
}

func newParker() *parker {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &parker{ch: make(chan struct{}, 1), timer: t}
}

// unpark wakes the worker or, if it is awake, makes its next park return
// at once. It reports whether the worker was asleep. Any goroutine may call
// it.
func (p *parker) unpark(d *driverSlot) bool {
	// Pairs with the CASes in park: whichever runs first, the other sees
	// NOTIFIED or PARKED_x.
	switch p.state.Swap(parkNotified) {
	case parkedCond:
		p.token()
		return true
	case parkedDriver:
		if d.driver != nil {
			d.driver.Unpark()
		} else {
			p.token()
		}
		return true
	}
	return false
}

func (p *parker) token() {
	select {
	case p.ch <- struct{}{}:
	default: // a token is already waiting; one is enough
	}
}

// consume takes a pending notification, if any.
func (p *parker) consume() bool { return p.state.CompareAndSwap(parkNotified, parkEmpty) }

// parkCond sleeps until unparked.
func (p *parker) parkCond() {
	if !p.state.CompareAndSwap(parkEmpty, parkedCond) {
		// Notified meanwhile.
		p.state.Store(parkEmpty)
		return
	}
	for {
		<-p.ch
		// A token without NOTIFIED is left over from a timed sleep; keep
		// sleeping.
		if p.consume() {
			return
		}
	}
}

// driverSlot is the runtime's one driver and its timers, which one parked
// worker at a time waits on while the others sleep on their parkers. The
// slot is a try-lock: a worker about to sleep takes it if it is free and
// sleeps in the driver, otherwise it sleeps on its own channel.
type driverSlot struct {
	// driver is nil when the runtime has no driver.
	driver core.Driver
	// time is nil (or has no timer) when the runtime has no timers.
	time *core.Time
	// enabled: there is a driver or a timer, so someone should wait on
	// them.
	enabled bool

	lock atomic.Bool
	// holder is the index of the worker asleep in the slot, -1 if none.
	// core.Time's unpark function (see New) wakes it when a task arms a
	// timer due before the holder's sleep ends.
	holder atomic.Int32
}

// tryLock takes the slot if it is free. The CAS pairs with the Store in
// unlock: the new holder sees everything the previous one did in the
// driver.
func (d *driverSlot) tryLock() bool { return d.enabled && d.lock.CompareAndSwap(false, true) }

func (d *driverSlot) unlock() { d.lock.Store(false) }

// hasTimers reports whether the runtime has timers at all.
func (d *driverSlot) hasTimers() bool { return d.time != nil && d.time.Timer != nil }

// unparkHolder wakes the worker asleep in the slot, if any. core.Time calls
// it (through SetUnpark) when an entry is armed earlier than the instant
// the holder published with Parking.
func (s *Scheduler) unparkHolder() {
	if h := s.drv.holder.Load(); h >= 0 {
		s.workers[h].parker.unpark(&s.drv)
	}
}

// pollDriver polls the driver without blocking if the slot is free, then
// fires the timers that are due. Timers fire even when another worker
// holds the slot: core.Timer is safe for concurrent use, and a busy worker
// would otherwise leave due timers to a holder that may be asleep until a
// later deadline.
func (s *Scheduler) pollDriver(log func(error)) {
	d := &s.drv
	if d.driver != nil && d.tryLock() {
		if err := d.driver.Park(0); err != nil {
			log(err)
		}
		d.unlock()
	}
	d.time.Fire()
}

// parkDriver sleeps in the driver slot (held by the caller) for at most
// timeout (negative: until unparked or an I/O event), then fires the due
// timers.
//
// With timers, the sleep is bounded by the next deadline, and the holder
// publishes the instant it sleeps until (core.Time.Parking): a timer armed
// meanwhile on another goroutine with an earlier deadline unparks it, and
// it recomputes. With an auto-advancing virtual clock the holder sleeps
// without a bound (a virtual deadline is reached by advancing the clock
// once every worker is idle, never by waiting; see tryAutoAdvance) but
// still publishes, so that a timer armed from outside the runtime wakes it
// to consider advancing.
func (s *Scheduler) parkDriver(idx int, p *parker, timeout time.Duration, log func(error)) {
	d := &s.drv
	if !p.state.CompareAndSwap(parkEmpty, parkedDriver) {
		p.state.Store(parkEmpty)
		return
	}
	// Pairs with the holder load in unparkHolder: an armer that sees the
	// instant published by Parking below sees the holder too.
	d.holder.Store(int32(idx))
	timers := timeout != 0 && d.hasTimers()
	if timers {
		virtual := d.time.CanAutoAdvance()
		timeout = d.time.Parking(timeout)
		if virtual {
			timeout = -1
		}
	}
	if d.driver != nil {
		if err := d.driver.Park(timeout); err != nil {
			log(err)
		}
	} else {
		switch {
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
	}
	if timers {
		d.time.Unparked()
	}
	// Pairs with the load in unparkHolder: a late unpark finds no holder
	// or an awake parker, whose next park it merely shortens.
	d.holder.Store(-1)
	d.time.Fire()
	// Consume the notification (if any) that ended the sleep.
	p.state.Store(parkEmpty)
}
