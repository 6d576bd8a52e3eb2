package core

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/weftrt/weft/core/internal/bridge"
)

// Instant is a point on a runtime's clock, in nanoseconds since the clock's
// epoch. Instants of different clocks are not comparable.
type Instant int64

// Add returns i+d.
func (i Instant) Add(d time.Duration) Instant { return i + Instant(d) }

// Sub returns the duration i-j.
func (i Instant) Sub(j Instant) time.Duration { return time.Duration(i - j) }

// Clock tells a runtime's time. It is the SPI for clocks registered with
// [RegisterClock]; a real clock follows the monotonic system clock, a
// virtual one moves only when told to.
type Clock interface {
	// Now returns the current instant. It never goes backwards.
	Now() Instant
}

// VirtualClock is a Clock that moves only when advanced. It is what makes
// tests of timeouts instant and simulations reproducible.
type VirtualClock interface {
	Clock
	// Advance moves the clock forward by d (negative d is ignored).
	Advance(d time.Duration)
	// AdvanceTo moves the clock to i if i is later than now.
	AdvanceTo(i Instant)
	// AutoAdvance reports whether a scheduler with nothing to run should
	// jump the clock to the next timer deadline instead of sleeping
	// (Tokio's start_paused behaviour).
	AutoAdvance() bool
}

// TimerEntry is one armed deadline. Its owner (usually a sleep future)
// allocates it, so arming a timer allocates nothing inside the timer. The
// entry's links belong to the [Timer] holding it, which reaches them with
// spi.LinksOf and uses whichever suit its structure (list links for a
// wheel, an index for a heap); nobody else touches them.
type TimerEntry struct {
	// links must stay the first field: spi.LinksOf converts an entry's
	// address to the address of its links (see entryLinksAtOffsetZero).
	links bridge.Links[TimerEntry]

	// Deadline is when the entry fires. Set it before Insert; change it
	// only through Timer.Reset.
	Deadline Instant
	// Waker is woken when the entry fires.
	Waker AtomicWaker

	// fired is set by the timer when the deadline passed.
	fired atomic.Bool
}

// entryLinksAtOffsetZero fails to compile if links is not the first field
// of TimerEntry, which spi.LinksOf relies on.
var _ = [1]struct{}{}[unsafe.Offsetof(TimerEntry{}.links)]

// Fired reports whether the entry's deadline was reached and its waker
// woken.
func (e *TimerEntry) Fired() bool { return e.fired.Load() }

// expire (spi.Expire) marks the entry fired and takes its waker without
// waking it. A timer calls it under its own lock when it removes a due
// entry, so that Cancel and Fired agree with the timer's structure, and
// wakes the returned waker (if not nil) after releasing the lock: a waker
// may re-enter the timer.
//
// The mark and the take happen together under the waker's lock, so an
// owner that registers a waker and then checks Fired either registered
// before the expiry (its waker is taken and woken) or sees the entry fired;
// and an owner that saw the entry fired and re-arms it with a new waker
// cannot have that waker taken by the old expiry.
func (e *TimerEntry) expire() Waker {
	e.Waker.mu.Lock()
	e.fired.Store(true)
	w := e.Waker.w
	e.Waker.w = nil
	e.Waker.mu.Unlock()
	return w
}

// resetFired (spi.ResetFired) clears the fired mark before an entry is
// inserted again.
func (e *TimerEntry) resetFired() { e.fired.Store(false) }

// Timer keeps armed deadlines and fires those that are due. It is the SPI
// for the modules under timers/, registered with [RegisterTimer]. All
// methods may be called from any goroutine concurrently.
type Timer interface {
	// Insert arms e. Its deadline may already have passed; it then fires
	// at the next Fire. A timer may round a deadline up to its resolution,
	// never down: nothing fires early.
	Insert(e *TimerEntry)
	// Reset moves an armed entry to a new deadline, or arms it again if it
	// fired or was cancelled.
	Reset(e *TimerEntry, deadline Instant)
	// Cancel disarms e. It reports whether e was armed; after it returns e
	// will not fire.
	Cancel(e *TimerEntry) bool
	// NextDeadline returns the earliest armed deadline (after rounding), if
	// any. Schedulers use it for their park timeout.
	NextDeadline() (Instant, bool)
	// Fire fires every entry due at now and returns how many fired.
	Fire(now Instant) int
	// Len returns the number of armed entries.
	Len() int
}

// Time bundles a runtime's clock and timer for its scheduler.
//
// # Parking on the timers
//
// A worker that parks until the next deadline computed its timeout before
// parking; a task on another worker may then arm an earlier deadline. So the
// parking worker publishes the instant it parks until (spi.Parking), and Insert
// and Reset, after arming, compare the new deadline with it: an earlier one
// calls the unpark function the scheduler installed (spi.SetUnpark), and the
// worker wakes to recompute its timeout. Arm before compare, publish before
// re-reading the next deadline: with both sides using sequentially
// consistent atomics, either the parker sees the new entry or the armer
// sees the published instant.
type Time struct {
	Clock Clock
	Timer Timer

	// parkedUntil is the published park instant plus one; zero means no
	// worker is parked on the timers.
	parkedUntil atomic.Int64
	unpark      atomic.Pointer[func()]
}

