package workstealing_test

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/schedulers/workstealing"
)

func TestBlockInPlaceLetsTheWorkersOtherTasksRun(t *testing.T) {
	// One worker: without the hand-off, the task it spawned could never
	// run while its parent blocks.
	r, _ := newRuntime(t, 1)
	ch := make(chan struct{})
	blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		// The child sits in the LIFO slot, the one place a thief cannot
		// reach: BlockInPlace must move it.
		core.Spawn(cx, core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
			close(ch)
			return core.Unit{}, true
		})))
		workstealing.BlockInPlace(cx, func() { <-ch })
		return core.Unit{}, true
	}))
}

func TestTasksBlockedInPlaceOnEveryWorkerDoNotStarveTheRest(t *testing.T) {
	// Four tasks on two workers wait for each other: only possible if
	// blocking ones hand their workers on.
	r, _ := newRuntime(t, 2)
	const n = 4
	var arrived sync.WaitGroup
	arrived.Add(n)
	c := &countdown{}
	c.reset(n)
	blockOn(t, r, rootThen(func(cx *core.Context) {
		for i := 0; i < n; i++ {
			spawn(cx, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
				workstealing.BlockInPlace(cx, func() {
					arrived.Done()
					arrived.Wait()
				})
				c.done()
				return core.Unit{}, true
			}))
		}
	}, c))
}

func TestSpawnsAndWakesFromInsideBlockInPlaceRun(t *testing.T) {
	r, _ := newRuntime(t, 1)
	blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		workstealing.BlockInPlace(cx, func() {
			done := make(chan struct{})
			// The goroutine gave its core away: this spawn goes through
			// the global queue to the goroutine that has it.
			core.Spawn(cx, core.Future[core.Unit](core.PollFunc[core.Unit](func(*core.Context) (core.Unit, bool) {
				close(done)
				return core.Unit{}, true
			})))
			<-done
		})
		return core.Unit{}, true
	}))
}

func TestBlockInPlaceOutsideAWorkerJustRunsTheFunction(t *testing.T) {
	var n atomic.Int32
	workstealing.BlockInPlace(nil, func() { n.Add(1) })
	workstealing.BlockInPlace(core.NewContext(nil), func() { n.Add(1) })
	assert.EqualValues(t, 2, n.Load())
}

func TestBlockInPlaceRepeatedlyLeavesNoGoroutineBehind(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	r, s := newRuntime(t, 2)
	c := &countdown{}
	const tasks, rounds = 20, 50
	c.reset(tasks)
	blockOn(t, r, rootThen(func(cx *core.Context) {
		for i := 0; i < tasks; i++ {
			left := rounds
			spawn(cx, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
				// Short blocking sections: sometimes the goroutine gets
				// its core back before the new one starts, sometimes not.
				workstealing.BlockInPlace(cx, func() {})
				if left--; left == 0 {
					c.done()
					return core.Unit{}, true
				}
				cx.Waker().Wake()
				return core.Unit{}, false
			}))
		}
	}, c))
	s.Shutdown()
	goleak.VerifyNone(t, ignore)
}

func TestBlockInPlaceTakesTheWorkersYieldedTasksAlong(t *testing.T) {
	// One worker. B wakes A into the LIFO slot and yields, so B's wake sits
	// in the worker's deferred list when A enters BlockInPlace. A blocks
	// until B runs again: that only happens if the deferred wake moved
	// with the handed-off core.
	r, _ := newRuntime(t, 1)
	progressed := make(chan struct{})
	var stuck atomic.Bool
	var waker core.Waker
	var spawned bool
	blockOn(t, r, core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
		if !spawned {
			spawned = true
			waker = cx.Waker()
			yielded := false
			core.Spawn(cx, core.Future[core.Unit](core.PollFunc[core.Unit](func(cx *core.Context) (core.Unit, bool) {
				if yielded {
					close(progressed)
					return core.Unit{}, true
				}
				yielded = true
				cx.Wake(waker)
				cx.Defer(cx.Waker())
				return core.Unit{}, false
			})))
			return core.Unit{}, false
		}
		workstealing.BlockInPlace(cx, func() {
			select {
			case <-progressed:
			case <-time.After(hangLimit / 4):
				stuck.Store(true)
			}
		})
		return core.Unit{}, true
	}))
	assert.False(t, stuck.Load(), "the yielded task made no progress while its worker's core was handed off")
}
