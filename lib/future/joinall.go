package future

import (
	"fmt"

	"github.com/weftrt/weft/core"
)

// JoinAll returns a future that polls every future of futs until all are
// ready, and is ready with their outputs in input order (out[i] is the output
// of futs[i]). JoinAll of no futures is ready at once with an empty slice.
//
// Each child gets its own waker, and after the first poll, which polls every
// child in index order, a poll of the JoinAll polls only the children that
// were woken since the previous one, in wake order: a wake of one child out
// of n costs one child poll. A child that is ready is never polled again.
// When the task's budget is spent partway, the children not reached are
// polled first on the next poll.
//
// Drop drops every child that is not ready yet, each once; children that
// finished are not dropped. JoinAll copies futs; the caller's slice is not
// modified. A nil element panics here, naming its index.
func JoinAll[T any](futs []core.Future[T]) core.Future[[]T] {
	j := &joinAll[T]{out: make([]T, len(futs))}
	j.init("JoinAll", futs)
	return j
}

// joinAll is the future JoinAll returns; out collects the outputs.
type joinAll[T any] struct {
	joinBase[T]
	out []T
}

// joinBase is the state JoinAll and TryJoinAll share: the children, their
// wake set and the Context they are polled with.
type joinBase[T any] struct {
	set wakeSet
	// futs[i] is child i, or nil once it was ready or dropped.
	futs []core.Future[T]
	// left counts the children that are not ready yet.
	left int
	// ccx is the Context handed to the child being polled: the parent's
	// Context with the child's waker. It lives here rather than on the
	// stack of Poll so that passing its address allocates nothing.
	ccx  core.Context
	done bool
}

func (j *joinBase[T]) init(name string, futs []core.Future[T]) {
	for i, f := range futs {
		if f == nil {
			panic(fmt.Sprintf("future.%s: future %d is nil", name, i))
		}
	}
	j.futs = append([]core.Future[T](nil), futs...)
	j.left = len(futs)
	j.set.init(len(futs))
}

// pollChild polls live child i with its own waker. When the child is ready
// its slot is cleared, so it will be neither polled nor dropped again.
func (j *joinBase[T]) pollChild(cx *core.Context, i int) (T, bool) {
	j.ccx = cx.WithWaker(&j.set.wakers[i])
	j.set.begin(i)
	v, ok := j.futs[i].Poll(&j.ccx)
	if ok {
		j.futs[i] = nil
		j.left--
		j.set.finished(i)
	}
	return v, ok
}

// yield gives up the rest of a poll because the budget is spent: the woken
// children it did not reach are polled first next time. budgetSpent has
// already woken the task.
func (j *joinBase[T]) yield(rest []int) {
	live := rest[:0] // compact in place, dropping late wakes of finished children
	for _, i := range rest {
		if j.futs[i] != nil {
			live = append(live, i)
		}
	}
	j.set.requeueFront(live)
	j.ccx = core.Context{}
}

// finish marks the join done, detaches the wake set from the parent waker
// and drops the children that are still live.
func (j *joinBase[T]) finish() {
	j.done = true
	j.ccx = core.Context{}
	j.set.close()
	dropLive(j.futs)
}

func (j *joinAll[T]) Poll(cx *core.Context) ([]T, bool) {
	if j.done {
		panic(errPolledAfterDone("JoinAll"))
	}
	woken := j.set.take(cx.Waker())
	for k, i := range woken {
		if j.futs[i] == nil {
			continue // a late wake from a child that already finished
		}
		if budgetSpent(cx) {
			j.yield(woken[k:])
			return nil, false
		}
		if v, ok := j.pollChild(cx, i); ok {
			j.out[i] = v
		}
	}
	j.ccx = core.Context{}
	if j.left > 0 {
		return nil, false
	}
	j.finish()
	out := j.out
	j.out = nil
	return out, true
}

// Drop implements [core.Dropper].
func (j *joinAll[T]) Drop() {
	if j.done {
		return
	}
	j.out = nil
	j.finish()
}

// TryJoinAll is [JoinAll] for futures that can fail. It is ready with the
// values of all futures, in input order, when every one succeeded. As soon as
// a poll sees a child fail it returns that child's error: the first error in
// poll order wins, every child that is still pending is dropped (once)
// before the error is returned, and the values of children that already
// succeeded are discarded (they are not dropped: they completed).
//
// It polls, wakes and drops children exactly as JoinAll does.
func TryJoinAll[T any](futs []core.Future[core.Result[T]]) core.Future[core.Result[[]T]] {
	j := &tryJoinAll[T]{vals: make([]T, len(futs))}
	j.init("TryJoinAll", futs)
	return j
}

// tryJoinAll is the future TryJoinAll returns; vals collects the values.
type tryJoinAll[T any] struct {
	joinBase[core.Result[T]]
	vals []T
}

func (j *tryJoinAll[T]) Poll(cx *core.Context) (core.Result[[]T], bool) {
	if j.done {
		panic(errPolledAfterDone("TryJoinAll"))
	}
	woken := j.set.take(cx.Waker())
	for k, i := range woken {
		if j.futs[i] == nil {
			continue // a late wake from a child that already finished
		}
		if budgetSpent(cx) {
			j.yield(woken[k:])
			return core.Result[[]T]{}, false
		}
		r, ok := j.pollChild(cx, i)
		if !ok {
			continue
		}
		if r.Err != nil {
			j.vals = nil
			j.finish()
			return core.Result[[]T]{Err: r.Err}, true
		}
		j.vals[i] = r.Value
	}
	j.ccx = core.Context{}
	if j.left > 0 {
		return core.Result[[]T]{}, false
	}
	j.finish()
	vals := j.vals
	j.vals = nil
	return core.Result[[]T]{Value: vals}, true
}

// Drop implements [core.Dropper].
func (j *tryJoinAll[T]) Drop() {
	if j.done {
		return
	}
	j.vals = nil
	j.finish()
}
