package park

import (
	"sync"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/core/spi"
)

// Advancer moves an auto-advancing virtual clock for a pool of workers:
// the clock jumps to the next timer deadline only when the whole pool is
// idle. It is also the one lock that keeps that decision true while an
// idle worker fires timers.
//
// # Why idle workers fire under the lock
//
// A timer's Fire wakes the tasks of its due entries after it releases its
// own lock (the wheel and the heap both do, in batches), so between taking
// the entries and queueing their tasks nothing in any queue shows that
// work is pending. A busy worker firing is harmless: it is not idle, so
// the pool is not quiescent. But a worker that is still published idle
// fires too (after it unparks, before it leaves the idle set). If another
// idle worker decided in that window that the pool was quiescent, it
// would move the clock past deadlines whose tasks were not queued yet:
// they would run late in virtual time, after tasks due later. So an idle
// worker fires through FireIdle, which, with an auto-advancing clock,
// holds the lock TryAdvance decides under. With a real clock nothing
// advances it and FireIdle is a plain Fire.
//
// The zero Advancer is ready to use.
type Advancer struct {
	mu sync.Mutex
}

// TryAdvance moves tm's auto-advancing virtual clock to the next deadline
// and fires what is due, if quiescent reports that nothing can run without
// an outside event. quiescent runs under the lock, so two workers that
// both find the pool idle cannot move the clock twice, and no FireIdle is
// half done while it decides. It reports whether the clock moved.
func (a *Advancer) TryAdvance(tm *core.Time, quiescent func() bool) bool {
	if !spi.CanAutoAdvance(tm) {
		return false
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if !quiescent() {
		return false
	}
	return spi.AutoAdvance(tm)
}

// FireIdle fires tm's due timers for a worker that is still published
// idle; see the type's documentation.
func (a *Advancer) FireIdle(tm *core.Time) {
	if tm == nil || tm.Timer == nil {
		return
	}
	if vc, ok := tm.Clock.(core.VirtualClock); ok && vc.AutoAdvance() {
		a.mu.Lock()
		defer a.mu.Unlock()
	}
	spi.Fire(tm)
}
