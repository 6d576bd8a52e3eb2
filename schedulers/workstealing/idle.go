package workstealing

import (
	"sync"
	"sync/atomic"
)

// idle coordinates workers that have run out of work: how many are
// searching (stealing), how many are unparked, and which are asleep.
//
// # The state word
//
//	state = unparked<<32 | searching
//
// unparked counts workers not in the sleeper list (running, searching, or
// about to park); searching counts those looking for work to steal. Both
// change together in one atomic add where a transition moves both, so a
// notifier reads a consistent pair with one load.
//
// # Rules
//
//   - At most half the workers search at once (transitionToSearching
//     refuses beyond that): a crowd of thieves would only fight over the
//     same queues.
//   - A notifier wakes a sleeper only if nobody is searching and somebody
//     sleeps. A searcher will find the new work, so waking another worker
//     would be wasted; the woken worker starts as a searcher, which also
//     stops the next notifier from waking a second one.
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

	// mu guards sleepers; parked mirrors membership for lock-free reads.
	mu       sync.Mutex
	sleepers []int
	parked   []atomic.Bool
}

const (
	unparkedOne  = uint64(1) << 32
	searchingOne = uint64(1)
)

func unpackIdle(s uint64) (unparked, searching uint32) { return uint32(s >> 32), uint32(s) }

func newIdle(n int) *idle {
	i := &idle{n: uint32(n), sleepers: make([]int, 0, n), parked: make([]atomic.Bool, n)}
	// Every worker starts unparked and not searching.
	i.state.Store(uint64(n) << 32)
	return i
}

// shouldWake reports whether a notifier should wake a sleeper: nobody is
// searching and someone sleeps.
func (i *idle) shouldWake() bool {
	unparked, searching := unpackIdle(i.state.Load())
	return searching == 0 && unparked < i.n
}

// workerToNotify picks a sleeper to wake and counts it as unparked and
// searching, or returns -1 when no wake is needed.
func (i *idle) workerToNotify() int {
	// The lock-free check is the fast path of every push; it pairs with
	// the RMWs of the state in transitionToParked and
	// transitionFromSearching.
	if !i.shouldWake() {
		return -1
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	if !i.shouldWake() || len(i.sleepers) == 0 {
		return -1
	}
	// The woken worker counts as unparked and searching before it runs,
	// so the next notifier (its load in shouldWake pairs with this add)
	// does not wake a second one.
	i.state.Add(unparkedOne | searchingOne)
	w := i.sleepers[len(i.sleepers)-1]
	i.sleepers = i.sleepers[:len(i.sleepers)-1]
	// Pairs with the load in isParked by the woken worker.
	i.parked[w].Store(false)
	return w
}

// transitionToParked moves worker w into the sleeper list. It reports
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
	i.sleepers = append(i.sleepers, w)
	i.parked[w].Store(true)
	return searching && s == 1
}

// transitionToSearching lets a worker search unless half the workers
// already do. The check and the increment are not one atomic step, so
// the bound can be overshot by a racing worker; it is a brake, not an
// invariant.
func (i *idle) transitionToSearching() bool {
	_, s := unpackIdle(i.state.Load())
	if 2*s >= i.n {
		return false
	}
	// Pairs with the notifiers' loads: a searcher suppresses wakes.
	i.state.Add(searchingOne)
	return true
}

// transitionFromSearching counts one searcher less and reports whether it
// was the last.
func (i *idle) transitionFromSearching() bool {
	// Pairs with the notifiers' loads: with no searcher left, the next
	// push wakes a sleeper.
	prev := i.state.Add(^uint64(0)) + 1
	_, s := unpackIdle(prev)
	return s == 1
}

// unparkByID takes worker w out of the sleeper list if it is there,
// counting it unparked (not searching), and reports whether it was.
func (i *idle) unparkByID(w int) bool {
	if !i.parked[w].Load() {
		return false
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	for k, x := range i.sleepers {
		if x == w {
			i.sleepers = append(i.sleepers[:k], i.sleepers[k+1:]...)
			i.parked[w].Store(false)
			i.state.Add(unparkedOne)
			return true
		}
	}
	return false
}

// isParked reports whether worker w is in the sleeper list.
func (i *idle) isParked(w int) bool { return i.parked[w].Load() }

// counts returns the unparked and searching counts (a snapshot).
func (i *idle) counts() (unparked, searching int) {
	u, s := unpackIdle(i.state.Load())
	return int(u), int(s)
}
