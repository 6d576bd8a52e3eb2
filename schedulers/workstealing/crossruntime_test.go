package workstealing_test

import (
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/runtime/rt"
)

func TestAWakeFromAnotherSchedulersWorkerGoesToTheOwnSchedulersGlobalQueue(t *testing.T) {
	ra, sa := newRuntime(t, 1)
	rb, sb := newRuntime(t, 1)
	var waker core.AtomicWaker
	var ready atomic.Bool
	var ranOn atomic.Value
	// T runs on B and waits to be woken.
	h := rt.Spawn(rb.Handle(), core.Future[int](core.PollFunc[int](func(cx *core.Context) (int, bool) {
		ranOn.Store(cx.Worker().Scheduler())
		if ready.Load() {
			return 1, true
		}
		waker.Register(cx.Waker())
		return 0, ready.Load()
	})))
	waitUntil(t, "T is polled once", func() bool { return ranOn.Load() != nil })
	before := sb.Metrics()[0].RemoteSchedules
	// A task on A wakes T through its own Context: Schedule on B is
	// handed A's worker, which B must not treat as one of its own.
	blockOn(t, ra, core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		ready.Store(true)
		if w := waker.Take(); w != nil {
			cx.Wake(w)
		}
		return core.Unit{}, true
	})))
	res := blockOn(t, rb, core.Future[core.Result[int]](h))
	assert.Equal(t, 1, res.Value)
	assert.Same(t, sb, ranOn.Load(), "T ran on its own scheduler")
	assert.Greater(t, sb.Metrics()[0].RemoteSchedules, before, "through B's global queue")
	assert.NotSame(t, sa, ranOn.Load())
}
