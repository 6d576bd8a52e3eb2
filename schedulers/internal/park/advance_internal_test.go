package park

import (
	"testing"
	"time"

	"github.com/weftrt/weft/core"
)

// windowTimer is a core.Timer with one entry due at due. Its Fire calls
// during before it "wakes" the entry, the moment a real timer has taken
// its due entries and released its lock but not yet queued their tasks.
type windowTimer struct {
	core.Timer
	due    core.Instant
	armed  bool
	during func()
}

func (w *windowTimer) NextDeadline() (core.Instant, bool) { return w.due, w.armed }

func (w *windowTimer) Fire(now core.Instant) int {
	if !w.armed || now < w.due {
		return 0
	}
	w.armed = false
	if w.during != nil {
		w.during()
	}
	return 1
}

// TestAFireOfAnIdleWorkerHoldsOffTheAdvanceDecision: while an idle worker's
// Fire is between taking a due entry and waking its task, no other worker
// may decide that the pool is quiescent, or it would move the clock past
// deadlines whose tasks are not queued yet.
func TestAFireOfAnIdleWorkerHoldsOffTheAdvanceDecision(t *testing.T) {
	var a Advancer
	clock := core.NewVirtualClock()
	timer := &windowTimer{due: core.Instant(time.Millisecond), armed: true}
	tm := &core.Time{Clock: clock, Timer: timer}
	clock.AdvanceTo(timer.due)
	held := false
	timer.during = func() {
		// TryAdvance decides under this lock; it must not be free.
		held = !a.mu.TryLock()
		if !held {
			a.mu.Unlock()
		}
	}
	a.FireIdle(tm)
	if !held {
		t.Error("FireIdle left the advance lock free while it fired")
	}
	if !a.mu.TryLock() {
		t.Fatal("FireIdle kept the lock after it returned")
	}
	a.mu.Unlock()
}

// TestFireIdleOnARealClockTakesNoLock: a real clock never advances by
// itself, so an idle worker's Fire costs no lock.
func TestFireIdleOnARealClockTakesNoLock(t *testing.T) {
	var a Advancer
	timer := &windowTimer{armed: true}
	tm := &core.Time{Clock: core.NewRealClock(), Timer: timer}
	free := false
	timer.during = func() {
		free = a.mu.TryLock()
		if free {
			a.mu.Unlock()
		}
	}
	a.FireIdle(tm)
	if !free {
		t.Error("FireIdle took the advance lock on a real clock")
	}
}

// TestTryAdvanceMovesTheClockOnlyWhenQuiescent: the clock moves to the
// next deadline, and the entry fires, only when quiescent says so; and
// quiescent is not even asked when the clock cannot auto-advance.
func TestTryAdvanceMovesTheClockOnlyWhenQuiescent(t *testing.T) {
	var a Advancer
	clock := core.NewVirtualClock()
	fired := false
	timer := &windowTimer{due: core.Instant(5 * time.Second), armed: true, during: func() { fired = true }}
	tm := &core.Time{Clock: clock, Timer: timer}

	if a.TryAdvance(tm, func() bool { return false }) || clock.Now() != 0 || fired {
		t.Fatalf("a pool that is not quiescent moved the clock to %v (fired %v)", clock.Now(), fired)
	}
	if !a.TryAdvance(tm, func() bool { return true }) || clock.Now() != timer.due || !fired {
		t.Fatalf("a quiescent pool left the clock at %v, want %v (fired %v)", clock.Now(), timer.due, fired)
	}

	// Nothing armed: nothing to advance to, and quiescent is not asked.
	asked := false
	if a.TryAdvance(tm, func() bool { asked = true; return true }) || asked {
		t.Fatalf("with nothing armed: advanced or asked (asked %v)", asked)
	}

	clock.SetAutoAdvance(false)
	timer.armed = true
	timer.due = clock.Now().Add(time.Second)
	if a.TryAdvance(tm, func() bool { asked = true; return true }) || asked {
		t.Fatalf("with auto-advance off: advanced or asked (asked %v)", asked)
	}
}
