package workstealing

import (
	"sync"
	"sync/atomic"
)

// idle coordinates workers that have run out of work: how many are
// searching (stealing), how many are unparked, and which are parked.
//
// It is workstealing's own, not the scheduler kit's: percore's idle set is
// a bit set of at most 64 workers with failed workers left out, picked in
// rotation; here any number of workers park on a stack, the most recently
// parked woken first, and the unparked and searching counts share one
// word.
//
// # The state word
//
//	state = unparked<<32 | searching
//
// unparked counts workers not in the parked list (running, searching, or
// about to park); searching counts those looking for work to steal. Both
// change together in one atomic add where a transition moves both, so a
// notifier reads a consistent pair with one load.
//
// # Rules
//
//   - At most half the workers, rounded up, search at once
//     (tryStartSearch refuses beyond that): a crowd of thieves would only
//     fight over the same queues.
//   - A notifier wakes a parked worker only if nobody is searching and
//     somebody is parked. A searcher will find the new work, so waking
//     another worker would be wasted; the woken worker starts as a
//     searcher, which also stops the next notifier from waking a second
//     one.
//   - The last searcher to stop searching without finding work re-checks
//     every queue after it has published that it stopped (see
//     Scheduler.notifyIfWorkPending). Pushers publish work and then load
//     the state; the last searcher publishes the state and then loads the
//     queues. With sequentially consistent atomics on both sides, at least
//     one of them sees the other, so a task pushed while the last searcher
//     was giving up is never stranded.
type idle struct {
	state atomic.Uint64
	n     uint32

	// mu guards parked, a stack of worker indices; inList mirrors
	// membership for lock-free reads.
	mu     sync.Mutex
	parked []int
	inList []atomic.Bool
}

const (
	unparkedOne  = uint64(1) << 32
	searchingOne = uint64(1)
)

func unpackIdle(s uint64) (unparked, searching uint32) { return uint32(s >> 32), uint32(s) }

func newIdle(n int) *idle {
	i := &idle{n: uint32(n), parked: make([]int, 0, n), inList: make([]atomic.Bool, n)}
	// Every worker starts unparked and not searching.
	i.state.Store(uint64(n) << 32)
	return i
}

// shouldWake reports whether a notifier should wake a parked worker:
// nobody is searching and someone is parked.
func (i *idle) shouldWake() bool {
	unparked, searching := unpackIdle(i.state.Load())
	return searching == 0 && unparked < i.n
}

// pick chooses a parked worker to wake, the most recently parked, and
// counts it as unparked and searching, or returns -1 when no wake is
// needed.
func (i *idle) pick() int {
	// The lock-free check is the fast path of every push; it pairs with
	// the RMWs of the state in transitionToParked and stopSearch.
	if !i.shouldWake() {
		return -1
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.shouldWake() || len(i.parked) == 0 {
		return -1
	}
	// The woken worker counts as unparked and searching before it runs,
	// so the next notifier (its load in shouldWake pairs with this add)
	// does not wake a second one.
	i.state.Add(unparkedOne | searchingOne)
	w := i.parked[len(i.parked)-1]
	i.parked = i.parked[:len(i.parked)-1]
	// Pairs with the load in isParked by the woken worker.
	i.inList[w].Store(false)
	return w
}

// transitionToParked moves worker w into the parked list. It reports
// whether w was the last searcher, which then must re-check the queues.
func (i *idle) transitionToParked(w int, searching bool) (lastSearcher bool) {
	i.mu.Lock()
	defer i.mu.Unlock()
	dec := unparkedOne
	if searching {
		dec |= searchingOne
	}
	// Pairs with the notifiers' loads in shouldWake: published before the
	// last searcher's re-check of the queues (see the type comment).
	prev := i.state.Add(-dec) + dec
	_, s := unpackIdle(prev)
	i.parked = append(i.parked, w)
	i.inList[w].Store(true)
	return searching && s == 1
}

// tryStartSearch lets a worker search unless half the workers already
// do. The check and the increment are not one atomic step, so the bound
// can be overshot by a racing worker; it is a brake, not an invariant.
func (i *idle) tryStartSearch() bool {
	_, s := unpackIdle(i.state.Load())
	if 2*s >= i.n {
		return false
	}
	// Pairs with the notifiers' loads: a searcher suppresses wakes.
	i.state.Add(searchingOne)
	return true
}

// stopSearch counts one searcher less and reports whether it was the
// last.
func (i *idle) stopSearch() bool {
	// Pairs with the notifiers' loads: with no searcher left, the next
	// push wakes a parked worker.
	prev := i.state.Add(^uint64(0)) + 1
	_, s := unpackIdle(prev)
	return s == 1
}

// unparkByID takes worker w out of the parked list if it is there,
// counting it unparked (not searching), and reports whether it was.
func (i *idle) unparkByID(w int) bool {
	if !i.inList[w].Load() {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for k, x := range i.parked {
		if x == w {
			i.parked = append(i.parked[:k], i.parked[k+1:]...)
			i.inList[w].Store(false)
			i.state.Add(unparkedOne)
			return true
		}
	}
	return false
}

// isParked reports whether worker w is in the parked list.
func (i *idle) isParked(w int) bool { return i.inList[w].Load() }

// counts returns the unparked and searching counts (a snapshot).
func (i *idle) counts() (unparked, searching int) {
	u, s := unpackIdle(i.state.Load())
	return int(u), int(s)
}