// setUnpark (spi.SetUnpark) installs the function that wakes the worker
// parked on the timers. Schedulers whose timers are armed by goroutines
// other than the parking one must install it.
func (t *Time) setUnpark(f func()) {
	if t != nil {
		t.unpark.Store(&f)
	}
}

// parking (spi.Parking) publishes that the calling worker is about to park
// on the timers and returns how long it may park: at most max (negative:
// unbounded), and no later than the next deadline. Call it before parking,
// and Unparked when the park returns.
func (t *Time) parking(max time.Duration) time.Duration {
	if t == nil || t.Timer == nil {
		return max
	}
	// Publish "parked, no deadline" first, then read the next deadline: an
	// entry armed after the read sees the published instant and unparks us.
	t.parkedUntil.Store(math.MaxInt64)
	if next, ok := t.Timer.NextDeadline(); ok {
		t.parkedUntil.Store(int64(next) + 1)
	}
	return t.parkTimeout(max)
}

// unparked (spi.Unparked) withdraws the instant published by Parking.
func (t *Time) unparked() {
	if t != nil {
		t.parkedUntil.Store(0)
	}
}

// Insert arms e on the timer and wakes the parked worker if e is due before
// the instant it parks until. Time users arm through it rather than
// Timer.Insert.
func (t *Time) Insert(e *TimerEntry) {
	t.Timer.Insert(e)
	t.noteDeadline(e.Deadline)
}

// Reset moves e to deadline (see Timer.Reset) and wakes the parked worker if
// the new deadline comes before the instant it parks until.
func (t *Time) Reset(e *TimerEntry, deadline Instant) {
	t.Timer.Reset(e, deadline)
	t.noteDeadline(deadline)
}

func (t *Time) noteDeadline(d Instant) {
	until := t.parkedUntil.Load()
	if until == 0 || int64(d) >= until-1 {
		return
	}
	if f := t.unpark.Load(); f != nil {
		(*f)()
	}
}

// parkTimeout (spi.ParkTimeout) caps a park of at most max (negative:
// unbounded) by the time left until the next timer deadline.
func (t *Time) parkTimeout(max time.Duration) time.Duration {
	if t == nil || t.Timer == nil {
		return max
	}
	next, ok := t.Timer.NextDeadline()
	if !ok {
		return max
	}
	d := next.Sub(t.Clock.Now())
	if d < 0 {
		d = 0
	}
	if max >= 0 && max < d {
		return max
	}
	return d
}

// fire (spi.Fire) fires every timer due now.
func (t *Time) fire() int {
	if t == nil || t.Timer == nil {
		return 0
	}
	return t.Timer.Fire(t.Clock.Now())
}

// canAutoAdvance (spi.CanAutoAdvance) reports whether AutoAdvance would move
// the clock now: the clock is an auto-advancing virtual clock and a timer is
// armed.
func (t *Time) canAutoAdvance() bool {
	if t == nil || t.Timer == nil {
		return false
	}
	vc, ok := t.Clock.(VirtualClock)
	if !ok || !vc.AutoAdvance() {
		return false
	}
	_, ok = t.Timer.NextDeadline()
	return ok
}

// autoAdvance (spi.AutoAdvance) is called by a scheduler that has nothing to
// run and would otherwise sleep. With an auto-advancing virtual clock and an
// armed timer it moves the clock to the next deadline, fires what is due and
// reports true: the scheduler should look for work again instead of
// sleeping.
func (t *Time) autoAdvance() bool {
	if t == nil || t.Timer == nil {
		return false
	}
	vc, ok := t.Clock.(VirtualClock)
	if !ok || !vc.AutoAdvance() {
		return false
	}
	next, ok := t.Timer.NextDeadline()
	if !ok {
		return false
	}
	vc.AdvanceTo(next)
	t.Timer.Fire(t.Clock.Now())
	return true
}

// AtomicWaker holds the waker of one waiting task so that another goroutine
// can wake it while the task may be replacing it. Register and Wake may race
// freely; a Wake that happens after a Register wakes the registered waker.
type AtomicWaker struct {
	mu sync.Mutex
	w  Waker
}

// Register stores w, replacing any earlier waker.
func (a *AtomicWaker) Register(w Waker) {
	a.mu.Lock()
	a.w = w
	a.mu.Unlock()
}

// Take removes and returns the stored waker, or nil.
func (a *AtomicWaker) Take() Waker {
	a.mu.Lock()
	w := a.w
	a.w = nil
	a.mu.Unlock()
	return w
}

// Wake wakes and removes the stored waker, if any.
func (a *AtomicWaker) Wake() {
	if w := a.Take(); w != nil {
		w.Wake()
	}
}

// realClock follows the monotonic system clock from its creation.
type realClock struct{ epoch time.Time }

// NewRealClock returns a Clock that follows the monotonic system clock, with
// its epoch at the call.
func NewRealClock() Clock { return &realClock{epoch: time.Now()} }

func (c *realClock) Now() Instant { return Instant(time.Since(c.epoch)) }
