package percore

import (
	"math/bits"
	"sync/atomic"
)

// MaxWorkers is the largest pool: the idle set gives each worker one bit of
// a 64-bit word.
const MaxWorkers = 64

// idle tracks which workers have published themselves idle and how many
// are searching (stealing), and picks a parked worker to wake when work
// appears that its owner cannot be counted on to run.
//
// It is percore's own, not the scheduler kit's: workstealing's idle
// accounting keeps a stack of parked workers of any number and packs its
// unparked and searching counts in one word, where percore needs a bit
// per worker (at most 64) so that failed workers can be left out and the
// worker to wake picked in rotation.
//
// # The idle set
//
// Bit i of parked is set while worker i is idle: it sets the bit before its
// last look at the queues and parks if that look finds nothing. A
// notifier clears the bit of the worker it wakes, with a CAS, so two
// notifiers never pick the same one, and counts it as searching before it
// unparks it, so the next notifier does not wake a second worker for the
// same work.
//
// # Who is woken
//
// Work that only its own worker may run (a mailbox push) unparks that
// worker directly and never goes through here. Work any worker may run (a
// global queue push, a run queue backlog of two or more, which a steal can
// split) calls notify, which wakes one idle worker unless a worker is
// searching already: a searcher will find the work. At most half the
// workers (and at least one) search at once; a crowd of thieves would only
// fight over the same queues.
//
// # The last look
//
// Notifiers publish work and then load searching and parked; a worker
// going idle sets its bit, stops counting itself as searching, and then
// looks at every queue (its mailbox, the global queue, every run queue).
// All of these are sequentially consistent atomics, so in the single total
// order either the notifier's loads come after the worker's stores (it
// sees the bit, or no searcher, and wakes someone) or the worker's look
// comes after the notifier's publication (it sees the work). Work is never
// stranded with every worker parked.
//
// A searcher that finds work stops searching; if it was the last one it
// calls notify, since a notifier that saw it searching woke nobody and the
// work it found may not be the work that notifier published.
type idle struct {
	parked atomic.Uint64
	// failed holds the bits of failed workers: never picked, and idle for
	// the purpose of allIdle.
	failed    atomic.Uint64
	searching atomic.Int32
	n         int
	// maxSearching is half the workers, at least one.
	maxSearching int32
}

func newIdle(n int) *idle {
	return &idle{n: n, maxSearching: int32(max(n/2, 1))}
}

// bit is worker i's bit in the idle set.
func bit(i int) uint64 { return uint64(1) << uint(i) }

// publish sets worker i's bit (going idle).
func (d *idle) publish(i int) { d.parked.Or(bit(i)) }

// withdraw clears worker i's bit and reports whether it was still set:
// false means a notifier took it out and counted it as searching.
func (d *idle) withdraw(i int) bool { return d.parked.And(^bit(i))&bit(i) != 0 }

// isIdle reports whether worker i's bit is set.
func (d *idle) isIdle(i int) bool { return d.parked.Load()&bit(i) != 0 }

// allIdle reports whether every worker is idle or failed.
func (d *idle) allIdle() bool {
	return d.parked.Load()|d.failed.Load() == ^uint64(0)>>(64-uint(d.n))
}

// allFailed reports whether every worker has failed.
func (d *idle) allFailed() bool { return d.failed.Load() == ^uint64(0)>>(64-uint(d.n)) }

// markFailed takes worker i out of the pool's choices for good.
func (d *idle) markFailed(i int) { d.failed.Or(bit(i)) }

// tryStartSearch counts one more searcher unless half the workers search
// already. The load and the add are two steps, so racing workers can
// overshoot the bound by a little; it is a brake, not an invariant.
func (d *idle) tryStartSearch() bool {
	if d.searching.Load() >= d.maxSearching {
		return false
	}
	d.searching.Add(1)
	return true
}

// stopSearch counts one searcher less and reports whether it was the last.
func (d *idle) stopSearch() bool { return d.searching.Add(-1) == 0 }

// pick chooses an idle worker to wake, clears its bit and counts it as
// searching, or returns -1 when a worker is searching or none is idle.
// start spreads the choice: the first idle worker at or after it.
func (d *idle) pick(start int) int {
	if d.searching.Load() > 0 {
		return -1
	}
	for {
		p := d.parked.Load()
		avail := p &^ d.failed.Load()
		if avail == 0 {
			return -1
		}
		rot := bits.RotateLeft64(avail, -start)
		i := (bits.TrailingZeros64(rot) + start) % 64
		if d.parked.CompareAndSwap(p, p&^bit(i)) {
			// Counted before the unpark, so the next notifier's load
			// sees a searcher and wakes nobody else.
			d.searching.Add(1)
			return i
		}
	}
}
