package tasks

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/weftrt/weft/core"
)

// CancellationToken is a cancellation signal that any number of tasks and
// goroutines can observe and trigger. It starts not cancelled; [Cancel]
// cancels it, once and for good, and cancels every child token made from
// it with [CancellationToken.Child], recursively. Cancelling a child does
// not cancel its parent.
//
// Create one with [NewCancellationToken] (or the zero value), or with
// [FromContext]. Share the pointer; all methods are safe for concurrent
// use.
//
// # Children and memory
//
// A parent keeps weak references to its children, so a child nobody uses
// any more is collected and leaves its parent's list (through a cleanup
// registered with the garbage collector): making short-lived children of a
// long-lived token does not accumulate memory. A child that is awaited
// stays reachable through its waiting futures.
type CancellationToken struct {
	cancelled atomic.Bool

	mu       sync.Mutex
	waiters  waiterList // CancelledFutures waiting; guarded by mu
	children childList  // guarded by mu
	// ctxStop detaches a FromContext token from its context; guarded by
	// mu and called once, when the token is cancelled.
	ctxStop func() bool
}

// childEntry is a parent's link to one child.
type childEntry struct {
	child      weak.Pointer[CancellationToken]
	prev, next *childEntry
	linked     bool
}

type childList struct{ head *childEntry }

func (l *childList) push(e *childEntry) {
	e.next = l.head
	if l.head != nil {
		l.head.prev = e
	}
	l.head = e
	e.linked = true
}

func (l *childList) remove(e *childEntry) {
	if !e.linked {
		return
	}
	if e.prev == nil {
		l.head = e.next
	} else {
		e.prev.next = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	}
	e.prev, e.next, e.linked = nil, nil, false
}

// NewCancellationToken returns a token that is not cancelled.
func NewCancellationToken() *CancellationToken { return new(CancellationToken) }

// IsCancelled reports whether the token has been cancelled. Once it
// reports true it always does.
func (t *CancellationToken) IsCancelled() bool { return t.cancelled.Load() }

// Cancel cancels the token and, before it returns, every child token made
// from it (recursively), and wakes every task awaiting one of them.
// Cancelling a cancelled token does nothing. Cancel may be called from
// any goroutine.
func (t *CancellationToken) Cancel() {
	if t.cancelled.Load() {
		return
	}
	t.mu.Lock()
	if t.cancelled.Load() {
		t.mu.Unlock()
		return
	}
	// The flag is set under mu, so a waiter that registers under mu
	// either sees it or is in the list taken below.
	t.cancelled.Store(true)
	ws := t.waiters.takeWakers()
	var kids []*CancellationToken
	for e := t.children.head; e != nil; {
		next := e.next
		if c := e.child.Value(); c != nil {
			kids = append(kids, c)
		}
		e.prev, e.next, e.linked = nil, nil, false
		e = next
	}
	t.children.head = nil
	stop := t.ctxStop
	t.ctxStop = nil
	t.mu.Unlock()
	if stop != nil {
		stop()
	}
	wakeAll(ws)
	for _, c := range kids {
		c.Cancel()
	}
}

// Child returns a new token that is cancelled when t is (at once if t
// already is), and can also be cancelled on its own without affecting t.
func (t *CancellationToken) Child() *CancellationToken {
	c := new(CancellationToken)
	t.mu.Lock()
	if t.cancelled.Load() {
		t.mu.Unlock()
		c.cancelled.Store(true)
		return c
	}
	e := &childEntry{child: weak.Make(c)}
	t.children.push(e)
	t.mu.Unlock()
	// When the child is collected, its entry leaves the parent. The
	// cleanup holds the parent and the entry, never the child.
	runtime.AddCleanup(c, func(e *childEntry) {
		t.mu.Lock()
		t.children.remove(e)
		t.mu.Unlock()
	}, e)
	return c
}

// Cancelled returns a future that resolves once the token is cancelled
// (at its first poll if it already is). It implements core.Dropper:
// dropping it removes its waiter.
func (t *CancellationToken) Cancelled() *CancelledFuture {
	return &CancelledFuture{t: t}
}

