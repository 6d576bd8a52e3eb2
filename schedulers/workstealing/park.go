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
	// parkedSlotChan: holding the driver slot but asleep on its channel
	// (with a timer for the next deadline), because there is no driver or
	// the driver is quiescent; also the state in which the holder decides
	// between the two (see parkDriver).
	parkedSlotChan
	// parkedDriver: holding the driver slot, asleep in the driver.
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
	case parkedCond, parkedSlotChan:
		p.token()
		return true
	case parkedDriver:
		d.driver.Unpark()
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
	// quiescent is driver, if it can tell when it has nothing to deliver
	// (core.QuiescentDriver); nil otherwise.
	quiescent core.QuiescentDriver
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

// driverIdle reports whether the driver is quiescent: a Park could end
// only through Unpark or its timeout, so there is nothing to poll and a
// sleeper may wait on its channel instead, where a wake-up costs a channel
// send rather than a system call on each side.
func (d *driverSlot) driverIdle() bool { return d.quiescent != nil && d.quiescent.Quiescent() }

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
	if d.driver != nil && !d.driverIdle() && d.tryLock() {
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
//
// The holder sleeps in the driver only when the driver has something to
// deliver. A quiescent driver (core.QuiescentDriver: nothing registered,
// nothing in flight) could end the sleep only through Unpark, which for
// epoll is an eventfd write by the waker and a return from epoll_wait:
// two system calls on every cross-worker wake-up of a runtime that does
// no I/O. The holder sleeps on its channel instead, and the driver's
// activation hook (driverActive) moves it into the driver when a task
// registers I/O. The handshake, all sequentially consistent:
//
//	holder                                 registering task
//	  state: EMPTY -> SLOT_CHAN              driver count: 0 -> 1
//	  holder = idx                           hook: h = holder
//	  driver quiescent?                      CAS state[h]: SLOT_CHAN -> NOTIFIED,
//	    yes: sleep on the channel                then send a token
//	    no:  CAS SLOT_CHAN -> DRIVER,
//	         sleep in the driver
//
// If the holder's check sees the driver quiescent, the count's increment
// comes later in the total order, so the hook's load of holder sees idx
// and its CAS finds SLOT_CHAN (or NOTIFIED from another waker, which ends
// the sleep as well): the holder wakes, and its next park goes into the
// driver. If the hook's CAS wins before the holder's check, the check sees
// the activity and the holder's CAS to DRIVER fails: it does not sleep at
// all. A token the hook sends then is left over and shortens a later
// sleep, which the worker treats as a spurious wake.
func (s *Scheduler) parkDriver(idx int, p *parker, timeout time.Duration, log func(error)) {
	d := &s.drv
	if !p.state.CompareAndSwap(parkEmpty, parkedSlotChan) {
		p.state.Store(parkEmpty)
		return
	}
	// Pairs with the holder loads in unparkHolder and driverActive: an
	// armer that sees the instant published by Parking below, or a
	// registration that the quiescence check below misses, sees the
	// holder too.
	d.holder.Store(int32(idx))
	timers := timeout != 0 && d.hasTimers()
	if timers {
		virtual := d.time.CanAutoAdvance()
		timeout = d.time.Parking(timeout)
		if virtual {
			timeout = -1
		}
	}
	inDriver := d.driver != nil && !d.driverIdle()
	switch {
	case inDriver && !p.state.CompareAndSwap(parkedSlotChan, parkedDriver):
		// Notified since the first CAS: do not sleep.
	case inDriver:
		if err := d.driver.Park(timeout); err != nil {
			log(err)
		}
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
	if timers {
		d.time.Unparked()
	}
	// Pairs with the loads in unparkHolder and driverActive: a late
	// unpark finds no holder or an awake parker, whose next park it
	// merely shortens.
	d.holder.Store(-1)
	d.time.Fire()
	// Consume the notification (if any) that ended the sleep.
	p.state.Store(parkEmpty)
}

// driverActive is the driver's activation hook (core.QuiescentDriver's
// OnActive): a task registered I/O while the driver was quiescent. If the
// slot's holder sleeps on its channel, it is woken so that it parks again,
// in the driver; see parkDriver for the handshake. A holder already in the
// driver is left alone: that is the common case of a runtime that opens
// and closes connections, and it needs no wake-up.
func (s *Scheduler) driverActive() {
	if h := s.drv.holder.Load(); h >= 0 {
		p := s.workers[h].parker
		if p.state.CompareAndSwap(parkedSlotChan, parkNotified) {
			p.token()
		}
	}
}
