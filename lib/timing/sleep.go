package timing

import (
	"time"

	"github.com/weftrt/weft/core"
)

// sleepState is where a SleepFuture is in its life.
type sleepState uint8

const (
	// sleepRelative: not yet polled; the deadline is the first poll plus
	// dur.
	sleepRelative sleepState = iota
	// sleepAbsolute: entry.Deadline is set but the entry is not armed
	// (never polled, or Reset after it completed).
	sleepAbsolute
	// sleepArmed: the entry is in the runtime's timer.
	sleepArmed
	// sleepDone: the deadline passed and Poll reported ready.
	sleepDone
	// sleepDropped: Drop ran; the future must not be polled again.
	sleepDropped
)

// SleepFuture completes when its deadline has passed on the runtime's
// clock. Create one with [Sleep] or [SleepUntil]. It is a [core.Future] of
// [core.Unit] and a [core.Dropper]; it is not safe for concurrent use (one
// task owns it).
type SleepFuture struct {
	// entry is armed in the runtime's timer while the sleep waits. It is
	// the first field so the future and its entry share cache lines.
	entry core.TimerEntry
	// time is the runtime's clock and timer, learnt at the first poll.
	time *core.Time
	// dur is the relative duration of a sleep not yet polled.
	dur   time.Duration
	state sleepState
}

// Sleep returns a future that completes d after its first poll. A d of zero
// or less completes at the first poll.
func Sleep(d time.Duration) *SleepFuture {
	return &SleepFuture{dur: d, state: sleepRelative}
}

// SleepUntil returns a future that completes once the runtime's clock has
// reached deadline.
func SleepUntil(deadline core.Instant) *SleepFuture {
	s := &SleepFuture{state: sleepAbsolute}
	s.entry.Deadline = deadline
	return s
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget. It panics if the runtime has no timer (see the package
// documentation) or if the future was dropped.
func (s *SleepFuture) Poll(cx *core.Context) (core.Unit, bool) {
	if !cx.Proceed() {
		return core.Unit{}, false
	}
	return s.poll(cx)
}

// poll is Poll without the budget, for combinators that must be able to
// observe the deadline even when the task's budget is spent.
func (s *SleepFuture) poll(cx *core.Context) (core.Unit, bool) {
	switch s.state {
	case sleepDone:
		return core.Unit{}, true
	case sleepDropped:
		panic("weft/timing: SleepFuture polled after Drop")
	case sleepArmed:
		// Register before checking: a Fire that expires the entry after
		// the registration takes and wakes this waker; one that expired it
		// before has stored the fired mark we then read (see
		// core.TimerEntry.Expire).
		s.entry.Waker.Register(cx.Waker())
		if s.entry.Fired() {
			s.entry.Waker.Take()
			s.state = sleepDone
			return core.Unit{}, true
		}
		return core.Unit{}, false
	}
	t := s.time
	if t == nil {
		t = runtimeTime(cx, "Sleep", true)
		s.time = t
	}
	now := t.Clock.Now()
	if s.state == sleepRelative {
		s.entry.Deadline = deadlineAfter(now, s.dur)
		s.state = sleepAbsolute
	}
	if s.entry.Deadline <= now {
		s.state = sleepDone
		return core.Unit{}, true
	}
	if s.entry.Deadline == never {
		// A sleep that never ends waits without occupying the timer.
		return core.Unit{}, false
	}
	s.entry.Waker.Register(cx.Waker())
	t.Insert(&s.entry)
	s.state = sleepArmed
	return core.Unit{}, false
}

// Deadline returns the instant the sleep completes at. It reports false for
// a relative sleep that has not been polled yet: its deadline is fixed by
// the first poll.
func (s *SleepFuture) Deadline() (core.Instant, bool) {
	if s.state == sleepRelative {
		return 0, false
	}
	return s.entry.Deadline, true
}

// IsElapsed reports whether the sleep has completed: a poll reported ready.
func (s *SleepFuture) IsElapsed() bool { return s.state == sleepDone }

// Reset moves the sleep to a new deadline. A pending sleep stays armed at
// the new deadline (one timer operation, no allocation); a completed sleep
// becomes pending again and may be polled once more; a sleep not polled yet
// takes the deadline as its own. Resetting a dropped sleep panics.
func (s *SleepFuture) Reset(deadline core.Instant) {
	switch s.state {
	case sleepDropped:
		panic("weft/timing: SleepFuture reset after Drop")
	case sleepArmed:
		if deadline == never {
			s.time.Timer.Cancel(&s.entry)
			s.entry.Deadline = never
			s.state = sleepAbsolute
			return
		}
		s.time.Reset(&s.entry, deadline)
	default:
		// Not in the timer: the next poll arms it, or completes at once
		// if the deadline has passed.
		s.entry.Deadline = deadline
		s.state = sleepAbsolute
	}
}

// ResetAfter moves the sleep to d after now on the runtime's clock, or, for
// a sleep never polled, to d after its first poll.
func (s *SleepFuture) ResetAfter(d time.Duration) {
	if s.time == nil {
		if s.state == sleepDropped {
			panic("weft/timing: SleepFuture reset after Drop")
		}
		s.dur = d
		s.state = sleepRelative
		return
	}
	s.Reset(deadlineAfter(s.time.Clock.Now(), d))
}

// Drop implements [core.Dropper]: it cancels the armed entry, so the timer
// holds nothing for the sleep and the task is not woken on its behalf. It
// is idempotent.
func (s *SleepFuture) Drop() {
	if s.state == sleepArmed {
		// A cancelled entry is never expired, so the waker it still holds
		// is never woken; it goes with the future. An entry that fired
		// first had its waker taken by the timer already.
		s.time.Timer.Cancel(&s.entry)
	}
	s.state = sleepDropped
}