// CancelledFuture is the future of [CancellationToken.Cancelled], a
// core.Future of core.Unit.
type CancelledFuture struct {
	t *CancellationToken
	w waiter // guarded by t.mu
	// queued is set (by the owner) once the future has registered; the
	// lock-free fast path is for futures that never did.
	queued bool
}

// Poll implements core.Future.
func (f *CancelledFuture) Poll(cx *core.Context) (core.Unit, bool) {
	t := f.t
	if !f.queued && t.cancelled.Load() {
		return core.Unit{}, true
	}
	t.mu.Lock()
	if t.cancelled.Load() {
		t.waiters.remove(&f.w)
		f.w.waker = nil
		t.mu.Unlock()
		return core.Unit{}, true
	}
	f.w.waker = cx.Waker()
	if !f.w.linked {
		t.waiters.push(&f.w)
	}
	t.mu.Unlock()
	f.queued = true
	return core.Unit{}, false
}

// Drop implements core.Dropper: the future leaves the token's waiters.
func (f *CancelledFuture) Drop() {
	t := f.t
	t.mu.Lock()
	t.waiters.remove(&f.w)
	f.w.waker = nil
	t.mu.Unlock()
}

// DropGuard returns a guard that cancels t when it is dropped, unless it
// was disarmed first: `g := tok.DropGuard(); defer g.Drop()` cancels the
// token on every way out of a function except past g.Disarm().
func (t *CancellationToken) DropGuard() *DropGuard {
	g := new(DropGuard)
	g.t.Store(t)
	return g
}

// DropGuard cancels its token when dropped; see
// [CancellationToken.DropGuard].
type DropGuard struct {
	t atomic.Pointer[CancellationToken]
}

// Drop implements core.Dropper: it cancels the token unless the guard was
// disarmed. Only the first Drop does anything.
func (g *DropGuard) Drop() {
	if t := g.t.Swap(nil); t != nil {
		t.Cancel()
	}
}

// Disarm makes Drop do nothing and returns the token, or nil if the guard
// was already dropped or disarmed.
func (g *DropGuard) Disarm() *CancellationToken { return g.t.Swap(nil) }

// FromContext returns a token that is cancelled when ctx is done (at once
// if it already is). It starts no goroutine of its own: it registers with
// context.AfterFunc, which runs the cancellation when ctx is done. The
// registration is removed when the token is cancelled by other means, and
// it holds the token only weakly, so a token that is dropped is collected
// and its registration removed; a context package goroutine (started only
// for contexts of foreign types) then ends too.
func FromContext(ctx context.Context) *CancellationToken {
	t := new(CancellationToken)
	if ctx.Done() == nil {
		return t // never cancelled
	}
	if ctx.Err() != nil {
		t.cancelled.Store(true)
		return t
	}
	wp := weak.Make(t)
	stop := context.AfterFunc(ctx, func() {
		if t := wp.Value(); t != nil {
			t.Cancel()
		}
	})
	t.mu.Lock()
	if t.cancelled.Load() {
		// Cancelled (by ctx, through the function above) before stop was
		// stored: nothing left to detach, but stop is harmless.
		t.mu.Unlock()
		stop()
		return t
	}
	t.ctxStop = stop
	t.mu.Unlock()
	runtime.AddCleanup(t, func(stop func() bool) { stop() }, stop)
	return t
}

// Context returns a context.Context derived from parent that is cancelled
// when t is, with the cause context.Canceled, for handing to APIs that
// take a context. Calling the returned cancel function releases the
// context's resources (and does not cancel t).
func (t *CancellationToken) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(parent)
	if t.IsCancelled() {
		cancel()
		return ctx, cancel
	}
	done := &ctxWaiter{cancel: cancel}
	t.mu.Lock()
	if t.cancelled.Load() {
		t.mu.Unlock()
		cancel()
		return ctx, cancel
	}
	done.w.waker = done
	t.waiters.push(&done.w)
	t.mu.Unlock()
	return ctx, func() {
		t.mu.Lock()
		t.waiters.remove(&done.w)
		done.w.waker = nil
		t.mu.Unlock()
		cancel()
	}
}

// ctxWaiter is a waiter whose waker cancels a context.
type ctxWaiter struct {
	w      waiter
	cancel context.CancelFunc
}

func (c *ctxWaiter) Wake() { c.cancel() }
