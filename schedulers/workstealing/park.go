package workstealing

import (
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
	"github.com/weftrt/weft/schedulers/internal/park"
)

// driverSlot is the runtime's one driver and its timers, which one parked
// worker at a time waits on while the others park on their own channels
// (park.Parker.Wait). The slot is a try-lock: a worker about to park takes
// it if it is free and parks in the driver (park.Parker.Park), otherwise
// it waits on its own channel.
type driverSlot struct {
	// driver is nil when the runtime has no driver. Every worker's parker
	// has it too (park.Parker.SetDriver), since any of them may hold the
	// slot.
	driver core.Driver
	// time is nil (or has no timer) when the runtime has no timers.
	time *core.Time
	// enabled: there is a driver or a timer, so someone should wait on
	// them.
	enabled bool

	lock atomic.Bool
	// holder is the index of the worker parked in the slot, -1 if none.
	// core.Time's unpark function (see New) wakes it when a task arms a
	// timer due before the holder's park ends, and the driver's
	// activation hook (driverActive) reaches it through holder.
	holder atomic.Int32
}

// tryLock takes the slot if it is free. The CAS pairs with the Store in
// unlock: the new holder sees everything the previous one did in the
// driver.
func (d *driverSlot) tryLock() bool { return d.enabled && d.lock.CompareAndSwap(false, true) }

func (d *driverSlot) unlock() { d.lock.Store(false) }

// hasTimers reports whether the runtime has timers at all.
func (d *driverSlot) hasTimers() bool { return d.time != nil && d.time.Timer != nil }

// unparkHolder wakes the worker parked in the slot, if any. core.Time calls
// it (through SetUnpark) when an entry is armed earlier than the instant
// the holder published with Parking.
func (s *Scheduler) unparkHolder() {
	if h := s.drv.holder.Load(); h >= 0 {
		s.workers[h].parker.Unpark()
	}
}

// pollDriver polls the driver without blocking if the slot is free and the
// driver is not quiescent, then fires the timers that are due. Timers fire
// even when another worker holds the slot: core.Timer is safe for
// concurrent use, and a busy worker would otherwise leave due timers to a
// holder that may be parked until a later deadline.
func (s *Scheduler) pollDriver(p *park.Parker, log func(error)) {
	d := &s.drv
	if d.driver != nil && !p.DriverQuiescent() && d.tryLock() {
		if err := d.driver.Park(0); err != nil {
			log(err)
		}
		d.unlock()
	}
	spi.Fire(d.time)
}

// parkDriver parks worker idx in the driver slot (held by the caller) for
// at most timeout (negative: until unparked or an I/O event), then fires
// the due timers.
//
// With timers, the park is bounded by the next deadline, and the holder
// publishes the instant it parks until (park.Deadline): a timer armed
// meanwhile on another goroutine with an earlier deadline unparks it, and
// it recomputes. With an auto-advancing virtual clock the holder parks
// without a bound (see tryAutoAdvance for how the clock moves instead).
//
// The holder parks in the driver only when the driver has something to
// deliver, and on its channel while the driver is quiescent; the driver's
// activation hook (driverActive) moves it into the driver when a task
// registers I/O, by the handshake described at park.Parker.Park. The
// holder's index is published before the park, which is what the
// handshake asks of the scheduler: a registration that the parker's
// quiescence check misses finds the holder.
func (s *Scheduler) parkDriver(idx int, p *park.Parker, timeout time.Duration, log func(error)) {
	d := &s.drv
	// Pairs with the holder loads in unparkHolder and driverActive: an
	// armer that sees the instant published by Deadline below, or a
	// registration that the quiescence check in Park misses, sees the
	// holder too.
	d.holder.Store(int32(idx))
	timers := timeout != 0 && d.hasTimers()
	if timers {
		timeout = park.Deadline(d.time, timeout)
	}
	if err := p.Park(timeout); err != nil {
		log(err)
	}
	if timers {
		spi.Unparked(d.time)
	}
	// Pairs with the loads in unparkHolder and driverActive: a late
	// unpark finds no holder or an awake parker, whose next park it
	// merely shortens.
	d.holder.Store(-1)
	// The worker is still in the parked list: see park.Advancer for why
	// that matters.
	s.advance.FireIdle(d.time)
}

// driverActive is the driver's activation hook (core.QuiescentDriver's
// OnActive): a task registered I/O while the driver was quiescent. If the
// slot's holder is parked on its channel, it is woken so that it parks
// again, in the driver (park.Parker.Activate). A holder already in the
// driver is left alone: that is the common case of a runtime that opens
// and closes connections, and it needs no wake-up.
func (s *Scheduler) driverActive() {
	if h := s.drv.holder.Load(); h >= 0 {
		s.workers[h].parker.Activate()
	}
}
