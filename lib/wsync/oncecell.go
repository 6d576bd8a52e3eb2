package wsync

import (
	"errors"
	"sync/atomic"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/wsync/internal/sema"
)

// ErrAlreadySet is returned by [OnceCell.Set] when the cell holds a value.
var ErrAlreadySet = errors.New("weft/sync: OnceCell already set")

// ErrInitializing is returned by [OnceCell.Set] while a task is running the
// cell's initialiser.
var ErrInitializing = errors.New("weft/sync: OnceCell is being initialised")

// OnceCell holds a value that is set at most once, possibly by an
// asynchronous initialiser. Of the tasks that call GetOrInit on an empty
// cell, one runs its initialiser while the others wait in FIFO order; they
// all resolve to the value it produced. If the initialising task drops its
// future (or its initialiser fails, with GetOrTryInit) the next waiter
// runs its own initialiser instead, so a cancelled initialisation never
// leaves the cell stuck.
//
// Underneath is a semaphore with one permit: holding it is the right to
// initialise, and setting the value closes the semaphore, which releases
// every waiter at once.
//
// The zero value is an empty cell. A OnceCell must not be copied after
// first use.
type OnceCell[T any] struct {
	// done is stored (release) after value is written and loaded (acquire)
	// before value is read.
	done  atomic.Bool
	value T
	s     sema.Sema
}

// Get returns the value and true if the cell is set.
func (c *OnceCell[T]) Get() (T, bool) {
	if c.done.Load() {
		return c.value, true
	}
	var zero T
	return zero, false
}

// Initialized reports whether the cell holds a value.
func (c *OnceCell[T]) Initialized() bool { return c.done.Load() }

// Set stores v if the cell is empty and no initialiser is running. It
// returns [ErrAlreadySet] or [ErrInitializing] otherwise, and v is not
// stored.
func (c *OnceCell[T]) Set(v T) error {
	c.s.Ensure(1)
	switch c.s.TryAcquire(1) {
	case nil:
		c.publish(v, nil)
		return nil
	case sema.ErrClosed:
		return ErrAlreadySet
	default:
		return ErrInitializing
	}
}

// publish stores the value and releases every waiter. The caller holds the
// semaphore's permit.
func (c *OnceCell[T]) publish(v T, cx *core.Context) {
	c.value = v
	c.done.Store(true)
	c.s.CloseFrom(cx)
}

// GetOrInit returns a future that resolves to the cell's value, running
// init's future to produce it if the cell is empty and no other task is
// initialising it. init is called at most once per future, only by the
// task that gets to initialise.
func (c *OnceCell[T]) GetOrInit(init func() core.Future[T]) *InitFuture[T] {
	if init == nil {
		panic("weft/sync: OnceCell.GetOrInit with a nil initialiser")
	}
	c.s.Ensure(1)
	f := &InitFuture[T]{c: c, plain: init}
	f.w.Reset(&c.s, 1)
	return f
}

// GetOrTryInit is [OnceCell.GetOrInit] with an initialiser that can fail.
// The future resolves to the value, or to the initialiser's error, in which
// case the cell stays empty and the next waiter tries its own initialiser.
func (c *OnceCell[T]) GetOrTryInit(init func() core.Future[core.Result[T]]) *TryInitFuture[T] {
	if init == nil {
		panic("weft/sync: OnceCell.GetOrTryInit with a nil initialiser")
	}
	c.s.Ensure(1)
	f := &TryInitFuture[T]{}
	f.f = InitFuture[T]{c: c, try: init}
	f.f.w.Reset(&c.s, 1)
	return f
}

// InitFuture is the future of [OnceCell.GetOrInit]: a [core.Future] of T
// and a [core.Dropper]. It must not be copied once polled.
type InitFuture[T any] struct {
	w     sema.Waiter
	c     *OnceCell[T]
	plain func() core.Future[T]
	try   func() core.Future[core.Result[T]]
	// Exactly one of these is set while the initialiser runs.
	plainFut core.Future[T]
	tryFut   core.Future[core.Result[T]]
	phase    uint8
}

// Phases of an InitFuture beyond those of the other futures.
const initRunning uint8 = waitDropped + 1

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *InitFuture[T]) Poll(cx *core.Context) (T, bool) {
	r, ok := f.poll(cx)
	return r.Value, ok
}

func (f *InitFuture[T]) poll(cx *core.Context) (core.Result[T], bool) {
	switch f.phase {
	case waitDone:
		panic("weft/sync: OnceCell future polled after it completed")
	case waitDropped:
		panic("weft/sync: OnceCell future polled after Drop")
	}
	if !cx.Proceed() {
		return core.Result[T]{}, false
	}
	c := f.c
	if f.phase != initRunning {
		if c.done.Load() {
			f.w.Drop()
			f.phase = waitDone
			return core.Result[T]{Value: c.value}, true
		}
		ok, err := f.w.Poll(cx)
		if !ok {
			f.phase = waitQueued
			return core.Result[T]{}, false
		}
		if err != nil || c.done.Load() {
			// Closed: the value was set by whoever held the permit.
			if err == nil {
				c.s.Release(1, cx)
			}
			f.phase = waitDone
			return core.Result[T]{Value: c.value}, true
		}
		// We hold the permit: we initialise.
		f.phase = initRunning
		if f.plain != nil {
			f.plainFut = f.plain()
		} else {
			f.tryFut = f.try()
		}
	}
	var r core.Result[T]
	if f.plainFut != nil {
		v, ok := f.plainFut.Poll(cx)
		if !ok {
			return core.Result[T]{}, false
		}
		f.plainFut = nil
		r.Value = v
	} else {
		v, ok := f.tryFut.Poll(cx)
		if !ok {
			return core.Result[T]{}, false
		}
		f.tryFut = nil
		r = v
	}
	f.phase = waitDone
	if r.Err != nil {
		c.s.Release(1, cx)
		return core.Result[T]{Err: r.Err}, true
	}
	c.publish(r.Value, cx)
	return core.Result[T]{Value: r.Value}, true
}

// Drop implements [core.Dropper]. A waiting future leaves the queue; one
// running its initialiser drops the initialiser's future and hands the
// right to initialise to the next waiter.
func (f *InitFuture[T]) Drop() {
	switch f.phase {
	case initRunning:
		f.phase = waitDropped
		pf, tf := f.plainFut, f.tryFut
		f.plainFut, f.tryFut = nil, nil
		defer f.c.s.Release(1, nil)
		if pf != nil {
			core.Drop(pf)
		} else if tf != nil {
			core.Drop(tf)
		}
	case waitIdle, waitQueued:
		f.phase = waitDropped
		f.w.Drop()
	}
}

// TryInitFuture is the future of [OnceCell.GetOrTryInit]: a [core.Future]
// of [core.Result] of T and a [core.Dropper]. It must not be copied once
// polled.
type TryInitFuture[T any] struct {
	f InitFuture[T]
}

// Poll implements [core.Future]. Each poll consumes one unit of the task's
// budget.
func (f *TryInitFuture[T]) Poll(cx *core.Context) (core.Result[T], bool) { return f.f.poll(cx) }

// Drop implements [core.Dropper], as [InitFuture.Drop].
func (f *TryInitFuture[T]) Drop() { f.f.Drop() }
