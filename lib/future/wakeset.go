package future

import (
	"sync"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// wakeSet routes the wakes of a combinator's children to the combinator's own
// waker and remembers which children were woken, so that a poll of the
// combinator polls only those (see "Wakers of children" in the package
// documentation).
//
// # The queued flag
//
// queued[i] is set while a wake of child i would add nothing: from the moment
// i is put on the ready list until the combinator is about to poll i. A wake
// that sets the flag (false to true) puts i on the ready list and wakes the
// parent; any other wake returns at once. The combinator clears the flag
// immediately before it polls the child (begin), so a wake that arrives
// while the child is being polled, or later, is kept for the next poll;
// one that arrives earlier is covered by the poll about to happen. A child
// that finished keeps its flag set for good (finished), so its late wakes
// stop here.
//
//	wake(i):   CAS queued[i] false→true ─ok─► lock: ready += i; p := parent ─► p.Wake()
//	                                    └fail─► return (already on ready, or about to be polled)
//	poll:      lock: parent = cx.Waker(); woken := ready; ready = spare ─► for i in woken:
//	               queued[i] = false; poll child i  (queued[i] = true again if it finished)
//
// The flag being set when i is put on the list, and staying set until i is
// taken off it and about to be polled, means i is on the list at most once:
// ready and spare never hold more than n entries and are allocated once.
type wakeSet struct {
	// queued[i] is child i's flag, described above. It is atomic so that a
	// repeated wake costs one failed compare-and-swap and takes no lock.
	queued []atomic.Bool
	// wakers[i] is child i's waker. The slice is never resized, so
	// &wakers[i] is a stable pointer, which keeps wakers comparable with ==
	// for children that check whether their waker changed.
	wakers []childWaker

	mu sync.Mutex // guards the fields below
	// parent is the waker the combinator was last polled with. It is nil
	// before the first poll (every child is on the list then, so a wake has
	// nothing to add) and after close, which makes late child wakes stop
	// here instead of waking a task that no longer cares.
	parent core.Waker
	// ready lists the children woken since the last take, in wake order.
	ready []int
	// spare is the other buffer: take hands out ready and installs spare in
	// its place, so no allocation happens per poll.
	spare []int
}

// childWaker is the waker of one child of a combinator.
type childWaker struct {
	set *wakeSet
	idx int
}

// init prepares s for n children, all on the ready list in index order, so
// that the first poll polls every child.
func (s *wakeSet) init(n int) {
	s.queued = make([]atomic.Bool, n)
	s.wakers = make([]childWaker, n)
	s.ready = make([]int, n)
	s.spare = make([]int, 0, n)
	for i := range n {
		s.queued[i].Store(true)
		s.wakers[i] = childWaker{set: s, idx: i}
		s.ready[i] = i
	}
}

// Wake implements [core.Waker]. It may be called from any goroutine, any
// number of times.
func (w *childWaker) Wake() {
	if !w.mark() {
		return
	}
	if parent := w.enqueue(); parent != nil {
		// Wake outside the lock: the parent waker may be another
		// combinator's child waker (taking that set's lock) or a
		// scheduler's task.
		parent.Wake()
	}
}

// mark is the first step of Wake: it sets the child's queued flag and
// reports whether this wake set it, in which case the caller must go on with
// enqueue. Between the two steps other wakes, takes and polls may run; the
// interleaving tests in wakeset_interleave_test.go explore every order.
func (w *childWaker) mark() bool {
	return w.set.queued[w.idx].CompareAndSwap(false, true)
}

// enqueue is the second step of Wake, for a child that mark flagged: it puts
// the child on the ready list and returns the parent waker to wake, or nil
// when the set is closed (nobody will poll the children again).
func (w *childWaker) enqueue() core.Waker {
	s := w.set
	s.mu.Lock()
	parent := s.parent
	if parent != nil {
		s.ready = append(s.ready, w.idx)
	}
	s.mu.Unlock()
	return parent
}

// take records parent as the waker to wake from now on and returns the
// children put on the ready list since the last take. Their flags stay set
// until begin. The returned slice is valid until the next take or
// requeueFront.
func (s *wakeSet) take(parent core.Waker) []int {
	s.mu.Lock()
	s.parent = parent
	woken := s.ready
	s.ready = s.spare[:0]
	s.spare = woken
	s.mu.Unlock()
	return woken
}

// begin is called right before child i, taken off the list, is polled: from
// now on a wake of i puts it back on the list.
func (s *wakeSet) begin(i int) { s.queued[i].Store(false) }

// finished is called when child i returned ready: its flag is set for good,
// so its late wakes neither reach the parent nor put it back on the list.
func (s *wakeSet) finished(i int) { s.queued[i].Store(true) }

// requeueFront puts rest, the tail of the slice the last take returned that
// the poll did not reach, back in front of the children woken since, so that
// the next poll reaches them first. The flags of rest are still set (begin
// was not called for them), so none of them is on the list already.
func (s *wakeSet) requeueFront(rest []int) {
	s.mu.Lock()
	// rest aliases s.spare from some position on; copying it to the front
	// of s.spare only writes slots that were already read.
	buf := append(s.spare[:0], rest...)
	buf = append(buf, s.ready...)
	s.spare = s.ready[:0]
	s.ready = buf
	s.mu.Unlock()
}

// close forgets the parent waker: from now on child wakes go nowhere. The
// combinator calls it when it returns ready or is dropped.
func (s *wakeSet) close() {
	s.mu.Lock()
	s.parent = nil
	s.mu.Unlock()
}
