package co

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/weftrt/weft/core"
	"github.com/weftrt/weft/lib/tasks"
	"github.com/weftrt/weft/lib/timing"
)

// Sleep suspends the body for d on the runtime's timer and clock (a
// virtual clock makes it instant). A d of zero or less returns at once.
// If the task is aborted while it sleeps, the timer entry is cancelled
// and the body unwinds. It panics on a runtime without a timer, as
// timing.Sleep does.
func Sleep(c *Ctx, d time.Duration) { Await(c, timing.Sleep(d)) }

// SleepUntil suspends the body until the runtime's clock reaches
// deadline (see [Sleep]); a deadline already passed returns at once.
func SleepUntil(c *Ctx, deadline core.Instant) { Await(c, timing.SleepUntil(deadline)) }

// WaitContext suspends the body until ctx is done and returns ctx.Err()
// (context.Cause(ctx) gives the cause). A ctx that is already done returns
// at once; one that can never be done (context.Background) waits until
// the task is aborted. No goroutine waits on the body's behalf: the wait
// registers a context.AfterFunc that wakes the task, removed when the wait
// ends.
func WaitContext(c *Ctx, ctx context.Context) error {
	f := ContextDone(ctx)
	return Await(c, f)
}

// Done is a [Case] branch that wins once ctx is done. Its future is made
// for this one select; in a select loop, make one [ContextDone] future and
// [Keep] it instead, which registers with ctx once rather than once per
// iteration.
func Done(ctx context.Context) Branch { return Case(ContextDone(ctx), nil) }

// WaitCancelled suspends the body until tok is cancelled (at once if it
// already is).
func WaitCancelled(c *Ctx, tok *tasks.CancellationToken) { Await(c, tok.Cancelled()) }

// Cancelled is a [Case] branch that wins once tok is cancelled. In a
// select loop, Keep one tok.Cancelled() future instead (and drop it when
// done), which joins the token's waiters once.
func Cancelled(tok *tasks.CancellationToken) Branch { return Case(tok.Cancelled(), nil) }

// DoneFuture is a future that resolves to ctx.Err() once its context is
// done: a [core.Future] of error and a [core.Dropper]. Make one with
// [ContextDone]. While it waits it holds a context.AfterFunc registration
// (no goroutine), which wakes the task that last polled it; Drop, or
// completion, removes the registration. It belongs to one task.
//
// A poll of a registered future by the same task as the previous poll is
// one atomic load and a comparison, so a kept DoneFuture costs a select
// loop almost nothing per round.
type DoneFuture struct {
	ctx context.Context
	// stop removes the AfterFunc registration; nil before the first
	// pending poll and after release.
	stop func() bool
	// last is the waker the owner last stored in waker (owner only).
	last core.Waker

	// fired is set by the AfterFunc before it takes the waker.
	fired atomic.Bool
	// mu guards waker, which the AfterFunc (on a goroutine of the context
	// package) takes and wakes.
	mu    sync.Mutex
	waker core.Waker
}

// ContextDone returns a future that resolves to ctx.Err() once ctx is
// done. Keep it across the iterations of a select loop (see [Keep]) and
// drop it when done with it.
func ContextDone(ctx context.Context) *DoneFuture {
	if ctx == nil {
		panic("weft/co: ContextDone of a nil context.Context")
	}
	return &DoneFuture{ctx: ctx}
}

// Poll implements [core.Future]. It is ready with ctx.Err() once the
// context is done; a context that cannot be done (no Done channel) stays
// pending without registering anything.
func (f *DoneFuture) Poll(cx *core.Context) (error, bool) {
	if f.stop != nil && !f.fired.Load() {
		// Registered and not fired: the stored waker is woken when the
		// context is done. If it is this poll's waker there is nothing
		// to do. Otherwise store the new one, then look at fired again:
		// an AfterFunc that ran before the store took the old waker,
		// and its fired mark (set before it took the lock) is seen now.
		w := cx.Waker()
		if w == f.last {
			return nil, false
		}
		f.setWaker(w)
		if !f.fired.Load() {
			return nil, false
		}
	}
	if err := f.ctx.Err(); err != nil {
		f.release()
		return err, true
	}
	if f.stop != nil || f.ctx.Done() == nil {
		// Fired but Err not visible yet cannot happen (the context sets
		// Err before it runs AfterFuncs); a context without Done is
		// never done.
		return nil, false
	}
	// First pending poll: store the waker, then register. A context
	// done in between runs wake after the registration, which finds
	// this waker.
	f.setWaker(cx.Waker())
	f.stop = context.AfterFunc(f.ctx, f.wake)
	return nil, false
}

// setWaker stores w as the waker the AfterFunc wakes.
func (f *DoneFuture) setWaker(w core.Waker) {
	f.mu.Lock()
	f.waker = w
	f.mu.Unlock()
	f.last = w
}

// wake is the AfterFunc: it wakes the task that last polled f.
func (f *DoneFuture) wake() {
	f.fired.Store(true)
	f.mu.Lock()
	w := f.waker
	f.waker = nil
	f.mu.Unlock()
	if w != nil {
		w.Wake()
	}
}

// release removes the AfterFunc registration and forgets the waker.
func (f *DoneFuture) release() {
	if f.stop != nil {
		f.stop()
		f.stop = nil
	}
	f.mu.Lock()
	f.waker = nil
	f.mu.Unlock()
	f.last = nil
}

// Drop implements [core.Dropper]: the AfterFunc registration is removed,
// so nothing is left registered with the context. It is idempotent.
func (f *DoneFuture) Drop() { f.release() }
