package future

import (
	"fmt"
	"sync/atomic"

	"github.com/weftrt/weft/core"
)

// Selected is the output of [Select]: which future won, and its value.
type Selected[T any] struct {
	// Index is the winner's position in the arguments of Select.
	Index int
	// Value is the winner's output.
	Value T
}

// Select returns a future that polls every future of futs and is ready with
// the first one to be ready, and its index. Before it returns, every other
// future (every loser) is dropped exactly once; the winner is not dropped.
//
// Each poll polls every branch, with the parent's Context, starting at a
// pseudo-random branch so that no branch is favoured when several are ready
// (see "Fairness of Select" in the package documentation). On entry each poll
// checks the task's cooperative budget without consuming it: when the budget
// is spent it polls nothing and returns pending, having woken the task, as
// Tokio's select! does. So a loop over a select whose branches are always
// ready still yields to other tasks.
//
// Drop drops every branch, each once, unless the select already returned
// ready. Select of no futures panics, as does a nil future.
func Select[T any](futs ...core.Future[T]) core.Future[Selected[T]] {
	if len(futs) == 0 {
		panic("future.Select: no futures to select from")
	}
	for i, f := range futs {
		if f == nil {
			panic(fmt.Sprintf("future.Select: future %d is nil", i))
		}
	}
	s := &selectAll[T]{rng: NewFair()}
	if len(futs) <= len(s.small) {
		s.futs = append(s.small[:0], futs...)
	} else {
		s.futs = append([]core.Future[T](nil), futs...)
	}
	return s
}

type selectAll[T any] struct {
	// futs holds the branches; it is nil once the select returned ready or
	// was dropped.
	futs []core.Future[T]
	rng  Fair
	// small stores the branches of a select of up to four futures, the
	// common case, saving an allocation per select built in a loop.
	small [4]core.Future[T]
}

func (s *selectAll[T]) Poll(cx *core.Context) (Selected[T], bool) {
	if s.futs == nil {
		panic(errPolledAfterDone("Select"))
	}
	if budgetSpent(cx) {
		return Selected[T]{}, false
	}
	n := len(s.futs)
	i := s.rng.Below(n)
	for range n {
		if v, ok := s.futs[i].Poll(cx); ok {
			losers := s.futs
			s.futs = nil
			losers[i] = nil // the winner completed: never drop it
			dropLive(losers)
			return Selected[T]{Index: i, Value: v}, true
		}
		if i++; i == n {
			i = 0
		}
	}
	return Selected[T]{}, false
}

// Drop implements [core.Dropper].
func (s *selectAll[T]) Drop() {
	futs := s.futs
	s.futs = nil
	dropLive(futs)
}

// Either is the output of [Select2]: which of its two futures won, and the
// winner's value. The other field is the zero value.
type Either[A, B any] struct {
	// Index is 0 when the first future won and 1 when the second did.
	Index int
	// First is the first future's output when Index is 0.
	First A
	// Second is the second future's output when Index is 1.
	Second B
}

// Select2 is [Select] for two futures of different types: it is ready with
// the first of a and b to be ready, after dropping the other exactly once.
// It polls, checks the budget and picks its first branch exactly as Select
// does. Drop drops both futures, each once, unless Select2 already returned
// ready.
func Select2[A, B any](a core.Future[A], b core.Future[B]) core.Future[Either[A, B]] {
	if a == nil || b == nil {
		panic("future.Select2: nil future")
	}
	return &select2[A, B]{a: a, b: b, rng: NewFair()}
}

type select2[A, B any] struct {
	a    core.Future[A]
	b    core.Future[B]
	rng  Fair
	done bool
}

func (s *select2[A, B]) Poll(cx *core.Context) (Either[A, B], bool) {
	if s.done {
		panic(errPolledAfterDone("Select2"))
	}
	if budgetSpent(cx) {
		return Either[A, B]{}, false
	}
	if s.rng.Below(2) == 0 {
		if e, ok := s.pollA(cx); ok {
			return e, true
		}
		return s.pollB(cx)
	}
	if e, ok := s.pollB(cx); ok {
		return e, true
	}
	return s.pollA(cx)
}

func (s *select2[A, B]) pollA(cx *core.Context) (Either[A, B], bool) {
	v, ok := s.a.Poll(cx)
	if !ok {
		return Either[A, B]{}, false
	}
	loser := s.b
	s.a, s.b, s.done = nil, nil, true
	core.Drop(loser)
	return Either[A, B]{Index: 0, First: v}, true
}

func (s *select2[A, B]) pollB(cx *core.Context) (Either[A, B], bool) {
	v, ok := s.b.Poll(cx)
	if !ok {
		return Either[A, B]{}, false
	}
	loser := s.a
	s.a, s.b, s.done = nil, nil, true
	core.Drop(loser)
	return Either[A, B]{Index: 1, Second: v}, true
}

// Drop implements [core.Dropper].
func (s *select2[A, B]) Drop() {
	if s.done {
		return
	}
	a, b := s.a, s.b
	s.a, s.b, s.done = nil, nil, true
	dropBoth(a, b)
}

// Fair is the pseudo-random source a select draws the branch it polls first
// from: Marsaglia's xorshift32, seeded from one process-wide sequence. Its
// quality only has to break ties fairly; its cost is a few shifts per pick.
// [Select], [Select2] and lib/co's Select all take their seeds from
// [NewFair], the one place a deterministic scheduler would seed them. The
// zero Fair is not usable; make one with NewFair. A Fair is not safe for
// concurrent use.
type Fair struct{ s uint32 }

// selectSeeds hands each new select a distinct seed. Consecutive values are
// scrambled by splitmix64's finaliser, so selects created one after the other
// (two per loop iteration, say) do not start in lockstep.
var selectSeeds atomic.Uint64

// NewFair returns a source seeded with the next value of the process-wide
// seed sequence, so a single-goroutine program that creates its selects in
// the same order sees the same choices.
func NewFair() Fair {
	z := selectSeeds.Add(0x9e3779b97f4a7c15)
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	s := uint32(z) ^ uint32(z>>32)
	if s == 0 {
		s = 1 // zero is xorshift's only fixed point
	}
	return Fair{s: s}
}

// Below returns a pseudo-random integer in [0, n), n > 0, using the high bits
// of the next value (Lemire's multiply-shift reduction, no division).
func (r *Fair) Below(n int) int {
	x := r.s
	x ^= x << 13
	x ^= x >> 17
	x ^= x << 5
	r.s = x
	return int(uint64(x) * uint64(n) >> 32)
}
