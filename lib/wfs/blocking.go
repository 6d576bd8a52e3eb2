package wfs

import (
	"sync"

	"github.com/weftrt/weft/core"
)

// spawner runs a function off the worker: the runtime's blocking pool or a
// goroutine.
type spawner func(f func()) error

// spawnerOf returns where blocking calls of a task polled with cx should
// run: the worker's blocking pool when it offers one, a fresh goroutine
// otherwise.
func spawnerOf(cx *core.Context) spawner {
	if w := cx.Worker(); w != nil {
		if bw, ok := w.(core.BlockingWorker); ok {
			if sp := bw.Blocking(); sp != nil {
				return sp.SpawnBlockingFunc
			}
		}
	}
	return goSpawn
}

func goSpawn(f func()) error {
	go f()
	return nil
}

// blockingOp is the future of one blocking call. Its first poll hands fn to
// the spawner; the call stores its result and wakes the task. The state
// moves under mu:
//
//	idle --poll--> running --fn returns--> done
//	                  |
//	                 Drop --> dropped --fn returns--> discard(result)
//
// so a result that arrives after Drop is handed to discard (which closes a
// file a dropped Open opened) and the task is never woken on its behalf.
type blockingOp[T any] struct {
	spawn   spawner
	fn      func() (T, error)
	discard func(T)

	mu    sync.Mutex
	state opState
	res   core.Result[T]
	// claimable is set while res holds a result no Poll has returned.
	claimable bool
	waker     core.Waker
}

type opState uint8

const (
	opIdle opState = iota
	opRunning
	opDone
	opDropped
)

func newBlockingOp[T any](sp spawner, fn func() (T, error), discard func(T)) *blockingOp[T] {
	return &blockingOp[T]{spawn: sp, fn: fn, discard: discard}
}

func (op *blockingOp[T]) Poll(cx *core.Context) (core.Result[T], bool) {
	op.mu.Lock()
	switch op.state {
	case opIdle:
		op.state = opRunning
		op.waker = cx.Waker()
		op.mu.Unlock()
		if err := op.spawn(op.run); err != nil {
			op.mu.Lock()
			op.state = opDone
			op.waker = nil
			op.mu.Unlock()
			return core.Result[T]{Err: err}, true
		}
		return core.Result[T]{}, false
	case opDone:
		res := op.res
		op.res, op.claimable = core.Result[T]{}, false
		op.mu.Unlock()
		return res, true
	}
	op.waker = cx.Waker()
	op.mu.Unlock()
	return core.Result[T]{}, false
}

// run is the call, on the pool.
func (op *blockingOp[T]) run() {
	v, err := op.fn()
	op.mu.Lock()
	if op.state == opDropped {
		op.mu.Unlock()
		if err == nil && op.discard != nil {
			op.discard(v)
		}
		return
	}
	op.state = opDone
	op.res = core.Result[T]{Value: v, Err: err}
	op.claimable = true
	w := op.waker
	op.waker = nil
	op.mu.Unlock()
	if w != nil {
		w.Wake()
	}
}

// Drop abandons the call: its result is discarded when it arrives, or now
// if it arrived and was never returned by Poll.
func (op *blockingOp[T]) Drop() {
	op.mu.Lock()
	var unclaimed core.Result[T]
	pending := false
	switch op.state {
	case opRunning:
		op.state = opDropped
	case opDone:
		unclaimed, pending = op.res, op.claimable
		op.res, op.claimable = core.Result[T]{}, false
	}
	op.waker = nil
	op.mu.Unlock()
	if pending && unclaimed.Err == nil && op.discard != nil {
		op.discard(unclaimed.Value)
	}
}
