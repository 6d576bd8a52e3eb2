package future

import "github.com/weftrt/weft/core"

// Pair is the output of [Join2]: both values, in argument order.
type Pair[A, B any] struct {
	// First is the output of Join2's first future.
	First A
	// Second is the output of Join2's second future.
	Second B
}

// Join2 returns a future that polls a and b until both are ready, and is
// ready with both outputs. Each poll polls the children that are not ready
// yet with the parent's Context, alternating which goes first so that a child
// spending the task's budget cannot starve the other; a child that is ready
// is never polled again.
//
// Drop drops the children that are not ready yet, each once; a child that
// finished is not dropped.
func Join2[A, B any](a core.Future[A], b core.Future[B]) core.Future[Pair[A, B]] {
	if a == nil || b == nil {
		panic("future.Join2: nil future")
	}
	return &join2[A, B]{a: a, b: b}
}

type join2[A, B any] struct {
	a core.Future[A] // nil once ready or dropped
	b core.Future[B] // nil once ready or dropped
	// out collects the outputs as the children finish.
	out Pair[A, B]
	// bFirst alternates the poll order, as Tokio's join! rotates its start.
	bFirst bool
	done   bool
}

func (j *join2[A, B]) Poll(cx *core.Context) (Pair[A, B], bool) {
	if j.done {
		panic(errPolledAfterDone("Join2"))
	}
	if j.bFirst {
		j.pollB(cx)
		j.pollA(cx)
	} else {
		j.pollA(cx)
		j.pollB(cx)
	}
	j.bFirst = !j.bFirst
	if j.a != nil || j.b != nil {
		return Pair[A, B]{}, false
	}
	j.done = true
	out := j.out
	j.out = Pair[A, B]{}
	return out, true
}

func (j *join2[A, B]) pollA(cx *core.Context) {
	if j.a == nil {
		return
	}
	if v, ok := j.a.Poll(cx); ok {
		j.a, j.out.First = nil, v
	}
}

func (j *join2[A, B]) pollB(cx *core.Context) {
	if j.b == nil {
		return
	}
	if v, ok := j.b.Poll(cx); ok {
		j.b, j.out.Second = nil, v
	}
}

// Drop implements [core.Dropper].
func (j *join2[A, B]) Drop() {
	if j.done {
		return
	}
	j.done = true
	a, b := j.a, j.b
	j.a, j.b, j.out = nil, nil, Pair[A, B]{}
	dropBoth(a, b) // a nil interface stays nil as an any: finished children are skipped
}
